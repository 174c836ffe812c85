import { AuthApiError, AuthRetryableFetchError, AuthSessionMissingError, AuthUnknownError, AuthWeakPasswordError } from '@supabase/supabase-js'
import { describe, expect, it } from 'vitest'

import { EMAIL_CHANGE_NEXT_STEP, LINK_FAILED, linkErrorMessage, linkFragmentNote, readableAuthError } from './auth-errors'

describe('readableAuthError', () => {
  it('maps wrong credentials to a message beside the password', () => {
    const error = new AuthApiError('Invalid login credentials', 400, 'invalid_credentials')
    expect(readableAuthError(error)).toEqual({
      message: 'That email and password do not match. Check both and try again.',
      field: 'password',
    })
  })

  it('lists the reasons of a weak password', () => {
    const error = new AuthWeakPasswordError('Password is too weak', 422, ['length', 'characters'])
    const readable = readableAuthError(error)
    expect(readable.field).toBe('password')
    expect(readable.message).toBe(
      'Choose a stronger password: it is too short; it needs a mix of letters, digits and symbols.',
    )
  })

  it('handles a weak_password code without reasons', () => {
    expect(readableAuthError({ code: 'weak_password', status: 422 }).message).toBe('Choose a stronger password.')
  })

  it.each([
    ['over_request_rate_limit', 429, /Too many attempts/, undefined],
    ['email_not_confirmed', 400, /confirm your email/, 'email'],
    ['otp_expired', 403, /expired or was already used/, 'code'],
    ['user_already_exists', 422, /already exists/, 'email'],
  ])('maps %s', (code, status, message, field) => {
    const readable = readableAuthError(new AuthApiError('raw server text', status, code))
    expect(readable.message).toMatch(message)
    expect(readable.field).toBe(field)
  })

  it('tells how long an account is held after repeated failures (too_many_failed_attempts)', () => {
    const held = new AuthApiError('Too many failed attempts for this account: try again in 8 seconds.', 429, 'too_many_failed_attempts')
    expect(readableAuthError(held).message).toBe('Too many failed attempts for this account. Wait 8 seconds, then try again.')
    expect(readableAuthError(new AuthApiError('held', 429, 'too_many_failed_attempts')).message).toMatch(/Wait a minute/)
  })

  it("says how long until another email can be sent (GoTrue's per-address interval), and hands the wait on to count down", () => {
    const soon = new AuthApiError('For security purposes, you can only request this after 42 seconds.', 429, 'over_email_send_rate_limit')
    const readable = readableAuthError(soon)
    // GoTrue rounds the seconds left down: the wait is over one second later
    expect(readable.message).toBe('An email was just sent to this address. Wait 43 seconds before asking for another.')
    expect(readable.retry?.seconds).toBe(43)
    expect(readable.retry?.say('1 second')).toBe('An email was just sent to this address. Wait 1 second before asking for another.')
    const last = new AuthApiError('For security purposes, you can only request this after 0 seconds.', 429, 'over_email_send_rate_limit')
    expect(readableAuthError(last).message).toMatch(/Wait 1 second before/)
    // the count limit names no wait
    const count = readableAuthError(new AuthApiError('email rate limit exceeded', 429, 'over_email_send_rate_limit'))
    expect(count).toEqual({ message: 'Too many emails were sent to this address. Wait a few minutes, then try again.' })
    expect(readableAuthError(new AuthApiError('Too many failed attempts: try again in 3 seconds.', 429, 'too_many_failed_attempts')).retry?.seconds).toBe(3)
  })

  it("puts the auth server's own email check beside the email field (validation_failed)", () => {
    const invalid = new AuthApiError('Unable to validate email address: invalid format', 400, 'validation_failed')
    expect(readableAuthError(invalid)).toEqual({ message: 'Enter a valid email address.', field: 'email' })
    const long = new AuthApiError('An email address is too long', 400, 'validation_failed')
    expect(readableAuthError(long)).toEqual({ message: 'That email address is too long.', field: 'email' })
    const other = new AuthApiError('Bad Pagination Parameters', 400, 'validation_failed')
    expect(readableAuthError(other).field).toBeUndefined()
  })

  it("puts the auth server's password length limit beside the password field (validation_failed)", () => {
    const long = new AuthApiError('Password cannot be longer than 72 characters', 400, 'validation_failed')
    expect(readableAuthError(long)).toEqual({ message: 'That password is too long: use at most 72 characters.', field: 'password' })
  })
  it('falls back on the status for unknown codes', () => {
    expect(readableAuthError(new AuthApiError('slow down', 429, 'something_new')).message).toMatch(/Too many attempts/)
    expect(readableAuthError(new AuthApiError('boom', 503, 'unexpected_failure')).message).toMatch(/had a problem/)
  })

  it('explains network failures', () => {
    expect(readableAuthError(new AuthRetryableFetchError('Failed to fetch', 0)).message).toMatch(/Could not reach/)
  })

  it("says in words what supabase-js says in its own: a session ended elsewhere, an answer that is not JSON, a chunk that did not load", () => {
    // GoTrue's session_not_found (the session was signed out on another device), or no session left in this browser
    expect(readableAuthError(new AuthSessionMissingError())).toEqual({ message: 'Your session has ended. Sign in again.' })
    // a proxy's HTML page (403, 404, 413…) where the auth server's JSON should be: the JSON parser's words
    let parseError: unknown
    try {
      JSON.parse('<html><body>Forbidden</body></html>')
    } catch (e) {
      parseError = e
    }
    const notJson = new AuthUnknownError((parseError as Error).message, parseError)
    expect(readableAuthError(notJson).message).toBe('The sign-in service had a problem. Try again in a moment.')
    const chunk = Object.assign(new Error('Loading chunk 3121 failed.\n(error: http://127.0.0.1:3000/_next/static/chunks/3121.js)'), { name: 'ChunkLoadError' })
    expect(readableAuthError(chunk).message).toBe('Could not reach the sign-in service. Check your connection and try again.')
  })

  it('never returns an empty message, whatever is thrown', () => {
    for (const thrown of [null, undefined, 42, 'text', {}, new Error(''), new AuthApiError('', 400, 'constructor'), new AuthApiError('', 400, '__proto__')]) {
      expect(readableAuthError(thrown).message.length).toBeGreaterThan(10)
    }
    expect(readableAuthError(new Error('odd thing')).message).toBe('Something went wrong: odd thing')
  })
})

