import { describe, expect, it } from 'vitest'
import { groupDigits } from './digits'
import { seededRandom } from './seeded-random'

describe('groupDigits', () => {
  it('groups digits as toLocaleString("en-US") does', () => {
    const next = seededRandom(42)
    const numbers = [0, 1, 12, 999, 1000, 20_000, 100_000, 1_000_000, -1, -1000, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]
    for (let i = 0; i < 5000; i++) numbers.push((1 + Math.floor(next() ** 4 * (Number.MAX_SAFE_INTEGER - 1))) * (next() < 0.1 ? -1 : 1))
    for (const n of numbers) expect([n, groupDigits(n)]).toEqual([n, n.toLocaleString('en-US')])
  })
  it('leaves what is not a safe whole number as String() writes it', () => {
    expect(groupDigits(1.5)).toBe('1.5')
    expect(groupDigits(Number.NaN)).toBe('NaN')
  })
})
