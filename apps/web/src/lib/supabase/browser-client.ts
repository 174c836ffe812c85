import { AuthClient, type GoTrueClient } from '@supabase/auth-js'
// @supabase/ssr's cookie storage (chunked `sb-<ref>-auth-token` cookies, base64url values), the one createBrowserClient
// and createServerClient use. Not re-exported from the package's index; the package has no exports map and is
// pinned, so its module path is stable for this version (a version bump must check it — ADR 038).
import { createStorageFromOptions } from '@supabase/ssr/dist/module/cookies'

import { backendConfig } from '../env'
import { endSessionHere, endingHere, saysSessionGone } from '../session-ended'
import { sessionCookieOptions } from './cookie-options'

/** The browser's auth client: the `auth` of a Supabase client, without its data, storage and realtime clients. */
export interface BrowserSupabase {
  auth: GoTrueClient
}

/** supabase-js's default storage key for a project URL: `sb-<first label of the host>-auth-token`. */
export function defaultStorageKey(supabaseUrl: string): string {
  return `sb-${new URL(supabaseUrl).hostname.split('.')[0]}-auth-token`
}

/**
 * Builds the browser's auth client. Only ever reached through `loadBrowserSupabase()` (./browser.ts), whose dynamic
 * `import()` of this module keeps it out of the first-load bundle: webpack puts it in a chunk of its own.
 *
 * The browser only ever talks to the auth server (product data goes through tRPC), so this is `@supabase/auth-js`'s
 * AuthClient set up as `@supabase/ssr`'s createBrowserClient sets up supabase-js's: the same cookie storage and
 * storage key (so the server's createServerClient reads the session this client writes, and the other way round),
 * PKCE, the `apikey` and `Authorization: Bearer <anon key>` headers, `<url>/auth/v1`. Leaving out
 * supabase-js's PostgREST, Storage, Realtime (+ Phoenix) and Functions clients takes the chunk fetched after `load`
 * from ~71 kB gz to ~30 kB gz (ADR 038). A page that needs data, storage or realtime in the browser would load
 * supabase-js's full client next to this one, on that page only.
 *
 * `autoRefreshToken: true` is the spec's refresh on its own: auth-js checks every 30 s (AUTO_REFRESH_TICK_DURATION_MS)
 * and refreshes when 3 checks or fewer are left (AUTO_REFRESH_TICK_THRESHOLD). In a browser it also listens to
 * `visibilitychange` on window: hidden stops the checks, visible restarts them with an immediate check and a
 * refresh of a token that expired meanwhile. Calling `startAutoRefresh()`/`stopAutoRefresh()` ourselves would
 * remove that listener, so the app never does. (e2e/auth-refresh.test.ts watches all of it with a fake clock.)
 */
export function createBrowserSupabase(): BrowserSupabase {
  const { supabaseUrl, supabaseAnonKey } = backendConfig
  const https = typeof location !== 'undefined' && location.protocol === 'https:'
  const { storage } = createStorageFromOptions({ cookieOptions: sessionCookieOptions(https), cookieEncoding: 'base64url' }, false)
  const base = supabaseUrl.endsWith('/') ? supabaseUrl : `${supabaseUrl}/`
  const auth = new AuthClient({
    url: new URL('auth/v1', base).href,
    headers: {
      Authorization: `Bearer ${supabaseAnonKey}`,
      apikey: supabaseAnonKey,
      'X-Client-Info': 'foyer-web auth-js',
    },
    storageKey: defaultStorageKey(supabaseUrl),
    storage,
    autoRefreshToken: true,
    persistSession: true,
    detectSessionInUrl: false,
    flowType: 'pkce',
    // An answer that says this browser's session is gone on the server (signed out from another device, the user
    // deleted) ends it here too, once the call that met it is over: the page says so, the header is signed out at
    // once and the page stays (lib/session-ended.ts, ADR 183). The sign-out's own logout call meets the same answer.
    // A refused refresh (the token endpoint) is left to auth-js, which signs out itself (SIGNED_OUT → /sign-in).
    fetch: async (input, init) => {
      const response = await fetch(input, init)
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
      if (!endingHere() && !url.includes('/token?') && (await saysSessionGone(response))) void endSessionHere(() => auth.signOut({ scope: 'local' }))
      return response
    },
  })
  return { auth }
}
