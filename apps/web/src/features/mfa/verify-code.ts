import { loadBrowserSupabase, type ReadableAuthError } from '../auth'
import { readableFactorError } from './factor-errors'
import { normaliseCode } from './factors'

/**
 * What checking a typed code gave: accepted, or a message for the code field or for the whole form (with the wait
 * the server asked for, after too many wrong codes, to count down).
 */
export type CodeCheck = { ok: true } | { ok: false; field: 'code' | null; message: string; retry?: ReadableAuthError['retry'] }

/**
 * Checks a typed TOTP code against one factor (challenge + verify), as enrolment's first code and the /mfa sign-in
 * step both do: a malformed code is refused before any call, the server's refusal comes back in words.
 */
export async function verifyTotpCode(factorId: string, typed: string): Promise<CodeCheck> {
  const code = normaliseCode(typed)
  if (!code) {
    const message = typed.trim() ? 'Enter the 6 digits your app shows.' : 'Enter the 6-digit code from your authenticator app.'
    return { ok: false, field: 'code', message }
  }
  try {
    const { error } = await (await loadBrowserSupabase()).auth.mfa.challengeAndVerify({ factorId, code })
    if (!error) return { ok: true }
    const readable = readableFactorError(error)
    return { ok: false, field: readable.field === 'code' ? 'code' : null, message: readable.message, retry: readable.retry }
  } catch (thrown) {
    return { ok: false, field: null, message: readableFactorError(thrown).message }
  }
}