describe('email link outcomes (/auth/confirm)', () => {
  const expired = 'This link or code has expired or was already used. Request a new one.'

  it('words the error codes the auth server puts on a failed link, and nothing else', () => {
    expect(linkErrorMessage('otp_expired')).toBe(expired)
    expect(linkErrorMessage('flow_state_expired')).toBe('This link has expired. Request a new one.')
    expect(linkErrorMessage('bad_code_verifier')).toMatch(/different browser/)
    for (const code of [undefined, '', 'call_support_now', '__proto__', 'constructor']) expect(linkErrorMessage(code)).toBe(LINK_FAILED)
  })

  it("shows GoTrue's email-change message in our words (success), never other text from the link", () => {
    const gotrue = new URLSearchParams({ message: 'Confirmation link accepted. Please proceed to confirm link sent to the other email' })
    expect(linkFragmentNote(`#${gotrue}`)).toEqual({ kind: 'success', text: EMAIL_CHANGE_NEXT_STEP })
    const planted = new URLSearchParams({ message: 'Your account is suspended. Call +1 555 0100.' })
    expect(linkFragmentNote(`#${planted}`)).toBeNull()
  })

  it('reads a failed link by its error code; its description is not shown', () => {
    const failed = new URLSearchParams({ error: 'access_denied', error_code: 'otp_expired', error_description: 'Email link is invalid or has expired' })
    expect(linkFragmentNote(`#${failed}`)).toEqual({ kind: 'error', text: expired })
    const planted = new URLSearchParams({ error_description: 'Call +1 555 0100 to unlock your account' })
    expect(linkFragmentNote(`#${planted}`)).toEqual({ kind: 'error', text: LINK_FAILED })
    expect(linkFragmentNote('#error=over_request_rate_limit')).toEqual({ kind: 'error', text: 'Too many attempts. Wait a few minutes, then try again.' })
    expect(linkFragmentNote('')).toBeNull()
  })
})
