import { describe, expect, it } from 'vitest'

import { checkNewPassword, MIN_PASSWORD_LENGTH } from './form'

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
})
