// Starting a guest session, imported when the visitor presses "Try it without an account" (the auth client and the
// error messages are not part of the welcome page's first load).
import { loadBrowserSupabase } from '../../lib/supabase/browser'
import { readableGuestStartError } from '../auth'

/** Signs in anonymously; resolves to null on success, or a readable reason the server refused. */
export async function startGuestSession(): Promise<string | null> {
  try {
    const { data, error } = await (await loadBrowserSupabase()).auth.signInAnonymously()
    if (error) return readableGuestStartError(error)
    if (!data.session) return readableGuestStartError(null)
    return null
  } catch (error) {
    return readableGuestStartError(error)
  }
}
