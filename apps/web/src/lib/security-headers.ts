import { createHash } from 'node:crypto'

/**
 * The security headers every response of the web app carries (pages, API, static files), applied by
 * `next.config.ts` `headers()`. Free of Next and React so it can be unit-tested; ADR 013 explains each choice.
 *
 * The Content-Security-Policy is enforced, not report-only. Scripts: only this origin's files, plus the inline
 * scripts the app needs, allowed one by one by their SHA-256 hash (the theme script in `_document` that must run
 * before first paint). A hash rather than a nonce because it also holds for pages Next pre-renders at build time
 * (the static 404), whose HTML cannot carry a per-request nonce. Next's `__NEXT_DATA__` is a JSON data block, not
 * a script the browser runs, so it needs no allowance. Styles keep `'unsafe-inline'`: Tamagui and React Native
 * Web write `<style>` tags and `style` attributes at run time, and a style cannot run code.
 */

export interface SecurityHeaderOptions {
  /** The Supabase API origin the browser talks to (auth, and later storage and realtime). */
  supabaseUrl: string
  /** The exact text of every inline `<script>` the app renders. */
  inlineScripts: readonly string[]
  /**
   * `npm run dev`: Next's development runtime runs inline bootstrap scripts, evaluates modules with eval() and
   * serves one script with a JSON content type, so the script policy is relaxed and nosniff left out. Production
   * gets neither relaxation.
   */
  dev: boolean
  /**
   * The backend renders images (NEXT_PUBLIC_SUPABASE_IMAGE_TRANSFORMATION, ADR 046): the avatars' rendered sizes
   * (`/storage/v1/render/image/public/avatars/`) may load too. Off: only the plain public URLs.
   */
  imageTransformation?: boolean
}

export interface Header {
  key: string
  value: string
}

/** `'sha256-…'` source expression of an inline script (CSP3: base64 of the SHA-256 of its UTF-8 text). */
export function scriptHashSource(script: string): string {
  return `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`
}

/** The Supabase origin for fetch (http/https) and for the realtime socket (ws/wss). */
function backendSources(supabaseUrl: string): string[] {
  const url = new URL(supabaseUrl)
  const socket = new URL(supabaseUrl)
  socket.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
  return [url.origin, socket.origin]
}

/** The policy as an ordered list of directives (name → sources). */
export function contentSecurityPolicyDirectives(options: SecurityHeaderOptions): Array<[string, string[]]> {
  const backend = backendSources(options.supabaseUrl)
  // `next dev` runs inline bootstrap scripts and evaluates modules with eval(); production builds do neither.
  const scripts = options.dev
    ? ["'self'", "'unsafe-inline'", "'unsafe-eval'"]
    : ["'self'", ...options.inlineScripts.map(scriptHashSource)]
  return [
    ['default-src', ["'self'"]],
    ['script-src', scripts],
    ['style-src', ["'self'", "'unsafe-inline'"]],
    // Pictures from the backend: only the public profile pictures (ADR 037), by path — and their rendered sizes when
    // the backend has image transformations (ADR 046); blob: for their preview.
    [
      'img-src',
      [
        "'self'",
        'data:',
        'blob:',
        `${backend[0]!}/storage/v1/object/public/avatars/`,
        ...(options.imageTransformation ? [`${backend[0]!}/storage/v1/render/image/public/avatars/`] : []),
      ],
    ],
    ['font-src', ["'self'", 'data:']],
    ['connect-src', ["'self'", ...backend]],
    ['media-src', ["'self'", 'blob:', backend[0]!]],
    ['worker-src', ["'self'", 'blob:']],
    ['manifest-src', ["'self'"]],
    ['object-src', ["'none'"]],
    ['base-uri', ["'none'"]],
    ['form-action', ["'self'"]],
    ['frame-ancestors', ["'none'"]],
  ]
}

export function contentSecurityPolicy(options: SecurityHeaderOptions): string {
  return contentSecurityPolicyDirectives(options)
    .map(([name, sources]) => `${name} ${sources.join(' ')}`)
    .join('; ')
}

/** Headers for every response, whatever the transport. */
export function securityHeaders(options: SecurityHeaderOptions): Header[] {
  return [{ key: 'Content-Security-Policy', value: contentSecurityPolicy(options) }, ...headersBesideCsp(options.dev)]
}

/**
 * The headers of every response besides its Content-Security-Policy: also those of the answers the web server writes
 * itself before Next (src/server/node-server.ts: 400, 405, 408, 414, 431, 308), which have a policy of their own.
 */
export function headersBesideCsp(dev: boolean): Header[] {
  return [
    { key: 'X-Frame-Options', value: 'DENY' },
    // `next dev` serves a script (_clientMiddlewareManifest.js) as application/json, which nosniff would block.
    ...(dev ? [] : [{ key: 'X-Content-Type-Options', value: 'nosniff' }]),
    { key: 'Referrer-Policy', value: 'strict-origin-when-cross-origin' },
    // Only features browsers recognise: Chromium logs a warning on every page for an unknown one (it knew no
    // `bluetooth` feature; no other browser has Web Bluetooth), and e2e/security.test.ts fails on any console warning.
    {
      key: 'Permissions-Policy',
      value: 'camera=(), microphone=(), geolocation=(), payment=(), usb=(), serial=(), hid=(), browsing-topics=()',
    },
    { key: 'Cross-Origin-Opener-Policy', value: 'same-origin' },
    { key: 'Cross-Origin-Resource-Policy', value: 'same-origin' },
    { key: 'Origin-Agent-Cluster', value: '?1' },
    { key: 'X-DNS-Prefetch-Control', value: 'off' },
  ]
}

/**
 * Headers for responses served over https (behind a TLS-terminating proxy, which says so in
 * `X-Forwarded-Proto`): HSTS for two years, and plain-http subresources upgraded. Browsers ignore HSTS received
 * over plain http (RFC 6797 §8.1), so a client that sends the header itself gains nothing.
 */
export const HTTPS_ONLY_HEADERS: Header[] = [{ key: 'Strict-Transport-Security', value: 'max-age=63072000; includeSubDomains' }]
