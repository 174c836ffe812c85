// Who the client is, for every per-IP limit and for auth.sessions.ip: the TCP peer; behind a trusted proxy the
// address in its X-Forwarded-For (walked from the right); with the secret key, Sb-Forwarded-For.
// The tests' sockets connect from 127.0.0.2 to act as the proxy (the web app's server) and from 127.0.0.1 as a
// client that reaches localbase directly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@supabase/supabase-js';
import { DEFAULT_RATE_LIMITS, DEFAULT_SECRET_KEY } from '../src/index.ts';
import {
  codeOf,
  fetchFrom,
  httpRequest,
  jwtPayload,
  raw,
  startTestServer,
  uniqueEmail,
  type Localbase,
  type RawRequest,
} from './helpers.ts';

const PROXY = '127.0.0.2';
const DIRECT = '127.0.0.1';

interface Tokens {
  access_token: string;
  refresh_token: string;
}

/** A session for a new (or existing) user by an admin-generated magic link: no password hashing, so it is cheap. */
async function magicSession(lb: Localbase, email: string, via: RawRequest = {}): Promise<Tokens> {
  const link = await raw(lb, '/auth/v1/admin/generate_link', {
    apikey: lb.serviceRoleKey,
    bearer: lb.serviceRoleKey,
    body: { type: 'magiclink', email },
  });
  expect(link.status, link.text).toBe(200);
  const tokenHash = (link.json as { hashed_token: string }).hashed_token;
  const verified = await raw(lb, '/auth/v1/verify', { ...via, body: { type: 'magiclink', token_hash: tokenHash } });
  expect(verified.status, verified.text).toBe(200);
  return verified.json as Tokens;
}

/** The address auth.sessions recorded for the session of an access token. */
async function sessionIp(lb: Localbase, accessToken: string): Promise<unknown> {
  const r = await lb.db.query('select ip from auth.sessions where id = $1', [jwtPayload(accessToken).session_id]);
  return r.rows[0]?.ip;
}

function refresh(lb: Localbase, refreshToken: string, via: RawRequest = {}) {
  return raw(lb, '/auth/v1/token?grant_type=refresh_token', { ...via, body: { refresh_token: refreshToken } });
}

