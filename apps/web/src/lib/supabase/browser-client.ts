import { createBrowserClient } from '@supabase/ssr'

import { backendConfig } from '../env'
import type { AppSupabaseClient, Database } from './client-type'
import { SESSION_COOKIE_OPTIONS } from './cookie-options'

/**
 * Builds the browser's Supabase client. Only ever reached through `loadBrowserSupabase()` (./browser.ts), whose
 * dynamic `import()` of this module keeps @supabase/ssr and all of @supabase/supabase-js out of the first-load
 * bundle: webpack puts them in a chunk of their own, fetched right after hydration.
 *
 * `autoRefreshToken: true` is the spec's refresh on its own: auth-js checks every 30 s (AUTO_REFRESH_TICK_DURATION_MS)
 * and refreshes when 3 checks or fewer are left (AUTO_REFRESH_TICK_THRESHOLD). In a browser it also listens to
 * `visibilitychange` on window: hidden stops the checks, visible restarts them with an immediate check and a
 * refresh of a token that expired meanwhile. Calling `startAutoRefresh()`/`stopAutoRefresh()` ourselves would
 * remove that listener, so the app never does. (e2e/auth-refresh.test.ts watches all of it with a fake clock.)
 */
export function createBrowserSupabase(): AppSupabaseClient {
  return createBrowserClient<Database>(backendConfig.supabaseUrl, backendConfig.supabaseAnonKey, {
    cookieOptions: SESSION_COOKIE_OPTIONS,
    isSingleton: true,
    auth: { autoRefreshToken: true, persistSession: true, detectSessionInUrl: false, flowType: 'pkce' },
  })
}
