import type { BrowserSupabase } from './browser-client'

export type { BrowserSupabase } from './browser-client'

let loading: Promise<BrowserSupabase> | undefined

/**
 * The browser's Supabase auth client (auth-js alone: product data goes through tRPC; see ./browser-client.ts). One
 * per page load: the session lives in cookies (document.cookie) so server-rendered requests see it. auth-js refreshes
 * the token itself (a tick every 30 s, refresh when ≤ 3 ticks are left, paused while the tab is hidden) and tells
 * other tabs about sign-in/sign-out through a BroadcastChannel. Links from auth emails are handled by /auth/confirm on
 * the server, so the client does not try to read sessions from URLs.
 *
 * The client code (@supabase/auth-js + @supabase/ssr's cookie storage, ~30 kB gz) is not part of the first-load
 * bundle: the first call imports it; every call shares that one promise and so one client. A failed import (chunk
 * could not be fetched) is not memoised, so the next call tries again.
 */
export function loadBrowserSupabase(): Promise<BrowserSupabase> {
  if (typeof window === 'undefined') {
    return Promise.reject(new Error('loadBrowserSupabase() is for the browser; use createServerSupabase() on the server'))
  }
  loading ??= import('./browser-client').then(
    ({ createBrowserSupabase }) => createBrowserSupabase(),
    (error: unknown) => {
      loading = undefined
      throw error
    },
  )
  return loading
}
