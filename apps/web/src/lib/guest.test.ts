import { describe, expect, it } from 'vitest'

import { GUEST_BANNER_COOKIE, GUEST_BANNER_HIDE_DAYS, guestBannerDismissCookie, guestBannerDismissed, isGuest, readCookie } from './guest'

const guest = { id: '5b0a3c1e-guest', is_anonymous: true }
const member = { id: '7c1d2e3f-member', is_anonymous: false }

describe('isGuest', () => {
  it('is true only for a user of an anonymous sign-in', () => {
    expect(isGuest(guest)).toBe(true)
    expect(isGuest(member)).toBe(false)
    expect(isGuest({})).toBe(false) // an auth server without the field (older GoTrue): a permanent user
    expect(isGuest(null)).toBe(false)
    expect(isGuest(undefined)).toBe(false)
  })
})

describe('readCookie', () => {
  it('finds a cookie among others, decoded, and ignores look-alikes', () => {
    const header = `theme=dark; sb-127-auth-token=base64-abc; x${GUEST_BANNER_COOKIE}=no; ${GUEST_BANNER_COOKIE}=a%20b`
    expect(readCookie(header, GUEST_BANNER_COOKIE)).toBe('a b')
    expect(readCookie(header, 'theme')).toBe('dark')
    expect(readCookie(header, 'missing')).toBeUndefined()
    expect(readCookie(undefined, 'theme')).toBeUndefined()
    expect(readCookie('broken; theme', 'theme')).toBeUndefined()
    expect(readCookie(`${GUEST_BANNER_COOKIE}=%E0%A4%A`, GUEST_BANNER_COOKIE)).toBeUndefined() // bad escape: no crash
  })
})

describe('guest banner dismissal', () => {
  it('hides the banner for the guest who dismissed it, not for the next guest in the same browser', () => {
    const cookie = `theme=light; ${GUEST_BANNER_COOKIE}=${guest.id}`
    expect(guestBannerDismissed(cookie, guest)).toBe(true)
    expect(guestBannerDismissed(cookie, { id: 'another-guest', is_anonymous: true })).toBe(false)
    expect(guestBannerDismissed('theme=light', guest)).toBe(false)
    expect(guestBannerDismissed(undefined, guest)).toBe(false)
  })

  it('never applies to a permanent user or to nobody', () => {
    expect(guestBannerDismissed(`${GUEST_BANNER_COOKIE}=${member.id}`, member)).toBe(false)
    expect(guestBannerDismissed(`${GUEST_BANNER_COOKIE}=${guest.id}`, null)).toBe(false)
  })

  it('writes a cookie for the whole site that lasts GUEST_BANNER_HIDE_DAYS, Secure on https', () => {
    const cookie = guestBannerDismissCookie(guest.id, false)
    expect(GUEST_BANNER_HIDE_DAYS).toBe(7)
    expect(cookie).toBe(`${GUEST_BANNER_COOKIE}=${guest.id}; Path=/; Max-Age=604800; SameSite=Lax`)
    expect(guestBannerDismissCookie(guest.id, true)).toMatch(/; Secure$/)
    // what the browser sends back is read as dismissed for this guest
    expect(guestBannerDismissed(cookie.split(';')[0], guest)).toBe(true)
  })
})
