import { createBrowserClient } from '@supabase/ssr'
import type { SupabaseClient } from '@supabase/supabase-js'

import { backendConfig } from '../env'
import { SESSION_COOKIE_OPTIONS } from './cookie-options'

let client: SupabaseClient | undefined

/**
 * The browser's Supabase client (auth only; product data goes through tRPC). One per page load: the session
 * lives in cookies (document.cookie) so server-rendered requests see it. supabase-js refreshes the token itself
 * (a tick every 30 s, refresh when ≤ 3 ticks are left, paused while the tab is hidden) and tells other tabs about
 * sign-in/sign-out through a BroadcastChannel. Links from auth emails are handled by /auth/confirm on the server,
 * so the client does not try to read sessions from URLs.
 */
export function getBrowserSupabase(): SupabaseClient {
  if (typeof window === 'undefined') throw new Error('getBrowserSupabase() is for the browser; use createServerSupabase() on the server')
  client ??= createBrowserClient(backendConfig.supabaseUrl, backendConfig.supabaseAnonKey, {
    cookieOptions: SESSION_COOKIE_OPTIONS,
    isSingleton: true,
    auth: { autoRefreshToken: true, persistSession: true, detectSessionInUrl: false, flowType: 'pkce' },
  })
  return client
}
