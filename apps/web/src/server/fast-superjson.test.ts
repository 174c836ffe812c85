import superjson from 'superjson'
import { describe, expect, it } from 'vitest'

import { seededRandom } from '../lib/seeded-random'
import { fastSuperjson, serialize } from './fast-superjson'

/** The result as sent (JSON), or what was thrown. Compared with toEqual: the order of `meta.values` keys may differ. */
function outcome(fn: () => unknown): unknown {
  try {
    return { sent: JSON.parse(JSON.stringify(fn())) as unknown }
  } catch (error) {
    return { threw: (error as Error).message }
  }
}

function expectSameAsSuperjson(value: unknown) {
  expect(outcome(() => serialize(value))).toEqual(outcome(() => superjson.serialize(value)))
}

const KEYS = ['id', 'title', 'a.b', 'back\\slash', 'x\\.y', '0', '12', 'createdAt', '', 'ü', '__proto__', 'constructor', 'toString']

/** A random value of the shapes an API answers, with now and then one superjson must handle itself. */
function generate(next: () => number, depth: number, shared: object[]): unknown {
  const pick = next()
  if (depth > 3 || pick < 0.35) {
    const leaf = Math.floor(next() * 16)
    switch (leaf) {
      case 0:
        return null
      case 1:
        return next() < 0.5
      case 2:
        return Math.floor(next() * 1e6) - 5e5
      case 3:
        return next() * 10
      case 4:
        return `s${Math.floor(next() * 100)}.x`
      case 5:
      case 6:
        return new Date(Math.floor(next() * 2e12))
      case 7:
        return next() < 0.97 ? new Date(0) : new Date(NaN)
      case 8:
        return next() < 0.9 ? 'plain' : undefined
      case 9:
        return next() < 0.9 ? 7 : [NaN, Infinity, -Infinity, -0][Math.floor(next() * 4)]
      case 10:
        return next() < 0.9 ? 'x' : next() < 0.5 ? BigInt(5) : new Map([['k', 1]])
      case 11: {
        // the same object twice: superjson records the referential equality
        if (shared.length > 0 && next() < 0.5) return shared[Math.floor(next() * shared.length)]
        const date = new Date(1_700_000_000_000)
        shared.push(date)
        return date
      }
      default:
        return 'text'
    }
  }
  if (pick < 0.6) {
    const length = Math.floor(next() * 5)
    return Array.from({ length }, () => generate(next, depth + 1, shared))
  }
  const object: Record<string, unknown> = next() < 0.05 ? Object.create(null) : {}
  const count = Math.floor(next() * 5)
  for (let i = 0; i < count; i++) {
    const key = KEYS[Math.floor(next() * KEYS.length)] ?? 'k'
    // an own `__proto__` key, as JSON.parse makes it
    if (key === '__proto__') Object.defineProperty(object, key, { value: generate(next, depth + 1, shared), enumerable: true, configurable: true, writable: true })
    else object[key] = generate(next, depth + 1, shared)
  }
  return object
}

describe('fast superjson serialize', () => {
  it('gives superjson’s exact result for a page of notes (Dates in a list) and round-trips through superjson', () => {
    const page = {
      items: Array.from({ length: 20 }, (_, i) => ({
        id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        title: `Note ${i}`,
        pinned: i === 0,
        createdAt: new Date(1_700_000_000_000 + i),
        updatedAt: new Date(1_700_000_100_000 + i),
        excerpt: i % 3 === 0 ? null : `About ${i}…`,
      })),
      total: 10_000,
      page: 1,
      pageSize: 20,
    }
    expectSameAsSuperjson(page)
    const fast = serialize(page)
    expect(JSON.stringify(fast)).toBe(JSON.stringify(superjson.serialize(page))) // byte for byte
    expect(fast.meta?.values).toMatchObject({ 'items.0.createdAt': ['Date'], 'items.19.updatedAt': ['Date'] })
    expect(superjson.deserialize(JSON.parse(JSON.stringify(fast)))).toEqual(page)
  })

  it('matches superjson on the edge cases: roots, escaped keys, empty containers, no Dates', () => {
    for (const value of [
      null,
      'text',
      42,
      true,
      new Date(0),
      [],
      {},
      [new Date(1)],
      { 'a.b': { 'c\\d': new Date(2) } },
      { nested: { deeper: [{ when: new Date(3) }, null] } },
      Object.assign(Object.create(null) as object, { a: new Date(4) }),
      { id: 'x', count: 3, ok: false },
    ])
      expectSameAsSuperjson(value)
  })

  it('leaves to superjson what it must handle itself, with the same result or the same error', () => {
    const shared = { x: 1 }
    const date = new Date(5)
    class Point {
      x = 1
    }
    const sparse: unknown[] = [1]
    sparse[2] = 3
    const withProto = JSON.parse('{"__proto__": {"polluted": true}}') as object
    for (const value of [
      { a: undefined },
      [undefined],
      { n: NaN },
      { i: -Infinity },
      { z: -0 },
      { big: BigInt(1) },
      { m: new Map([[1, 2]]) },
      { s: new Set([1]) },
      { r: /x/g },
      { e: new Error('boom') },
      { p: new Point() },
      { bad: new Date(NaN) },
      { a: shared, b: shared },
      { a: date, b: [date] },
      sparse,
      withProto,
      { constructor: 1 },
      undefined,
    ])
      expectSameAsSuperjson(value)
  })

  it('matches superjson on 3,000 generated values', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const value = generate(seededRandom(seed), 0, [])
      expect({ seed, result: outcome(() => serialize(value)) }).toEqual({ seed, result: outcome(() => superjson.serialize(value)) })
    }
  })

  it('deserializes with superjson', () => {
    const payload = superjson.serialize({ when: new Date(6), list: [new Set([1])] })
    expect(fastSuperjson.deserialize(payload)).toEqual({ when: new Date(6), list: [new Set([1])] })
  })
})
