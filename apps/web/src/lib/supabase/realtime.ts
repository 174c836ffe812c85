import type { RealtimeClient } from '@supabase/realtime-js'

import { loadBrowserSupabase } from './browser'

let loading: Promise<RealtimeClient> | undefined

/**
 * The page's one Realtime client (./realtime-client.ts), loaded on first use: the auth client first (its session
 * gives the token), then realtime-js in a chunk of its own. Every caller shares the client and so one WebSocket; a
 * failed import is not memoised, so the next call tries again.
 */
export function loadRealtime(): Promise<RealtimeClient> {
  if (typeof window === 'undefined') return Promise.reject(new Error('loadRealtime() is for the browser'))
  loading ??= Promise.all([loadBrowserSupabase(), import('./realtime-client')]).then(
    ([supabase, { createRealtime }]) => createRealtime(supabase),
    (error: unknown) => {
      loading = undefined
      throw error
    },
  )
  return loading
}
