// Raw HTTP: apikey enforcement, bad bodies, huge bodies, unknown routes, CORS, the API-version header, and a
// bounded fuzz loop over every auth endpoint asserting 4xx-with-a-code, never a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import {
  API_VERSION,
  anonClient,
  PASSWORD,
  codeOf,
  raw,
  serviceClient,
  signedInClient,
  startTestServer,
  uniqueEmail,
  type Localbase,
  type RawResponse,
} from './helpers.ts';

let lb: Localbase;

beforeAll(async () => {
  // startTestServer raises the rate limits: the fuzz loop must reach the handlers, not the rate limiter.
  lb = await startTestServer();
});

afterAll(async () => {
  await lb?.stop();
});

function expectErrorWithCode(res: RawResponse, status: number | number[]): void {
  const statuses = Array.isArray(status) ? status : [status];
  expect(statuses, `status ${res.status}, body ${res.text}`).toContain(res.status);
  expect(typeof codeOf(res), `body ${res.text}`).toBe('string');
  expect(typeof (res.json as { message?: unknown }).message, `body ${res.text}`).toBe('string');
}

describe('apikey', () => {
  it('a request without apikey → 401 no_api_key', async () => {
    const res = await raw(lb, '/auth/v1/settings', { apikey: null });
    expectErrorWithCode(res, 401);
    expect(codeOf(res)).toBe('no_api_key');
    const post = await raw(lb, '/auth/v1/signup', { apikey: null, body: { email: uniqueEmail(), password: PASSWORD } });
    expectErrorWithCode(post, 401);
  });

  it('the open routes of the gateway need none: GET /auth/v1/health (and the key set, see signing-keys.test.ts)', async () => {
    const health = await raw(lb, '/auth/v1/health', { apikey: null });
    expect(health.status, health.text).toBe(200);
  });

  it('a wrong apikey → 401 invalid_api_key (garbage, or a JWT signed with another secret)', async () => {
    const forged = await new SignJWT({ role: 'anon', iss: 'supabase-demo' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('not-the-secret-not-the-secret-not-the-secret'));
    for (const key of ['nope', forged, `${lb.anonKey}x`]) {
      const res = await raw(lb, '/auth/v1/settings', { apikey: key });
      expectErrorWithCode(res, 401);
      expect(codeOf(res)).toBe('invalid_api_key');
    }
  });

  it('the anon key, the service key and ?apikey= are accepted', async () => {
    expect((await raw(lb, '/auth/v1/settings')).status).toBe(200);
    expect((await raw(lb, '/auth/v1/settings', { apikey: lb.serviceRoleKey })).status).toBe(200);
    expect((await raw(lb, `/auth/v1/settings?apikey=${lb.anonKey}`, { apikey: null })).status).toBe(200);
  });
});

describe('bad request bodies', () => {
  it('malformed JSON → 400 with a code', async () => {
    for (const path of ['/auth/v1/signup', '/auth/v1/token?grant_type=password', '/auth/v1/otp', '/auth/v1/verify']) {
      const res = await raw(lb, path, { body: '{"email": "a@b.c", ' });
      expectErrorWithCode(res, 400);
    }
  });

  it('wrong types → 400 or 422 with a code', async () => {
    const cases: [string, unknown][] = [
      ['/auth/v1/signup', { email: 123, password: ['x'] }],
      ['/auth/v1/signup', { email: uniqueEmail(), password: PASSWORD, data: 'not-an-object' }],
      ['/auth/v1/token?grant_type=password', { email: {}, password: 5 }],
      ['/auth/v1/token?grant_type=refresh_token', { refresh_token: 42 }],
      ['/auth/v1/recover', { email: null }],
      ['/auth/v1/otp', { email: true }],
      ['/auth/v1/verify', { type: 5, token_hash: [] }],
      ['/auth/v1/resend', { type: 'signup', email: { a: 1 } }],
      ['/auth/v1/signup', [1, 2, 3]],
      ['/auth/v1/signup', 'null'],
    ];
    for (const [path, body] of cases) {
      const res = await raw(lb, path, { body });
      expectErrorWithCode(res, [400, 422]);
    }
  });

  it("an empty body where GoTrue reads JSON → 400 bad_json with Go's message, as GoTrue; where it reads none, accepted", async () => {
    // An empty body was read as {}: sign-up answered 422 anonymous_provider_disabled, the others each their own
    // "… required" message, where GoTrue refuses the body itself.
    const expected = { status: 400, code: 'bad_json', message: 'Could not parse request body as JSON: unexpected end of JSON input' };
    const service = { apikey: lb.serviceRoleKey, bearer: lb.serviceRoleKey };
    const { client } = await signedInClient(lb);
    const token = (await client.auth.getSession()).data.session?.access_token;
    const cases: [string, { method?: string; bearer?: string; apikey?: string }][] = [
      ['/auth/v1/signup', {}],
      ['/auth/v1/token?grant_type=password', {}],
      ['/auth/v1/token?grant_type=refresh_token', {}],
      ['/auth/v1/token?grant_type=pkce', {}],
      ['/auth/v1/otp', {}],
      ['/auth/v1/recover', {}],
      ['/auth/v1/resend', {}],
      ['/auth/v1/verify', {}],
      ['/auth/v1/user', { method: 'PUT', bearer: token }],
      ['/auth/v1/invite', service],
      ['/auth/v1/admin/users', service],
      ['/auth/v1/admin/generate_link', service],
    ];
    for (const [path, opts] of cases) {
      for (const body of ['', '  \n']) {
        const res = await raw(lb, path, { ...opts, body });
        expect({ status: res.status, code: codeOf(res), message: (res.json as { message?: string }).message }, path).toEqual(expected);
      }
    }
    // GoTrue answers the grant type before it reads the body, and deletes a user whatever the body
    const grant = await raw(lb, '/auth/v1/token?grant_type=nope', { body: '' });
    expect([grant.status, codeOf(grant)]).toEqual([400, 'invalid_credentials']);
    const created = await serviceClient(lb).auth.admin.createUser({ email: uniqueEmail(), password: PASSWORD });
    const del = await raw(lb, `/auth/v1/admin/users/${created.data.user?.id}`, { ...service, method: 'DELETE', body: '' });
    expect(del.status).toBe(200);
  });

  it('JSON nested deeper than 100 levels → 400 bad_json, for sign-up and user metadata alike; the server keeps answering', async () => {
    const nested = (levels: number): unknown => {
      let v: unknown = 'x';
      for (let i = 0; i < levels; i++) v = { a: v };
      return v;
    };
    // 100 levels (the metadata object included) is accepted and given back whole
    const email = uniqueEmail();
    const ok = await anonClient(lb).auth.signUp({ email, password: PASSWORD, options: { data: { n: nested(98) } } });
    expect(ok.error).toBeNull();
    expect(JSON.stringify(ok.data.user?.user_metadata.n)).toBe(JSON.stringify(nested(98)));
    // deeper: a clear refusal (it used to be a 500 from 2000 levels, and a database that never answered again from 4000)
    for (const levels of [99, 2000, 4000]) {
      const deep = await anonClient(lb).auth.signUp({ email: uniqueEmail(), password: PASSWORD, options: { data: { n: nested(levels) } } });
      expect(deep.error?.status, `${levels} levels`).toBe(400);
      expect(deep.error?.code).toBe('bad_json');
      expect(deep.error?.message).toMatch(/nested more than 100 levels deep/);
    }
    const { client } = await signedInClient(lb);
    const update = await client.auth.updateUser({ data: { n: nested(4000) } });
    expect([update.error?.status, update.error?.code]).toEqual([400, 'bad_json']);
    expect((await client.auth.updateUser({ data: { n: 'fine' } })).error).toBeNull();
  });

  it('a body over 1 MB → 413 with a code (with Content-Length and when streamed)', async () => {
    const big = JSON.stringify({ email: uniqueEmail(), password: PASSWORD, data: { blob: 'x'.repeat(1_100_000) } });
    const res = await raw(lb, '/auth/v1/signup', { body: big });
    expectErrorWithCode(res, 413);

    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"email":"a@example.com","data":"'));
        if (sent >= 2_000_000) {
          controller.enqueue(new TextEncoder().encode('"}'));
          controller.close();
          return;
        }
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    // The server reads and discards the rest of the body (bounded) before it closes anything, so the client that
    // streams its whole body gets the 413 (decision 020), not a reset.
    const streamed = await fetch(`${lb.url}/auth/v1/signup`, {
      method: 'POST',
      headers: { apikey: lb.anonKey, 'content-type': 'application/json', 'x-supabase-api-version': API_VERSION },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { code?: unknown }).code).toBe('request_too_large');
    expect((await raw(lb, '/auth/v1/health')).status).toBe(200);
  });
});

describe('routes', () => {
  it('unknown routes → 404 with a code', async () => {
    for (const path of ['/auth/v1/nope', '/auth/v1/admin/nope', '/auth/v1/factors/x/y/z', '/nope']) {
      const res = await raw(lb, path);
      expectErrorWithCode(res, 404);
    }
  });

  it('a wrong method on a known route → 404 or 405 with a code', async () => {
    const res = await raw(lb, '/auth/v1/signup', { method: 'DELETE' });
    expectErrorWithCode(res, [404, 405]);
  });
});

describe('CORS', () => {
  const requested = [
    'apikey',
    'authorization',
    'x-client-info',
    'x-supabase-api-version',
    'content-type',
    'prefer',
    'accept-profile',
    'content-profile',
    'x-retry-count',
  ];

  it('answers a preflight without an apikey, allowing the headers and methods supabase-js uses', async () => {
    for (const path of ['/auth/v1/token?grant_type=password', '/auth/v1/user', '/rest/v1/notes']) {
      const res = await fetch(lb.url + path, {
        method: 'OPTIONS',
        headers: {
          origin: 'http://localhost:3000',
          'access-control-request-method': 'PUT',
          'access-control-request-headers': requested.join(','),
        },
      });
      expect([200, 204]).toContain(res.status);
      const origin = res.headers.get('access-control-allow-origin');
      expect(['*', 'http://localhost:3000']).toContain(origin);
      const allowHeaders = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
      if (allowHeaders !== '*') {
        for (const h of requested) expect(allowHeaders, `allow-headers lacks ${h}`).toContain(h);
      }
      const methods = (res.headers.get('access-control-allow-methods') ?? '').toUpperCase();
      for (const m of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) expect(methods).toContain(m);
    }
  });

  it('exposes Content-Range and X-Supabase-Api-Version on responses, errors included', async () => {
    const ok = await raw(lb, '/auth/v1/settings', { headers: { origin: 'http://localhost:3000' } });
    const err = await raw(lb, '/auth/v1/token?grant_type=password', {
      headers: { origin: 'http://localhost:3000' },
      body: { email: uniqueEmail(), password: 'whatever-1' },
    });
    for (const res of [ok, err]) {
      expect(['*', 'http://localhost:3000']).toContain(res.headers.get('access-control-allow-origin'));
      const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase();
      expect(exposed).toContain('content-range');
      expect(exposed).toContain('x-supabase-api-version');
    }
  });
});

describe('X-Supabase-Api-Version', () => {
  it('is echoed on error responses', async () => {
    const cases = [
      await raw(lb, '/auth/v1/token?grant_type=password', { body: { email: uniqueEmail(), password: 'x-y-z-w' } }),
      await raw(lb, '/auth/v1/user', { bearer: 'garbage' }),
      await raw(lb, '/auth/v1/signup', { body: '{' }),
      await raw(lb, '/auth/v1/nope'),
    ];
    for (const res of cases) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers.get('x-supabase-api-version')).toBe(API_VERSION);
    }
  });
});

