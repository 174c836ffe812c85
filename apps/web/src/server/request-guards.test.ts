import { describe, expect, it } from 'vitest'

import { ApiLimitConfigError, crossSiteReason, jsonNestingExceeds, RateLimiter, readRateLimitRule } from './request-guards'

const h = (entries: Record<string, string>) => new Headers(entries)

describe('cross-site mutations', () => {
  it('lets same-origin browser requests and non-browser clients through', () => {
    expect(crossSiteReason(h({ host: 'app.example', origin: 'https://app.example', 'sec-fetch-site': 'same-origin' }))).toBeNull()
    expect(crossSiteReason(h({ host: 'app.example' }))).toBeNull()
    expect(crossSiteReason(h({ host: '127.0.0.1:3000', origin: 'http://127.0.0.1:3000' }))).toBeNull()
    // behind a proxy that rewrites Host
    expect(crossSiteReason(h({ host: 'internal:3000', 'x-forwarded-host': 'app.example', origin: 'https://app.example' }))).toBeNull()
  })

  it('refuses what a browser says comes from another site or origin', () => {
    expect(crossSiteReason(h({ host: 'app.example', 'sec-fetch-site': 'cross-site' }))).toMatch(/cross-site/)
    expect(crossSiteReason(h({ host: 'app.example', 'sec-fetch-site': 'same-site' }))).toMatch(/same-site/)
    expect(crossSiteReason(h({ host: 'app.example', origin: 'https://evil.example' }))).toMatch(/evil/)
    expect(crossSiteReason(h({ host: 'app.example', origin: 'null' }))).toMatch(/null/)
    expect(crossSiteReason(h({ host: 'app.example', origin: 'https://app.example.evil.example' }))).not.toBeNull()
    expect(crossSiteReason(h({ host: 'app.example', origin: '::garbage' }))).not.toBeNull()
  })
})

describe('rate limiter', () => {
  it('allows a burst, then one call per refill interval, and says how long to wait', () => {
    let now = 0
    const limiter = new RateLimiter({ burst: 3, perSecond: 0.5 }, () => now)
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 0])
    expect(limiter.take('a')).toBe(2)
    expect(limiter.take('b')).toBe(0) // someone else has their own budget
    now += 2000
    expect(limiter.take('a')).toBe(0)
    expect(limiter.take('a')).toBe(2)
    now += 60_000
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 0, 2])
  })

  it('says how long a spent budget must wait without taking from it', () => {
    let now = 0
    const limiter = new RateLimiter({ burst: 1, perSecond: 0.5 }, () => now)
    expect(limiter.wait('a')).toBe(0)
    expect(limiter.take('a')).toBe(0)
    expect([limiter.wait('a'), limiter.wait('a')]).toEqual([2, 2])
    now += 2000
    expect(limiter.wait('a')).toBe(0)
    expect(limiter.take('a')).toBe(0) // waiting took nothing
  })
})

describe('budget configuration', () => {
  const fallback = { burst: 120, perSecond: 5 }
  it('reads "<burst>/<per second>", "off" and unset', () => {
    expect(readRateLimitRule('X', undefined, fallback)).toBe(fallback)
    expect(readRateLimitRule('X', '30/0.5', fallback)).toEqual({ burst: 30, perSecond: 0.5 })
    expect(readRateLimitRule('X', 'off', fallback)).toBeNull()
  })
  it('refuses anything else, naming the variable', () => {
    for (const bad of ['120', '0/5', '10/0', 'lots', '-1/2']) {
      expect(() => readRateLimitRule('FOYER_API_QUERY_LIMIT', bad, fallback)).toThrow(ApiLimitConfigError)
    }
    expect(() => readRateLimitRule('FOYER_API_QUERY_LIMIT', 'lots', fallback)).toThrow(/FOYER_API_QUERY_LIMIT/)
  })
})

describe('JSON nesting', () => {
  it('counts arrays and objects, not brackets inside strings (escaped quotes included)', () => {
    expect(jsonNestingExceeds('{"a":[1,{"b":[]}]}', 4)).toBe(false)
    expect(jsonNestingExceeds('{"a":[1,{"b":[[]]}]}', 4)).toBe(true)
    expect(jsonNestingExceeds(`{"text":"${'['.repeat(50)}\\"${'{'.repeat(50)}"}`, 2)).toBe(false)
    expect(jsonNestingExceeds('"\\\\"[[[', 2)).toBe(true)
    expect(jsonNestingExceeds('null', 0)).toBe(false)
  })

  it('tells a very deep text from one within the bound', () => {
    const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`
    expect(jsonNestingExceeds(deep, 100)).toBe(true)
    expect(jsonNestingExceeds(deep, 1_000_000)).toBe(false)
  })
})
