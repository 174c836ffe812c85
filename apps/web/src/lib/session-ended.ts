/**
 * A session the auth server says has ended while a page was showing it (ADR 183): GoTrue refused a call made with it
 * because the session or its user no longer exists (signed out from another device, "Sign out other devices", the
 * user deleted). The page has just said so ("Your session has ended. Sign in again."); this browser then drops the
 * session at once, so the header is signed out and a reload or the next page is too, but the page itself stays, with
 * the message and whatever was typed in its forms (`features/auth/RequireSession.tsx` keeps it).
 *
 * Loaded with the auth client (lib/supabase/browser-client.ts) and the pages that need a session: not in any page's
 * first load on its own.
 */
import Router from 'next/router'

/** GoTrue's `error_code`s (401/403) that say the session or its user is gone for good: no refresh brings it back. */
const SESSION_GONE = new Set(['session_not_found', 'session_expired', 'user_not_found'])

/** The sign-in page the session provider leaves for on SIGNED_OUT (features/auth/SessionProvider.tsx SIGN_IN_PATH). */
const SIGN_IN_PATH = '/sign-in'

let ending: Promise<void> | null = null
/** Set when a session ended here, until the next route change: the page on screen at the time stays. */
let endedOnThisPage = false

/** True from the moment this browser drops a session the auth server said had ended until the page changes. */
export function endingHere(): boolean {
  return endedOnThisPage
}

/** Whether an auth server answer says the session it was asked with is gone (its JSON body's `error_code`). */
export async function saysSessionGone(response: Response): Promise<boolean> {
  if (response.status !== 401 && response.status !== 403) return false
  try {
    const body = (await response.clone().json()) as { error_code?: unknown; code?: unknown } | null
    const code = body?.error_code ?? body?.code
    return typeof code === 'string' && SESSION_GONE.has(code)
  } catch {
    return false
  }
}

/**
 * Drops this browser's session (`signOut` with scope `local`: the cookies go, SIGNED_OUT reaches this page's session
 * provider and the other tabs) without leaving the page: the provider's move to /sign-in is not made for this
 * sign-out (the other tabs still go there, as after any sign-out elsewhere). Once at a time.
 */
export function endSessionHere(signOut: () => Promise<unknown>): Promise<void> {
  ending ??= (async () => {
    endedOnThisPage = true
    const pageChanges = () => {
      endedOnThisPage = false
      Router.events.off('routeChangeStart', pageChanges)
    }
    Router.events.on('routeChangeStart', pageChanges)
    const replace = Router.replace
    Router.replace = ((url, as, options) => (url === SIGN_IN_PATH ? Promise.resolve(true) : replace(url, as, options))) as typeof Router.replace
    try {
      await signOut()
    } catch {
      // the session stays as it was: the page has said what happened all the same
    } finally {
      Router.replace = replace
      ending = null
    }
  })()
  return ending
}
