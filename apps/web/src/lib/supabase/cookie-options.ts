import type { CookieOptionsWithName } from '@supabase/ssr'

/**
 * Session cookie options (spec §9): path `/`, SameSite lax, max-age 31536000000 s. @supabase/ssr splits the
 * value into chunks of 3180 characters (`sb-<ref>-auth-token.0`, `.1`, …) — its MAX_CHUNK_SIZE, the spec's value.
 * Browsers clamp any max-age to 400 days (RFC 6265bis), so the cookie really lives 400 days; we keep the spec's
 * number and let the browser clamp it. Not httpOnly: the browser client reads and refreshes the session.
 */
export const SESSION_COOKIE_OPTIONS = {
  path: '/',
  sameSite: 'lax',
  httpOnly: false,
  maxAge: 31_536_000_000,
} as const satisfies CookieOptionsWithName
