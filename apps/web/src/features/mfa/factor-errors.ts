import { readableAuthError, type ReadableAuthError } from '../auth'

/**
 * GoTrue's refusals that only the factor screens meet (/mfa, /settings/security, enrolment's first code), in words:
 * a code checked, an app added or removed (GoTrue's own words name "factors" and "unenroll"). Kept here, not in
 * auth-errors.ts, which the sign-in pages load (their first-load budget, bench/web-size.ts).
 */
const FACTOR_ERRORS: Record<string, ReadableAuthError> = {
  mfa_verification_failed: { message: 'That code is not right. Check your authenticator app and try again.', field: 'code' },
  mfa_challenge_expired: { message: 'That code has expired. Enter the current one from your authenticator app.', field: 'code' },
  mfa_factor_not_found: { message: 'This authenticator app no longer exists: it was removed in another tab or on another device. Reload the page.' },
  mfa_factor_name_conflict: { message: 'An authenticator app was just added to your account, perhaps in another tab. Reload the page and try again.' },
  too_many_enrolled_mfa_factors: { message: 'Your account has as many authenticator apps as it can have. Remove one to add another.' },
  mfa_totp_enroll_not_enabled: { message: 'Authenticator apps are not enabled on this server.' },
  mfa_ip_address_mismatch: { message: 'Your network changed while the code was being checked. Enter the current code again.', field: 'code' },
}

/** readableAuthError, with the factor screens' own refusals first. */
export function readableFactorError(error: unknown): ReadableAuthError {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  return (typeof code === 'string' && Object.hasOwn(FACTOR_ERRORS, code) ? FACTOR_ERRORS[code] : undefined) ?? readableAuthError(error)
}
