import { describe, expect, it } from 'vitest'

import { checkNewAccount } from './form'
import { readableGuestSaveError, readableGuestStartError, waitFromMessage } from './guest-errors'

describe('readableGuestStartError', () => {
  it('explains that guest sessions are switched off on the server (GoTrue anonymous_provider_disabled, 422)', () => {
    const text = readableGuestStartError({ code: 'anonymous_provider_disabled', status: 422, message: 'Anonymous sign-ins are disabled' })
    expect(text).toMatch(/without an account is switched off/)
    expect(text).toMatch(/Create an account/)
  })

  it('says when to try again after a rate limit, from the server message when it says', () => {
    expect(readableGuestStartError({ code: 'over_request_rate_limit', status: 429, message: 'Request rate limit reached' })).toBe(
      'Too many guest sessions were started from your network in the last hour. Try again later, or create an account.',
    )
    expect(readableGuestStartError({ status: 429, message: 'Too many requests. Try again in 42 seconds.' })).toMatch(/Try again in 42 seconds, or create/)
    expect(readableGuestStartError({ status: 429, message: 'retry in 1 minute' })).toMatch(/Try again in 1 minute,/)
  })

  it('falls back to the auth messages (network failure, server error), never to nothing', () => {
    expect(readableGuestStartError({ name: 'AuthRetryableFetchError', message: 'Failed to fetch' })).toMatch(/Could not reach/)
    expect(readableGuestStartError({ status: 500 })).toMatch(/had a problem/)
    expect(readableGuestStartError(null)).toBe('Something went wrong. Try again.')
  })
})

describe('readableGuestSaveError', () => {
  it('puts a taken address beside the email field and does not send the guest to sign in (that would leave the notes)', () => {
    const readable = readableGuestSaveError({ code: 'email_exists', status: 422, message: 'A user with this email address has already been registered' })
    expect(readable.field).toBe('email')
    expect(readable.message).toMatch(/already belongs to an account/)
    expect(readable.message).not.toMatch(/Sign in instead/)
  })

  it('keeps the auth messages for the rest (weak password beside the password, mail rate limit)', () => {
    expect(readableGuestSaveError({ code: 'weak_password', reasons: ['length'] })).toEqual({ message: 'Choose a stronger password: it is too short.', field: 'password' })
    expect(readableGuestSaveError({ code: 'over_email_send_rate_limit', status: 429 }).message).toMatch(/Too many emails/)
  })
})

describe('waitFromMessage', () => {
  it('reads seconds, minutes or hours with the right plural', () => {
    expect(waitFromMessage('For security purposes, you can only request this after 59 seconds.')).toBe('59 seconds')
    expect(waitFromMessage('in 1 second')).toBe('1 second')
    expect(waitFromMessage('in 2 Hours')).toBe('2 hours')
    expect(waitFromMessage('no figure')).toBeUndefined()
    expect(waitFromMessage(undefined)).toBeUndefined()
  })
})

describe('checkNewAccount', () => {
  it('asks for a valid email and a password of at least 6 characters before any call', () => {
    expect(checkNewAccount('', '')).toEqual({ email: 'Enter your email address.', password: 'Use at least 6 characters.' })
    expect(checkNewAccount('not-an-email', 'longenough')).toEqual({ email: 'Enter a valid email address, like name@example.com.' })
    expect(checkNewAccount(' me@example.com ', '12345')).toEqual({ password: 'Use at least 6 characters.' })
    expect(checkNewAccount('me@example.com', '123456')).toEqual({})
  })
})
