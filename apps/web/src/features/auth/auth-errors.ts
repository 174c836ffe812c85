/**
 * Auth error → readable message (and the form field it belongs to). Works on supabase-js AuthErrors and on
 * anything else thrown (network failures), by the GoTrue error `code`, falling back to the HTTP status.
 */

export type AuthField = 'email' | 'password' | 'code' | 'displayName'

export interface ReadableAuthError {
  message: string
  /** The field the message belongs beside; absent → show it as a toast / form-level alert. */
  field?: AuthField
  /** A wait the server asked for: its seconds, and the message for the time left ("2 seconds"), to count down. */
  retry?: { seconds: number; say: (left: string) => string }
}

/** "1 second", "42 seconds". */
export const secondsText = (n: number): string => (n === 1 ? '1 second' : `${n} seconds`)

/**
 * The wait a message names ("… 42 seconds"), plus `extra` seconds, worded by `say` and counting down; undefined when
 * it names none.
 */
function waitFor(message: unknown, say: (left: string) => string, extra = 0): ReadableAuthError | undefined {
  const n = typeof message === 'string' ? /(\d+)\s*seconds?/.exec(message)?.[1] : undefined
  if (n === undefined) return undefined
  const seconds = Math.max(1, Number(n) + extra)
  return { message: say(secondsText(seconds)), retry: { seconds, say } }
}

interface ErrorLike {
  code?: unknown
  status?: unknown
  message?: unknown
  name?: unknown
  reasons?: unknown
  weak_password?: unknown
}

const REASON_TEXT: Record<string, string> = {
  length: 'it is too short',
  characters: 'it needs a mix of letters, digits and symbols',
  pwned: 'it appears in known data breaches',
}

function weakPasswordReasons(error: ErrorLike): string[] {
  const raw = Array.isArray(error.reasons)
    ? error.reasons
    : typeof error.weak_password === 'object' && error.weak_password !== null
      ? (error.weak_password as { reasons?: unknown }).reasons
      : undefined
  return Array.isArray(raw) ? raw.filter((r): r is string => typeof r === 'string') : []
}

const BY_CODE: Record<string, ReadableAuthError> = {
  invalid_credentials: { message: 'That email and password do not match. Check both and try again.', field: 'password' },
  email_not_confirmed: {
    message: 'Please confirm your email address first — open the link we sent you.',
    field: 'email',
  },
  user_already_exists: { message: 'An account with this email already exists. Sign in instead.', field: 'email' },
  email_exists: { message: 'An account with this email already exists. Sign in instead.', field: 'email' },
  email_address_invalid: { message: 'Enter a valid email address.', field: 'email' },
  validation_failed: { message: 'Some of what you entered is not valid. Check the fields and try again.' },
  over_request_rate_limit: { message: 'Too many attempts. Wait a few minutes, then try again.' },
  over_email_send_rate_limit: { message: 'Too many emails were sent to this address. Wait a few minutes, then try again.' },
  otp_expired: { message: 'This link or code has expired or was already used. Request a new one.', field: 'code' },
  otp_disabled: { message: 'Sign-in links are not enabled on this server.' },
  same_password: { message: 'The new password must be different from your current one.', field: 'password' },
  session_not_found: { message: 'Your session has ended. Sign in again.' },
  session_expired: { message: 'Your session has ended. Sign in again.' },
  refresh_token_not_found: { message: 'Your session has ended. Sign in again.' },
  refresh_token_already_used: { message: 'Your session has ended. Sign in again.' },
  user_not_found: { message: 'No account was found for this session. Sign in again.' },
  user_banned: { message: 'This account is blocked. Contact support.' },
  signup_disabled: { message: 'New sign-ups are closed on this server.' },
  email_provider_disabled: { message: 'Email sign-in is not enabled on this server.' },
  bad_code_verifier: { message: 'This link was opened in a different browser. Open it where you requested it, or request a new one.' },
  flow_state_not_found: { message: 'This link has expired or was already used. Request a new one.' },
  flow_state_expired: { message: 'This link has expired. Request a new one.' },
  insufficient_aal: { message: 'This needs your second factor. Verify it and try again.' },
  reauthentication_needed: { message: 'For your security, confirm it is you before changing this.' },
  bad_jwt: { message: 'Your session has ended. Sign in again.' },
}

/**
 * The auth server failed (5xx), or what answered was not it (a proxy's HTML page in place of its JSON: supabase-js
 * passes the JSON parser's error on). One message for both, as few bytes as can be on the sign-in pages.
 */
const SERVICE_PROBLEM: ReadableAuthError = { message: 'The sign-in service had a problem. Try again in a moment.' }

