import { describe, expect, it } from 'vitest'

import { addressBudgetKey, clientAddressOf, normaliseAddress, parseTrustedProxies, TrustedProxiesError } from './client-address'

describe('client address behind trusted proxies', () => {
  const none = parseTrustedProxies(undefined)
  const lb = parseTrustedProxies('10.0.0.0/8, 2001:db8::/32, 192.0.2.7')

  it('without trusted proxies the socket peer is the client, whatever X-Forwarded-For says', () => {
    expect(clientAddressOf('203.0.113.5', '198.51.100.1', none)).toBe('203.0.113.5')
    expect(clientAddressOf('::ffff:203.0.113.5', undefined, none)).toBe('203.0.113.5')
  })

  it('a direct client that forges X-Forwarded-For keeps its own address', () => {
    expect(clientAddressOf('203.0.113.5', '1.2.3.4', lb)).toBe('203.0.113.5')
  })

  it('behind a trusted proxy the rightmost untrusted hop is the client', () => {
    expect(clientAddressOf('10.1.2.3', '198.51.100.1', lb)).toBe('198.51.100.1')
    // the client prepended a fake hop; the proxy appended the real one
    expect(clientAddressOf('10.1.2.3', '6.6.6.6, 198.51.100.1', lb)).toBe('198.51.100.1')
    // two trusted proxies in a row, several header lines
    expect(clientAddressOf('10.1.2.3', ['6.6.6.6, 198.51.100.1', '10.9.9.9'], lb)).toBe('198.51.100.1')
    expect(clientAddressOf('192.0.2.7', '2001:DB8:0:0:0:0:0:1, 2001:db9::1', lb)).toBe('2001:db9::1')
  })

  it('a chain of trusted proxies only, or a malformed hop, stops at the last trustworthy address', () => {
    expect(clientAddressOf('10.1.2.3', '10.4.4.4', lb)).toBe('10.4.4.4')
    expect(clientAddressOf('10.1.2.3', undefined, lb)).toBe('10.1.2.3')
    expect(clientAddressOf('10.1.2.3', 'not-an-ip', lb)).toBe('10.1.2.3')
    expect(clientAddressOf('10.1.2.3', '6.6.6.6, garbage, 10.4.4.4', lb)).toBe('10.4.4.4')
  })

  it('normalises ports, brackets and IPv4-mapped IPv6', () => {
    expect(normaliseAddress('[2001:DB8::1]:443')).toBe('2001:db8::1')
    expect(normaliseAddress('192.0.2.1:8080')).toBe('192.0.2.1')
    expect(normaliseAddress('::ffff:192.0.2.1')).toBe('192.0.2.1')
    expect(normaliseAddress('unknown')).toBeNull()
  })

  it('"loopback" trusts 127.0.0.0/8 and ::1; a bad entry is a configuration error naming it', () => {
    const loopback = parseTrustedProxies('loopback')
    expect(loopback.has('127.0.0.2')).toBe(true)
    expect(loopback.has('::1')).toBe(true)
    expect(loopback.has('10.0.0.1')).toBe(false)
    expect(() => parseTrustedProxies('10.0.0.0/33')).toThrow(TrustedProxiesError)
    expect(() => parseTrustedProxies('proxy.example')).toThrow(/"proxy.example"/)
  })
})

describe('addressBudgetKey', () => {
  it('keeps an IPv4 address whole and keys an IPv6 one by its /64, however it is written', () => {
    expect(addressBudgetKey('192.0.2.1')).toBe('192.0.2.1')
    expect(addressBudgetKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64')
    expect(addressBudgetKey('2001:0DB8:0001:0002:abcd:ef01:2345:6789')).toBe('2001:db8:1:2::/64')
    expect(addressBudgetKey('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(addressBudgetKey('::1')).toBe('0:0:0:0::/64')
    expect(addressBudgetKey('::')).toBe('0:0:0:0::/64')
    expect(addressBudgetKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    // an IPv4 client behind NAT64 is that IPv4 client, not everyone behind the translator
    expect(addressBudgetKey('64:ff9b::192.0.2.1')).toBe('64:ff9b::192.0.2.1')
  })
})
