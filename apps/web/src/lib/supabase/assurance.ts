import type { User } from '@supabase/supabase-js'

/**
 * The `aal` claim of a JWT's payload (no signature check: only for a token the auth server has verified, or to decide
 * what the UI offers). Works in the browser and on the server.
 */
export function accessTokenAal(token: string): string | null {
  const payload = token.split('.')[1]
  if (!payload) return null
  try {
    const binary = atob(payload.replace(/-/g, '+').replace(/_/g, '/'))
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)))) as { aal?: unknown }
    return typeof claims.aal === 'string' ? claims.aal : null
  } catch {
    return null
  }
}

/**
 * True when a session at aal1 belongs to a user with a verified factor: two-factor sign-in is not finished, so the
 * user's data stays closed until /mfa (the same computation as auth-js's getAuthenticatorAssuranceLevel: current
 * level from the token, next level aal2 when a verified factor exists).
 */
export function sessionNeedsSecondFactor(accessToken: string, user: Pick<User, 'factors'>): boolean {
  const hasVerifiedFactor = (user.factors ?? []).some((factor) => factor.status === 'verified')
  return hasVerifiedFactor && accessTokenAal(accessToken) === 'aal1'
}