// ---- fuzz ----------------------------------------------------------------------------------------------------

/** mulberry32: a small seeded PRNG so a failing run can be replayed with the same seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('fuzz', () => {
  it('every auth endpoint answers garbage with < 500 and an error body with a string code', async () => {
    const seed = Number(process.env.LOCALBASE_FUZZ_SEED ?? Date.now() % 1_000_000);
    const rand = prng(seed);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

    const { client, email } = await signedInClient(lb);
    const session = (await client.auth.getSession()).data.session!;
    const factor = await client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'fuzz' });
    const factorId = factor.data?.id ?? '00000000-0000-4000-8000-000000000000';
    const created = await serviceClient(lb).auth.admin.createUser({ email: uniqueEmail('fz'), email_confirm: true });
    const userId = created.data.user?.id ?? '00000000-0000-4000-8000-000000000000';

    const endpoints: [string, string][] = [
      ['GET', '/auth/v1/health'],
      ['GET', '/auth/v1/settings'],
      ['POST', '/auth/v1/signup'],
      ['POST', '/auth/v1/token?grant_type=password'],
      ['POST', '/auth/v1/token?grant_type=refresh_token'],
      ['POST', '/auth/v1/token?grant_type=pkce'],
      ['POST', '/auth/v1/token?grant_type=id_token'],
      ['POST', '/auth/v1/token'],
      ['GET', '/auth/v1/user'],
      ['PUT', '/auth/v1/user'],
      ['POST', '/auth/v1/logout?scope=local'],
      ['POST', '/auth/v1/logout?scope=%00%ff'],
      ['POST', '/auth/v1/recover'],
      ['POST', '/auth/v1/otp'],
      ['POST', '/auth/v1/verify'],
      ['GET', '/auth/v1/verify?token=abc&type=signup&redirect_to=javascript:alert(1)'],
      ['GET', '/auth/v1/verify?type=%E0%A4%A'],
      ['POST', '/auth/v1/resend'],
      ['POST', '/auth/v1/factors'],
      ['POST', `/auth/v1/factors/${factorId}/challenge`],
      ['POST', `/auth/v1/factors/${factorId}/verify`],
      ['DELETE', `/auth/v1/factors/${factorId}`],
      ['POST', '/auth/v1/factors/not-a-uuid/challenge'],
      ['GET', '/auth/v1/admin/users?page=-1&per_page=abc'],
      ['POST', '/auth/v1/admin/users'],
      ['GET', `/auth/v1/admin/users/${userId}`],
      ['PUT', `/auth/v1/admin/users/${userId}`],
      ['DELETE', `/auth/v1/admin/users/not-a-uuid`],
      ['POST', '/auth/v1/admin/generate_link'],
      ['GET', '/mailbox/api/messages?to=%ff'],
    ];
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    const keys = [
      'email', 'password', 'refresh_token', 'token', 'token_hash', 'type', 'data', 'factor_type', 'friendly_name',
      'challenge_id', 'code', 'phone', 'redirect_to', 'email_confirm', 'user_metadata', 'app_metadata', 'create_user',
      'issuer', 'nonce', 'current_password', 'auth_code', 'code_verifier', 'gotrue_meta_security', '__proto__',
      'constructor',
    ];
    const scalar = (): unknown =>
      pick([
        () => null,
        () => true,
        () => Math.floor(rand() * 1e9) - 5e8,
        () => rand() * 1e308,
        () => '',
        () => 'a'.repeat(Math.floor(rand() * 5000)),
        () => email,
        () => uniqueEmail('fz'),
        () => 'not-an-email',
        () => PASSWORD,
        () => '💥\u0000\ud800',
        () => "'; drop table auth.users; --",
        () => session.refresh_token,
        () => pick(['signup', 'recovery', 'magiclink', 'email', 'email_change', 'invite', 'totp', 'phone', 'sms']),
        () => '00000000-0000-4000-8000-000000000000',
        () => '123456',
      ])();
    const value = (depth: number): unknown => {
      if (depth > 2 || rand() < 0.6) return scalar();
      if (rand() < 0.5) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      return object(depth + 1);
    };
    const object = (depth: number): Record<string, unknown> => {
      const o: Record<string, unknown> = {};
      const n = Math.floor(rand() * 6);
      for (let i = 0; i < n; i++) o[pick(keys)] = value(depth);
      return o;
    };
    const body = (): string | undefined =>
      pick([
        () => undefined,
        () => '',
        () => 'null',
        () => '[]',
        () => '{}',
        () => '{"email":',
        () => 'garbage \u0000 \xff',
        () => JSON.stringify(value(0)),
        () => JSON.stringify(object(0)),
        () => JSON.stringify(object(0)),
        () => JSON.stringify(object(0)),
      ])();

    const failures: string[] = [];
    const statuses = new Set<number>();
    const codes = new Set<string>();
    const total = Number(process.env.LOCALBASE_FUZZ_COUNT ?? 400);
    let next = 0;
    async function worker(): Promise<void> {
      while (next < total) {
        next += 1;
        const [defaultMethod, path] = pick(endpoints);
        const method = rand() < 0.8 ? defaultMethod : pick(methods);
        const payload = method === 'GET' ? undefined : body();
        const headers: Record<string, string> = {};
        const apikey = pick([lb.anonKey, lb.anonKey, lb.serviceRoleKey, 'garbage', '']);
        if (apikey) headers.apikey = apikey;
        const bearer = pick([undefined, session.access_token, lb.serviceRoleKey, lb.anonKey, 'x.y.z', 'garbage']);
        if (bearer) headers.authorization = `Bearer ${bearer}`;
        if (rand() < 0.8) headers['x-supabase-api-version'] = API_VERSION;
        if (payload !== undefined) headers['content-type'] = pick(['application/json', 'text/plain', 'application/json;charset=UTF-8']);
        const label = `${method} ${path} body=${payload === undefined ? '-' : payload.slice(0, 120)}`;
        try {
          const res = await fetch(lb.url + path, { method, headers, body: payload, redirect: 'manual' });
          const text = await res.text();
          statuses.add(res.status);
          if (res.status >= 500) {
            failures.push(`${res.status} ← ${label} → ${text.slice(0, 200)}`);
          } else if (res.status >= 400) {
            let code: unknown;
            try {
              code = (JSON.parse(text) as { code?: unknown }).code;
            } catch {
              code = undefined;
            }
            if (typeof code === 'string') codes.add(code);
            if (typeof code !== 'string') failures.push(`${res.status} without string code ← ${label} → ${text.slice(0, 200)}`);
          }
        } catch (e) {
          failures.push(`network error ${(e as Error).message} ← ${label}`);
        }
      }
    }
    await Promise.all(Array.from({ length: 6 }, () => worker()));
    expect(failures, `fuzz seed ${seed} (replay with LOCALBASE_FUZZ_SEED=${seed})`).toEqual([]);
    // The garbage reached many different handlers and validations, not just one gate.
    expect([...statuses].some((st) => st < 300)).toBe(true);
    expect(codes.size, `error codes seen: ${[...codes].join(', ')}`).toBeGreaterThanOrEqual(8);

    // The server is still healthy afterwards.
    expect((await raw(lb, '/auth/v1/health')).status).toBe(200);
  }, 120_000);
});
