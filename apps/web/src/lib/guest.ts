// Guest (anonymous) sessions: who is a guest, the banner's dismissal cookie (shared by the app frame, the user menu,
// the account page and the server's withSession). The guest screens are in features/guest. No React, no auth client and no messages here: the app frame imports
// this on every page.
import type { User } from '@supabase/supabase-js'

/** A user of a guest session (`signInAnonymously()`): no email, no password, notes only in this browser. */
export function isGuest(user: Pick<User, 'is_anonymous'> | null | undefined): boolean {
  return user?.is_anonymous === true
}

/** What the header and the menu call a guest instead of an email address. */
export const GUEST_NAME = 'Guest'

/** Where the guest banner and the user menu send a guest to add an email and password. */
export const ADD_EMAIL_PATH = '/settings/account'

/** The account page's "finished" state after a guest's email is confirmed (the confirmation link's `next`). */
export const SAVED_PATH = '/settings/account?saved=1'

/**
 * Dismissing the guest banner hides it for this long, for this guest only. The banner is the one warning that the
 * notes can be lost; a week keeps it from nagging on every page while making sure it comes back. The user menu
 * keeps "Add email and password" all the time.
 */
export const GUEST_BANNER_HIDE_DAYS = 7

/** Cookie holding the id of the guest who dismissed the banner (expires after GUEST_BANNER_HIDE_DAYS). */
export const GUEST_BANNER_COOKIE = 'foyer-guest-banner'

/** The cookie's value from a `Cookie` header or `document.cookie`. */
export function readCookie(cookieHeader: string | undefined, name: string): string | undefined {
  if (!cookieHeader) return undefined
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=')
    if (eq === -1) continue
    if (part.slice(0, eq).trim() !== name) continue
    try {
      return decodeURIComponent(part.slice(eq + 1).trim())
    } catch {
      return undefined
    }
  }
  return undefined
}

/**
 * Whether the banner stays hidden for this user: a guest who dismissed it (the cookie names their id, so a new
 * guest in the same browser sees it again). Never for a permanent user, who gets no banner at all.
 */
export function guestBannerDismissed(cookieHeader: string | undefined, user: Pick<User, 'id' | 'is_anonymous'> | null | undefined): boolean {
  if (!user || !isGuest(user)) return false
  return readCookie(cookieHeader, GUEST_BANNER_COOKIE) === user.id
}

/** The `document.cookie` assignment that dismisses the banner for `userId` (read by the server on the next page). */
export function guestBannerDismissCookie(userId: string, secure: boolean): string {
  const maxAge = GUEST_BANNER_HIDE_DAYS * 24 * 60 * 60
  return `${GUEST_BANNER_COOKIE}=${encodeURIComponent(userId)}; Path=/; Max-Age=${maxAge}; SameSite=Lax${secure ? '; Secure' : ''}`
}
