import { describe, expect, test } from 'vitest'

import { factorStatusLabel, groupSecret, nextFactorName, normaliseCode, qrImageSrc } from './factors'

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
})
