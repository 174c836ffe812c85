import { describe, expect, it } from 'vitest';
import { ClientAddressResolver, normaliseIp, parseTrustedProxies, rateLimitKey } from './ip.ts';

describe('normaliseIp', () => {
  it('one spelling per address', () => {
    expect(normaliseIp('198.51.100.7')).toBe('198.51.100.7');
    expect(normaliseIp('::ffff:198.51.100.7')).toBe('198.51.100.7');
    expect(normaliseIp('::FFFF:c633:6407')).toBe('198.51.100.7');
    expect(normaliseIp('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(normaliseIp('fe80::1%eth0')).toBe('fe80::1');
    for (const bad of ['', 'localhost', '1.2.3', '01.2.3.4', '1.2.3.4:80', '2001:db8::g']) expect(normaliseIp(bad)).toBeUndefined();
  });
});

describe('rateLimitKey', () => {
  it('IPv4 as is; IPv6 by its /64, whatever the spelling', () => {
    expect(rateLimitKey('198.51.100.7')).toBe('198.51.100.7');
    const key = rateLimitKey('2001:db8:1:2::1');
    expect(key).toBe('2001:db8:1:2::/64');
    for (const same of ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::1.2.3.4']) expect(rateLimitKey(normaliseIp(same)!)).toBe(key);
    expect(rateLimitKey('2001:db8:1:3::1')).not.toBe(key);
    expect(rateLimitKey('::1')).toBe('0:0:0:0::/64');
    expect(rateLimitKey('1:2:3:4:5:6:7:8')).toBe('1:2:3:4::/64');
    expect(rateLimitKey('unknown')).toBe('unknown');
  });
});

describe('parseTrustedProxies', () => {
  it('IPs and CIDRs of both families; anything else names the bad entry', () => {
    const list = parseTrustedProxies(['127.0.0.1', ' 10.0.0.0/8 ', 'fd00::/8', '::1', '']);
    expect(list.check('10.200.0.1', 'ipv4')).toBe(true);
    expect(list.check('11.0.0.1', 'ipv4')).toBe(false);
    expect(list.check('fd12::3', 'ipv6')).toBe(true);
    expect(list.check('127.0.0.2', 'ipv4')).toBe(false);
    for (const bad of ['10.0.0.0/33', 'fd00::/129', '10.0.0.0/', '10.0.0.0/x', 'proxy.local', '10.0.0.0/8/8'])
      expect(() => parseTrustedProxies([bad])).toThrow(bad);
  });
});

describe('ClientAddressResolver', () => {
  const resolver = new ClientAddressResolver({
    trustedProxies: ['127.0.0.2', '10.0.0.0/8'],
    clientIpHeader: 'X-Real-Client',
    sbForwardedFor: true,
  });
  const headers = (h: Record<string, string>) => (name: string) => h[name];

  it('reads the configured header, only from a trusted peer', () => {
    expect(resolver.resolve('::ffff:127.0.0.2', headers({ 'x-real-client': '198.51.100.1' }), false)).toBe('198.51.100.1');
    expect(resolver.resolve('127.0.0.2', headers({ 'x-forwarded-for': '198.51.100.1' }), false)).toBe('127.0.0.2');
    expect(resolver.resolve('127.0.0.1', headers({ 'x-real-client': '198.51.100.1' }), false)).toBe('127.0.0.1');
    expect(resolver.resolve(undefined, headers({}), false)).toBe('unknown');
  });

  it('Sb-Forwarded-For: only with the secret key, leftmost value, invalid ignored, before the proxy header', () => {
    const h = headers({ 'sb-forwarded-for': '192.0.2.1, 192.0.2.2', 'x-real-client': '198.51.100.1' });
    expect(resolver.resolve('127.0.0.2', h, true)).toBe('192.0.2.1');
    expect(resolver.resolve('127.0.0.2', h, false)).toBe('198.51.100.1');
    expect(resolver.resolve('127.0.0.1', headers({ 'sb-forwarded-for': 'nope' }), true)).toBe('127.0.0.1');
  });
});
