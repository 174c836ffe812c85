import { AuthApiError } from '@supabase/supabase-js'
import { describe, expect, it } from 'vitest'

import { readableFactorError } from './factor-errors'

describe('readableFactorError', () => {
  it.each([
    ['mfa_verification_failed', 422, 'Invalid TOTP code entered', /code is not right/],
    ['mfa_challenge_expired', 422, 'MFA challenge has expired, verify against another challenge or create a new challenge.', /has expired/],
    ['mfa_factor_not_found', 404, 'Factor not found', /no longer exists/],
    ['mfa_factor_name_conflict', 422, 'A factor with the friendly name "Authenticator app" for this user already exists', /just added/],
    ['too_many_enrolled_mfa_factors', 422, 'Maximum number of verified factors reached, unenroll to continue', /Remove one to add another/],
    ['mfa_totp_enroll_not_enabled', 422, 'MFA enroll is disabled for TOTP', /not enabled on this server/],
    ['mfa_ip_address_mismatch', 422, 'Challenge and verify IP addresses mismatch', /network changed/],
  ])("words GoTrue's %s, never its own text", (code, status, raw, message) => {
    const readable = readableFactorError(new AuthApiError(raw, status, code)).message
    expect(readable).toMatch(message)
    expect(readable).not.toContain(raw)
  })

  it('says everything else as readableAuthError does', () => {
    expect(readableFactorError(new AuthApiError('raw', 429, 'over_request_rate_limit')).message).toMatch(/Too many attempts/)
    expect(readableFactorError(new AuthApiError('raw', 400, 'constructor')).message.length).toBeGreaterThan(10)
  })
})
