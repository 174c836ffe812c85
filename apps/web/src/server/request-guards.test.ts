import { describe, expect, it } from 'vitest'

import { ApiLimitConfigError, crossSiteReason, RateLimiter, readRateLimitRule } from './request-guards'

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