export function readableAuthError(error: unknown): ReadableAuthError {
  const e: ErrorLike = typeof error === 'object' && error !== null ? (error as ErrorLike) : {}
  const code = typeof e.code === 'string' ? e.code : undefined
  const status = typeof e.status === 'number' ? e.status : undefined

  if (code === 'weak_password' || e.name === 'AuthWeakPasswordError') {
    const reasons = weakPasswordReasons(e)
      .map((r) => REASON_TEXT[r])
      .filter((r): r is string => r !== undefined)
    return {
      message: reasons.length > 0 ? `Choose a stronger password: ${reasons.join('; ')}.` : 'Choose a stronger password.',
      field: 'password',
    }
  }
  if (code === 'too_many_failed_attempts') {
    // localbase's per-account defence: the server's message says how long to wait ("… in 4 seconds.").
    const say = (when: string) => `Too many failed attempts for this account. Wait ${when}, then try again.`
    return waitFor(e.message, say) ?? { message: say('a minute') }
  }
  if (code === 'over_email_send_rate_limit') {
    // GoTrue's least time between two mails to an address: "For security purposes, you can only request this after
    // 42 seconds." — the whole seconds left, rounded down: one more is when it is over. (Without a number it is the
    // count limit, "email rate limit exceeded": BY_CODE's words.)
    const wait = waitFor(e.message, (when) => `An email was just sent to this address. Wait ${when} before asking for another.`, 1)
    if (wait) return wait
  }
  if (code === 'validation_failed' && typeof e.message === 'string' && /email address/i.test(e.message)) {
    // GoTrue's own email check ("Unable to validate email address: invalid format", "… too long") is stricter than
    // the form's: the message belongs beside the email field.
    return /too long/i.test(e.message)
      ? { message: 'That email address is too long.', field: 'email' }
      : (BY_CODE.email_address_invalid as ReadableAuthError)
  }
  if (code === 'validation_failed' && typeof e.message === 'string' && /password.*(longer|too long)/i.test(e.message)) {
    // "Password cannot be longer than 72 characters" (Supabase Auth, localbase): bcrypt reads 72 bytes at most.
    return { message: 'That password is too long: use at most 72 characters.', field: 'password' }
  }
  // own keys only: a code such as "constructor" is not a message of ours
  if (code !== undefined && Object.hasOwn(BY_CODE, code)) return BY_CODE[code] as ReadableAuthError
  // a failed fetch, or a part of the page loaded on demand (the auth client, a panel) that the connection did not bring
  if (e.name === 'AuthRetryableFetchError' || e.name === 'ChunkLoadError' || (error instanceof TypeError && /fetch/i.test(String(e.message)))) {
    return { message: 'Could not reach the sign-in service. Check your connection and try again.' }
  }
  // supabase-js's own errors, whose messages are its words ("Auth session missing!", `Unexpected token '<'…`):
  // GoTrue's session_not_found (signed out on another device, "Sign out other devices") or no session here
  if (e.name === 'AuthSessionMissingError') return BY_CODE.session_not_found as ReadableAuthError
  if (e.name === 'AuthUnknownError' && (error as { originalError?: unknown }).originalError instanceof SyntaxError) return SERVICE_PROBLEM
  if (status === 429) return BY_CODE.over_request_rate_limit as ReadableAuthError
  if (status !== undefined && status >= 500) return SERVICE_PROBLEM
  const text = typeof e.message === 'string' && e.message.trim() !== '' ? e.message.trim() : undefined
  return { message: text ? `Something went wrong: ${text}` : 'Something went wrong. Try again.' }
}

/**
 * Email links (/auth/confirm). The auth server reports a link's outcome in its URL (`?error_code=` on a PKCE
 * redirect, `#error_code=…&error_description=…` or `#message=…` on an implicit one), and so can anyone who writes a
 * link to the app: only what the app knows is shown, in its own words — never text taken from the URL.
 */

/** For a failed link whose error code the app does not know. */
export const LINK_FAILED = 'This link could not be used. Request a new one.'

/** After the first of the two confirmations of an email change (both the old and the new address get a link). */
export const EMAIL_CHANGE_NEXT_STEP = 'Link accepted. To finish changing your email address, also open the link we sent to your other address.'

/** GoTrue's `message` after the first of two email-change confirmations (GET /verify, "secure email change"). */
const EMAIL_CHANGE_ACCEPTED = /^Confirmation link accepted\. Please proceed to confirm link sent to the other email\.?$/

/** A failed link's message: the auth server's error code in our words, anything else generic. */
export function linkErrorMessage(code: string | undefined): string {
  const known = code !== undefined && Object.hasOwn(BY_CODE, code) ? BY_CODE[code] : undefined
  return known?.message ?? LINK_FAILED
}

export interface LinkNote {
  kind: 'success' | 'error'
  text: string
}

/** What a link's URL fragment says, as the app words it; null when it says nothing the app knows. */
export function linkFragmentNote(hash: string): LinkNote | null {
  const params = new URLSearchParams(hash.replace(/^#/, ''))
  const message = params.get('message')
  if (message !== null && EMAIL_CHANGE_ACCEPTED.test(message.trim())) return { kind: 'success', text: EMAIL_CHANGE_NEXT_STEP }
  if (params.has('error_code') || params.has('error') || params.has('error_description')) {
    return { kind: 'error', text: linkErrorMessage(params.get('error_code') || params.get('error') || undefined) }
  }
  return null
}
