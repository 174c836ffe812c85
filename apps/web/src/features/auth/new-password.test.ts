import { describe, expect, it } from 'vitest'

import { checkNewAccount, checkNewPassword, MIN_PASSWORD_LENGTH } from './form'

describe('checkNewPassword', () => {
  it('asks for the minimum length before anything else', () => {
    expect(checkNewPassword('abc', 'xyz')).toEqual({ password: `Use at least ${MIN_PASSWORD_LENGTH} characters.` })
  })
  it('asks for the same password twice', () => {
    expect(checkNewPassword('long enough', 'long enougH')).toEqual({ confirm: 'The two passwords are not the same.' })
  })
  it('accepts a long enough password typed the same twice', () => {
    expect(checkNewPassword('x'.repeat(MIN_PASSWORD_LENGTH), 'x'.repeat(MIN_PASSWORD_LENGTH))).toEqual({})
  })
  it("refuses a password over the auth server's 72 characters before any call, as sign-up does", () => {
    expect(checkNewPassword('x'.repeat(72), 'x'.repeat(72))).toEqual({})
    expect(checkNewPassword('x'.repeat(73), 'x'.repeat(73))).toEqual({ password: 'Use at most 72 characters.' })
    expect(checkNewAccount('ann@example.com', 'x'.repeat(100))).toEqual({ password: 'Use at most 72 characters.' })
    // bcrypt counts bytes: 40 × "é" is 80 of them
    expect(checkNewPassword('é'.repeat(40), 'é'.repeat(40)).password).toMatch(/^Too long: accented letters and emoji count as 2 to 4/)
  })
})
