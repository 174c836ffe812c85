import type { EmailOtpType } from '@supabase/supabase-js'
import type { GetServerSideProps } from 'next'

import { linkErrorMessage, readableAuthError } from '../features/auth/auth-errors'
import { mfaPathFor, resolveNext } from '../lib/safe-next'
import { createServerSupabase, needsSecondFactor } from '../lib/supabase/server'

const OTP_TYPES = new Set<EmailOtpType>(['signup', 'invite', 'magiclink', 'recovery', 'email_change', 'email'])

function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}

export interface ConfirmPageProps {
  error: string
  initialSession: null
}

/**
 * /auth/confirm, where email links land: `token_hash` + `type` are verified (`verifyOtp`), a PKCE `code` is
 * exchanged for a session (its verifier is in this browser's cookies). The new session's cookies go on the
 * redirect to `next` (same-origin only; recovery links default to /reset-password). An email link proves the
 * first factor only: a user with a verified authenticator app goes to `/mfa?next=<next>` at once (the new session
 * is at aal1), not first to `next` to be bounced from there. On failure the page explains.
 */
export const confirmServerSideProps: GetServerSideProps<ConfirmPageProps> = async (ctx) => {
  ctx.res.setHeader('Cache-Control', 'private, no-cache, no-store, must-revalidate, max-age=0')
  const { token_hash: tokenHash, type, code, next, error: errorName, error_description: errorDescription, error_code: errorCode } = ctx.query
  const supabase = createServerSupabase(ctx)
  const otpType = single(type) as EmailOtpType | undefined
  let failure: unknown

  if (single(tokenHash) && otpType && OTP_TYPES.has(otpType)) {
    const { error } = await supabase.auth.verifyOtp({ type: otpType, token_hash: single(tokenHash) as string })
    failure = error
  } else if (single(code)) {
    const { error } = await supabase.auth.exchangeCodeForSession(single(code) as string)
    failure = error
  } else if (single(errorCode) || single(errorName) || single(errorDescription)) {
    // A failed link, as the auth server reports it: worded by its code; the description (anyone can write one into
    // a link) is not shown.
    return { props: { error: linkErrorMessage(single(errorCode) ?? single(errorName)), initialSession: null } }
  } else {
    failure = { code: 'otp_expired', message: 'missing token' }
  }

  if (failure) return { props: { error: readableAuthError(failure).message, initialSession: null } }
  const fallback = otpType === 'recovery' ? '/reset-password' : '/'
  const destination = resolveNext(single(next), fallback)
  // The session written above is read back from this request's cookie storage (set cookies win over the request's).
  const secondFactor = await needsSecondFactor(supabase)
  return { redirect: { destination: secondFactor ? mfaPathFor(destination) : destination, permanent: false } }
}
