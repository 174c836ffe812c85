import { RealtimeClient } from '@supabase/realtime-js'

import { backendConfig } from '../env'
import type { BrowserSupabase } from './browser-client'

/**
 * The browser's Realtime client (`@supabase/realtime-js` alone, ≈ 16 kB gz), set up as supabase-js sets up its own:
 * `<url>/realtime/v1`, the anon key as `apikey`, and the user's access token from the auth client — asked for on
 * every join and heartbeat (`accessToken`), pushed to open channels when auth-js refreshes it, and the socket closed
 * on sign-out, so a channel never outlives the session that opened it (docs/decisions/044-live-notes.md).
 *
 * Only reached through `loadRealtime()` (./realtime.ts), whose dynamic `import()` keeps it out of every page's
 * first-load JS: pages that show live data load it after their first paint.
 */
export async function createRealtime(supabase: BrowserSupabase): Promise<RealtimeClient> {
  const { supabaseUrl, supabaseAnonKey } = backendConfig
  const base = supabaseUrl.endsWith('/') ? supabaseUrl : `${supabaseUrl}/`
  const token = async () => (await supabase.auth.getSession()).data.session?.access_token ?? null
  const realtime = new RealtimeClient(new URL('realtime/v1', base).href, {
    params: { apikey: supabaseAnonKey },
    accessToken: token,
  })
  supabase.auth.onAuthStateChange((event) => {
    if (event === 'TOKEN_REFRESHED' || event === 'SIGNED_IN' || event === 'MFA_CHALLENGE_VERIFIED') void realtime.setAuth()
    if (event === 'SIGNED_OUT') {
      void realtime.removeAllChannels()
      realtime.disconnect()
    }
  })
  // The token before the first join: realtime-js sends a join without `access_token` when its callback has not
  // answered yet, the channel is then joined as `anon` (RLS lets nothing through), and the token that follows is only
  // pushed to channels already joined — supabase-js avoids it the same way, with setAuth on its INITIAL_SESSION.
  await realtime.setAuth()
  return realtime
}
