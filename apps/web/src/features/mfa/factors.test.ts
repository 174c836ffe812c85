import { describe, expect, test } from 'vitest'

import { AuthApiError } from '@supabase/supabase-js'

import { factorStatusLabel, groupSecret, nextFactorName, normaliseCode, qrImageSrc, removeFactorError } from './factors'

describe('MFA helpers', () => {
  test('factor names skip the ones the user already has', () => {
    expect(nextFactorName([])).toBe('Authenticator app')
    expect(nextFactorName([{ friendly_name: 'Authenticator app' }])).toBe('Authenticator app 2')
    expect(nextFactorName([{ friendly_name: 'Authenticator app' }, { friendly_name: 'Authenticator app 2' }])).toBe('Authenticator app 3')
  })

  test('the QR SVG becomes an encoded data URL (a # inside no longer cuts it)', () => {
    const src = qrImageSrc('data:image/svg+xml;utf-8,<svg fill="#000"></svg>')
    expect(src.startsWith('data:image/svg+xml;charset=utf-8,')).toBe(true)
    expect(src).not.toContain('#')
    expect(decodeURIComponent(src.slice(src.indexOf(',') + 1))).toBe('<svg fill="#000"></svg>')
  })

  test('codes: spaces and dashes are ignored, anything but six digits is refused', () => {
    expect(normaliseCode('123 456')).toBe('123456')
    expect(normaliseCode('123-456')).toBe('123456')
    expect(normaliseCode('12345')).toBeNull()
    expect(normaliseCode('12345a')).toBeNull()
  })

  test('secret grouping and status labels', () => {
    expect(groupSecret('ABCDEFGHIJ')).toBe('ABCD EFGH IJ')
    expect(factorStatusLabel('verified')).toBe('Active')
    expect(factorStatusLabel('unverified')).toBe('Not verified')
  })

  test('removing an active factor below aal2: the server answer insufficient_aal becomes a message that asks for a code', () => {
    // What supabase-js hands over for localbase's (and GoTrue's) 422 answer to DELETE /factors/:id at aal1.
    const refused = new AuthApiError('AAL2 required to unenroll verified factor', 422, 'insufficient_aal')
    const failure = removeFactorError(refused)
    expect(failure.needsCode).toBe(true)
    expect(failure.message).toBe('Removing an active authenticator needs a code from one of your authenticator apps first.')
    expect(failure.message).not.toContain('AAL2')
  })

  test('other removal failures keep the general readable messages', () => {
    const gone = removeFactorError(new AuthApiError('Factor not found', 404, 'session_not_found'))
    expect(gone).toEqual({ message: 'Your session has ended. Sign in again.', needsCode: false })
    const offline = removeFactorError(new TypeError('Failed to fetch'))
    expect(offline).toEqual({ message: 'Could not reach the sign-in service. Check your connection and try again.', needsCode: false })
  })
})
