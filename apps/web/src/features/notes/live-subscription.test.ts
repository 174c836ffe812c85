import { describe, expect, it } from 'vitest'

import { usableToken } from './live-subscription'

/** An unsigned JWT-shaped token with these claims (the check reads `exp` only; Realtime verifies the signature). */
const token = (claims: Record<string, unknown>): string =>
  ['{"alg":"ES256","typ":"JWT"}', JSON.stringify(claims)].map((part) => Buffer.from(part).toString('base64url')).join('.') + '.sig'

describe('usableToken: whether a channel the server closed may join again with the client token', () => {
  const now = Date.UTC(2026, 10, 24, 18)

  it('takes a token that is still valid for more than a few seconds', () => {
    expect(usableToken(token({ role: 'authenticated', exp: now / 1000 + 120 }), now)).toBe(true)
  })

  it('refuses an expired token, one about to expire, and none at all (Realtime would refuse the join)', () => {
    expect(usableToken(token({ role: 'authenticated', exp: now / 1000 - 1 }), now)).toBe(false)
    expect(usableToken(token({ role: 'authenticated', exp: now / 1000 + 3 }), now)).toBe(false)
    expect(usableToken(null, now)).toBe(false)
  })

  it('refuses what is not a JWT with an exp', () => {
    expect(usableToken('sb_publishable_abc', now)).toBe(false)
    expect(usableToken('a.%%%.c', now)).toBe(false)
    expect(usableToken(token({ role: 'anon' }), now)).toBe(false)
  })

  it('reads user metadata in any script without failing', () => {
    expect(usableToken(token({ exp: now / 1000 + 600, user_metadata: { name: 'Zoë 東京 🙂' } }), now)).toBe(true)
  })
})