describe('behind a trusted proxy (--trusted-proxies, X-Forwarded-For)', () => {
  let lb: Localbase;

  beforeAll(async () => {
    lb = await startTestServer({
      trustedProxies: [PROXY, '10.0.0.0/8', 'fd00::/8'],
      rateLimits: { tokenRefresh: DEFAULT_RATE_LIMITS.tokenRefresh },
    });
  });

  afterAll(async () => {
    await lb?.stop();
  });

  it(`170 users refreshing through the web server: nobody gets 429 (${DEFAULT_RATE_LIMITS.tokenRefresh} per address)`, async () => {
    const users: Tokens[] = [];
    for (let i = 0; i < 170; i++) users.push(await magicSession(lb, uniqueEmail(`proxied-${i}`)));
    const statuses: number[] = [];
    for (const [i, user] of users.entries()) {
      const res = await refresh(lb, user.refresh_token, {
        localAddress: PROXY,
        headers: { 'x-forwarded-for': `203.0.113.${i}` },
      });
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  }, 120_000);

  it('a client connecting directly cannot escape its limit with its own X-Forwarded-For', async () => {
    let { refresh_token: token } = await magicSession(lb, uniqueEmail('direct'));
    for (let i = 0; i < DEFAULT_RATE_LIMITS.tokenRefresh; i++) {
      const res = await refresh(lb, token, { localAddress: DIRECT, headers: { 'x-forwarded-for': `198.51.100.${i % 250}` } });
      expect(res.status, `refresh #${i + 1}: ${res.text}`).toBe(200);
      token = (res.json as Tokens).refresh_token;
    }
    const limited = await refresh(lb, token, { localAddress: DIRECT, headers: { 'x-forwarded-for': '192.0.2.77' } });
    expect([limited.status, codeOf(limited)]).toEqual([429, 'over_request_rate_limit']);
    // The same token through the proxy, for a user at another address, is not limited.
    const proxied = await refresh(lb, token, { localAddress: PROXY, headers: { 'x-forwarded-for': '192.0.2.77' } });
    expect(proxied.status).toBe(200);
  }, 60_000);

  it('sessions record the client address: X-Forwarded-For walked from the right past trusted proxies', async () => {
    const cases: Array<[string, Record<string, string>, string]> = [
      ['one hop', { 'x-forwarded-for': '198.51.100.1' }, '198.51.100.1'],
      ['a forged leftmost entry is ignored', { 'x-forwarded-for': '6.6.6.6, 198.51.100.2' }, '198.51.100.2'],
      ['trusted proxies on the right are skipped', { 'x-forwarded-for': '6.6.6.6, 198.51.100.3, 10.1.2.3, fd00::7' }, '198.51.100.3'],
      ['an invalid entry where the client should be: the proxy itself', { 'x-forwarded-for': '198.51.100.4, not-an-ip' }, PROXY],
      ['an empty entry: the proxy itself', { 'x-forwarded-for': '198.51.100.4, ' }, PROXY],
      ['no header: the proxy itself', {}, PROXY],
      ['every entry trusted: the leftmost', { 'x-forwarded-for': '10.9.9.9, 10.1.1.1' }, '10.9.9.9'],
      ['IPv4-mapped IPv6 is IPv4', { 'x-forwarded-for': '::ffff:198.51.100.5' }, '198.51.100.5'],
      ['IPv6 in canonical form', { 'x-forwarded-for': '2001:DB8:0:0::1' }, '2001:db8::1'],
      ['IPv4 with a port', { 'x-forwarded-for': '198.51.100.6:4711' }, '198.51.100.6'],
      ['bracketed IPv6 with a port', { 'x-forwarded-for': '[2001:db8::2]:443' }, '2001:db8::2'],
    ];
    for (const [what, headers, expected] of cases) {
      const s = await magicSession(lb, uniqueEmail('xff'), { localAddress: PROXY, headers });
      expect(await sessionIp(lb, s.access_token), what).toBe(expected);
    }
    // An untrusted peer's header is not read at all.
    const direct = await magicSession(lb, uniqueEmail('xff'), { localAddress: DIRECT, headers: { 'x-forwarded-for': '198.51.100.9' } });
    expect(await sessionIp(lb, direct.access_token)).toBe(DIRECT);
  });

  it('several X-Forwarded-For lines are one list, in order', async () => {
    const link = await raw(lb, '/auth/v1/admin/generate_link', {
      apikey: lb.serviceRoleKey,
      bearer: lb.serviceRoleKey,
      body: { type: 'magiclink', email: uniqueEmail('xff-lines') },
    });
    const res = await httpRequest(`${lb.url}/auth/v1/verify`, {
      method: 'POST',
      localAddress: PROXY,
      headers: {
        apikey: lb.anonKey,
        'content-type': 'application/json',
        'x-forwarded-for': ['6.6.6.6', '198.51.100.8, 10.0.0.5'],
      },
      body: JSON.stringify({ type: 'magiclink', token_hash: (link.json as { hashed_token: string }).hashed_token }),
    });
    expect(res.status).toBe(200);
    const tokens = JSON.parse(res.body.toString()) as Tokens;
    expect(await sessionIp(lb, tokens.access_token)).toBe('198.51.100.8');
  });

  it('Sb-Forwarded-For with the secret key takes precedence over X-Forwarded-For', async () => {
    const s = await magicSession(lb, uniqueEmail('sbff-first'), {
      localAddress: PROXY,
      apikey: DEFAULT_SECRET_KEY,
      headers: { 'x-forwarded-for': '198.51.100.10', 'sb-forwarded-for': '192.0.2.10' },
    });
    expect(await sessionIp(lb, s.access_token)).toBe('192.0.2.10');
  });
});

describe('Sb-Forwarded-For (hosted Supabase IP address forwarding)', () => {
  const LIMIT = 3;
  let lb: Localbase;

  beforeAll(async () => {
    lb = await startTestServer({ rateLimits: { tokenRefresh: LIMIT } });
  });

  afterAll(async () => {
    await lb?.stop();
  });

  /** Refreshes one session `n` times with the given request options; returns the statuses and the last token. */
  async function refreshes(n: number, via: RawRequest, token?: string): Promise<{ statuses: number[]; token: string }> {
    let current = token ?? (await magicSession(lb, uniqueEmail('sbff'))).refresh_token;
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await refresh(lb, current, via);
      statuses.push(res.status);
      if (res.status === 200) current = (res.json as Tokens).refresh_token;
    }
    return { statuses, token: current };
  }

  it('with the anon key the header is ignored: the socket address counts', async () => {
    let n = 0;
    const statuses: number[] = [];
    let token = (await magicSession(lb, uniqueEmail('sbff-anon'))).refresh_token;
    for (let i = 0; i <= LIMIT; i++) {
      const r = await refreshes(1, { headers: { 'sb-forwarded-for': `192.0.2.${++n}` } }, token);
      statuses.push(...r.statuses);
      token = r.token;
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('with the secret key it counts per forwarded address (sb_secret_ key and service_role JWT)', async () => {
    const a = await refreshes(LIMIT + 1, { apikey: DEFAULT_SECRET_KEY, headers: { 'sb-forwarded-for': '198.51.100.20' } });
    expect(a.statuses).toEqual([200, 200, 200, 429]);
    // Another user behind the same server, with the service_role JWT as apikey and a leftmost-first list.
    const b = await refreshes(LIMIT, {
      apikey: lb.serviceRoleKey,
      headers: { 'sb-forwarded-for': '198.51.100.21, 198.51.100.20' },
    });
    expect(b.statuses).toEqual([200, 200, 200]);
  });

  it('an invalid Sb-Forwarded-For is ignored (the socket address, exhausted above, counts)', async () => {
    const r = await refreshes(1, { apikey: DEFAULT_SECRET_KEY, headers: { 'sb-forwarded-for': 'not-an-ip' } });
    expect(r.statuses).toEqual([429]);
  });

  it('IPv4-mapped addresses are IPv4; IPv6 clients count by their /64', async () => {
    const via = (ip: string): RawRequest => ({ apikey: DEFAULT_SECRET_KEY, headers: { 'sb-forwarded-for': ip } });
    let token = (await magicSession(lb, uniqueEmail('sbff-v4'))).refresh_token;
    const mapped: number[] = [];
    for (const ip of ['198.51.100.30', '::ffff:198.51.100.30', '::ffff:c633:641e', '198.51.100.30']) {
      const r = await refreshes(1, via(ip), token);
      mapped.push(...r.statuses);
      token = r.token;
    }
    expect(mapped).toEqual([200, 200, 200, 429]);

    const v6: number[] = [];
    for (const ip of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:DB8:1:2:ffff::9', '2001:db8:1:2:0:0:0:3', '2001:db8:1:3::1']) {
      const r = await refreshes(1, via(ip), token);
      v6.push(...r.statuses);
      token = r.token;
    }
    expect(v6).toEqual([200, 200, 200, 429, 200]);
  });

  it('sessions record the forwarded address', async () => {
    const s = await magicSession(lb, uniqueEmail('sbff-session'), {
      apikey: DEFAULT_SECRET_KEY,
      headers: { 'sb-forwarded-for': '2001:db8::abc' },
    });
    expect(await sessionIp(lb, s.access_token)).toBe('2001:db8::abc');
  });

  it("the web app's server calls: secret apikey + the user's bearer act exactly as with the anon key", async () => {
    const proxy = fetchFrom(PROXY);
    const alice = await magicSession(lb, uniqueEmail('web-alice'));
    const bob = await magicSession(lb, uniqueEmail('web-bob'));
    const aliceId = jwtPayload(alice.access_token).sub;
    const server = (ip: string): RawRequest => ({
      localAddress: PROXY,
      apikey: DEFAULT_SECRET_KEY,
      headers: { 'sb-forwarded-for': ip },
    });

    // GET /user: the user's token decides who the caller is, with either key (fast path and app path).
    for (const path of ['/auth/v1/user', '/auth/v1/user?x=1']) {
      const withSecret = await raw(lb, path, { ...server('192.0.2.50'), bearer: alice.access_token });
      const withAnon = await raw(lb, path, { bearer: alice.access_token });
      expect([withSecret.status, withSecret.json]).toEqual([200, withAnon.json]);
      expect((withSecret.json as { id: string }).id).toBe(aliceId);
    }
    // Without a user token the secret key is not a user.
    const noBearer = await raw(lb, '/auth/v1/user', server('192.0.2.50'));
    expect(noBearer.status).toBe(401);
    expect(codeOf(noBearer)).toBe('no_authorization');

    // supabase-js on the server with the secret key: getUser(jwt) is that user.
    const admin = createClient(lb.url, DEFAULT_SECRET_KEY, {
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
      global: { fetch: proxy, headers: { 'sb-forwarded-for': '192.0.2.51' } },
    });
    const got = await admin.auth.getUser(alice.access_token);
    expect(got.error).toBeNull();
    expect(got.data.user?.id).toBe(aliceId);

    // Refresh with no Authorization, and with the anon key as bearer: the refresh token decides.
    const r1 = await refresh(lb, alice.refresh_token, server('192.0.2.52'));
    expect(r1.status, r1.text).toBe(200);
    expect(jwtPayload((r1.json as Tokens).access_token).sub).toBe(aliceId);
    const r2 = await refresh(lb, (r1.json as Tokens).refresh_token, { ...server('192.0.2.52'), bearer: lb.anonKey });
    expect(r2.status, r2.text).toBe(200);
    const aliceNow = r2.json as Tokens;
    expect(jwtPayload(aliceNow.access_token).sub).toBe(aliceId);

    // POST /logout signs out the bearer's user only (scope local: that session).
    const out = await raw(lb, '/auth/v1/logout?scope=local', { ...server('192.0.2.52'), method: 'POST', bearer: aliceNow.access_token });
    expect(out.status).toBe(204);
    expect((await refresh(lb, aliceNow.refresh_token, server('192.0.2.54'))).status).toBe(400);
    expect((await raw(lb, '/auth/v1/user', { bearer: bob.access_token })).status).toBe(200);
    expect((await refresh(lb, bob.refresh_token, server('192.0.2.54'))).status).toBe(200);

    // The secret key does not make a user an admin: the admin API still wants a service_role bearer.
    const notAdmin = await raw(lb, '/auth/v1/admin/users', { ...server('192.0.2.53'), bearer: bob.access_token });
    expect(notAdmin.status).toBe(403);
  });
});

describe('LOCALBASE_SB_FORWARDED_FOR=0', () => {
  let lb: Localbase;

  beforeAll(async () => {
    lb = await startTestServer({ sbForwardedFor: false });
  });

  afterAll(async () => {
    await lb?.stop();
  });

  it('the header is ignored even with the secret key', async () => {
    const s = await magicSession(lb, uniqueEmail('sbff-off'), {
      apikey: DEFAULT_SECRET_KEY,
      headers: { 'sb-forwarded-for': '192.0.2.60' },
    });
    expect(await sessionIp(lb, s.access_token)).toBe(DIRECT);
  });
});

describe('settings', () => {
  it('a bad trusted proxy or header name stops the start with a message naming it', async () => {
    await expect(startTestServer({ trustedProxies: ['10.0.0.0/33'] })).rejects.toThrow(/"10\.0\.0\.0\/33" is not an IP address or CIDR/);
    await expect(startTestServer({ trustedProxies: ['proxy.local'] })).rejects.toThrow(/"proxy\.local"/);
    await expect(startTestServer({ clientIpHeader: 'X Forwarded For' })).rejects.toThrow(/not a header name/);
  });
});
