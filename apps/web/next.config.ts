import { fileURLToPath } from 'node:url'

import type { NextConfig } from 'next'

import { compileHintsPlugin } from './src/lib/compile-hints'
import { readBackendConfig } from './src/lib/env-config'
import { headScripts } from './src/lib/head-scripts'
import { HTTPS_ONLY_HEADERS, securityHeaders } from './src/lib/security-headers'

// Fail at start (dev, build and `next start` all evaluate this file) when a backend variable is set but empty
// or not a URL. The same check runs again where the values are used (src/lib/env.ts).
const backend = readBackendConfig({
  NEXT_PUBLIC_SUPABASE_URL: process.env.NEXT_PUBLIC_SUPABASE_URL,
  NEXT_PUBLIC_SUPABASE_ANON_KEY: process.env.NEXT_PUBLIC_SUPABASE_ANON_KEY,
})

// Tamagui's prebuilt packages branch on TAMAGUI_TARGET; on the server they are loaded from node_modules
// at run time, so the variable must exist in this process too, not only inlined into bundles.
process.env.TAMAGUI_TARGET ??= 'web'

/** A webpack rule: `react-dom/client`, imported by Next's client entry, resolves to src/lib/hydrate-in-transition.ts. */
const hydrationInTransitionRule = {
  test: /[\\/]next[\\/]dist[\\/]client[\\/]index\.js$/,
  resolve: { alias: { 'react-dom/client$': fileURLToPath(new URL('./src/lib/hydrate-in-transition.ts', import.meta.url)) } },
}

const nextConfig: NextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // No ETag on rendered pages: every one is sent with `Cache-Control: no-store`, so a browser never revalidates it,
  // and hashing each page cost ≈ 1.3 ms of a 23 ms render of `/` (ADR 061). Files from public/ still revalidate
  // (Last-Modified → 304).
  generateEtags: false,
  // The app shows no picture through next/image (profile pictures are plain <img> of storage URLs, src/lib/avatar.ts):
  // with the optimizer off, `/_next/image` — an endpoint that fetches, decodes and re-encodes what its `url` names, at
  // any of its sizes — answers the 404 page instead of being one more thing a stranger can make the server do.
  images: { unoptimized: true },
  // `WEB_SOURCE_MAPS=1 npm run build` emits browser source maps so `node bench/web-size.ts` can say which packages
  // fill each chunk. Off by default: the maps would be served publicly next to the chunks.
  productionBrowserSourceMaps: process.env.WEB_SOURCE_MAPS === '1',
  // The browser's chunks start with V8's compile hint, so their functions are compiled off the main thread while
  // they download (src/lib/compile-hints.ts, ADR 055).
  webpack(
    config: { plugins: unknown[]; module: { rules: unknown[] } },
    { dev, isServer, webpack }: { dev: boolean; isServer: boolean; webpack: Parameters<typeof compileHintsPlugin>[0] },
  ) {
    if (!dev && !isServer) config.plugins.push(compileHintsPlugin(webpack))
    // The browser hydrates the page in time slices: Next's client entry gets a react-dom/client whose hydrateRoot
    // runs in a transition (src/lib/hydrate-in-transition.ts, ADR 057). Only that module's import is redirected.
    if (!isServer) config.module.rules.push(hydrationInTransitionRule)
    return config
  },
  env: {
    TAMAGUI_TARGET: 'web',
    // always defined (empty when unset), so a build without image transformations folds src/lib/avatar.ts's branch
    NEXT_PUBLIC_SUPABASE_IMAGE_TRANSFORMATION: process.env.NEXT_PUBLIC_SUPABASE_IMAGE_TRANSFORMATION ?? '',
  },
  // Security headers and the enforced Content-Security-Policy on every response (src/lib/security-headers.ts,
  // ADR 013). The inline scripts it lets run are src/lib/head-scripts.ts's, the ones src/pages/_document.tsx renders.
  async headers() {
    const common = securityHeaders({
      supabaseUrl: backend.supabaseUrl,
      inlineScripts: headScripts(),
      dev: process.env.NODE_ENV === 'development',
      // the profile pictures' rendered sizes (src/lib/avatar.ts, ADR 046), only when the backend renders images
      imageTransformation: process.env.NEXT_PUBLIC_SUPABASE_IMAGE_TRANSFORMATION === 'true',
    })
    return [
      { source: '/:path*', headers: common },
      { source: '/:path*', has: [{ type: 'header', key: 'x-forwarded-proto', value: 'https' }], headers: HTTPS_ONLY_HEADERS },
    ]
  },
}

export default nextConfig
