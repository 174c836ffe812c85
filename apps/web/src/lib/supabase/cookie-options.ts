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

/**
 * The session cookie options for a page or answer served over https or not. Over https the cookies are `Secure`:
 * a browser then never sends the session over plain http to the same host (a first http visit before HSTS, or a
 * request an attacker on the network provokes). Over plain http (local development) a `Secure` cookie would not be
 * kept, so it is left out there.
 */
export function sessionCookieOptions(https: boolean): CookieOptionsWithName {
  return https ? { ...SESSION_COOKIE_OPTIONS, secure: true } : SESSION_COOKIE_OPTIONS
}

/**
 * Whether a request reached us over https: on a TLS socket, or through a TLS-terminating proxy that says so in
 * `X-Forwarded-Proto` (its first value). A client that sends the header itself only makes its own cookies
 * `Secure`, which its plain-http connection then drops: it gains nothing.
 */
export function isHttpsRequest(req: { headers: Record<string, string | string[] | undefined>; socket?: unknown }): boolean {
  if ((req.socket as { encrypted?: boolean } | undefined)?.encrypted === true) return true
  const proto = req.headers['x-forwarded-proto']
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase()
  return first === 'https'
}
