// Tokens without `exp` (docs/decisions/018-tokens-without-exp.md): a user's access token must expire. /auth/v1
// refuses one without exp everywhere (also GET /user's cache and fast path); /rest/v1 refuses it for users and
// custom roles and, like PostgREST, still accepts API keys (role anon / service_role) that carry none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { DEFAULT_PUBLISHABLE_KEY, DEFAULT_SECRET_KEY } from '../src/index.ts';
import { codeOf, jwtPayload, raw, type RawResponse } from './helpers.ts';
import { codeOfBody, restFixture, restRaw, type RestFixture } from './rest-helpers.ts';

let f: RestFixture;

beforeAll(async () => {
  f = await restFixture();
});

afterAll(async () => {
  await f?.lb.stop();
});

/** Signs claims with the server's JWT secret (what anyone holding the secret can do). */
function sign(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(f.lb.jwtSecret));
}

/** Alice's real access token with its exp removed, signed again. */
async function aliceWithoutExp(): Promise<string> {
  const { exp: _exp, ...claims } = jwtPayload(f.alice.token);
  expect(_exp).toBeTypeOf('number');
  return sign(claims);
}

function expectBadJwt(res: RawResponse): void {
  expect([res.status, codeOf(res)], res.text).toEqual([403, 'bad_jwt']);
  expect((res.json as { message: string }).message).toMatch(/exp claim is required/);
}

describe('/auth/v1', () => {
  it('GET /user refuses a user token without exp, every time: never from the cache or the fast path', async () => {
    // Alice's real token first: her user is now in the GET /user cache (and the fast path answers it).
    for (let i = 0; i < 2; i++) expect((await raw(f.lb, '/auth/v1/user', { bearer: f.alice.token })).status).toBe(200);
    const noExp = await aliceWithoutExp();
    for (const apikey of [f.lb.anonKey, f.lb.serviceRoleKey, DEFAULT_PUBLISHABLE_KEY, DEFAULT_SECRET_KEY]) {
      for (const path of ['/auth/v1/user', '/auth/v1/user?x=1']) {
        for (let i = 0; i < 2; i++) expectBadJwt(await raw(f.lb, path, { apikey, bearer: noExp }));
      }
    }
    // supabase-js sees the refusal as an error, not a user.
    const { data, error } = await f.anon.auth.getUser(noExp);
    expect(data.user).toBeNull();
    expect(error?.code).toBe('bad_jwt');
    // The real token is unaffected.
    expect((await raw(f.lb, '/auth/v1/user', { bearer: f.alice.token })).status).toBe(200);
  });

  it('PUT /user, POST /logout and the MFA endpoints refuse it too, and nothing changes', async () => {
    const noExp = await aliceWithoutExp();
    expectBadJwt(await raw(f.lb, '/auth/v1/user', { method: 'PUT', bearer: noExp, body: { data: { hacked: true } } }));
    expectBadJwt(await raw(f.lb, '/auth/v1/logout?scope=global', { bearer: noExp, body: {} }));
    expectBadJwt(await raw(f.lb, '/auth/v1/factors', { bearer: noExp, body: { factor_type: 'totp' } }));
    const me = await raw(f.lb, '/auth/v1/user?fresh=1', { bearer: f.alice.token });
    expect(me.status).toBe(200);
    expect((me.json as { user_metadata: Record<string, unknown> }).user_metadata.hacked).toBeUndefined();
  });

  it('a token whose exp is not a number is refused', async () => {
    const claims = { ...jwtPayload(f.alice.token), exp: String(Math.floor(Date.now() / 1000) + 3600) };
    const res = await raw(f.lb, '/auth/v1/user', { bearer: await sign(claims) });
    expect([res.status, codeOf(res)]).toEqual([403, 'bad_jwt']);
  });

  it("a claim of the wrong JSON type (a number role) → 403 bad_jwt with GoTrue's decoding message, for a user and on the admin API", async () => {
    // Alice's token with role 123 was served as Alice (GET /user 200); the admin API said "User not allowed".
    const prefix = 'invalid JWT: unable to parse or verify signature, token is malformed: could not JSON decode claim: json: cannot unmarshal';
    const cases: [Record<string, unknown>, string][] = [
      [{ role: 123 }, `${prefix} number into Go struct field AccessTokenClaims.role of type string`],
      [{ role: ['service_role'] }, `${prefix} array into Go struct field AccessTokenClaims.role of type string`],
      [{ is_anonymous: 'false' }, `${prefix} string into Go struct field AccessTokenClaims.is_anonymous of type bool`],
      [{ user_metadata: 'x' }, `${prefix} string into Go struct field AccessTokenClaims.user_metadata of type map[string]interface {}`],
    ];
    for (const [change, message] of cases) {
      const token = await sign({ ...jwtPayload(f.alice.token), ...change });
      for (const path of ['/auth/v1/user', '/auth/v1/admin/users']) {
        const res = await raw(f.lb, path, { bearer: token });
        expect([res.status, codeOf(res), (res.json as { message?: string }).message], path).toEqual([403, 'bad_jwt', message]);
      }
    }
    // null leaves the field empty in Go: not a decoding error (the token is then judged on its other claims)
    const nullRole = await raw(f.lb, '/auth/v1/user', { bearer: await sign({ ...jwtPayload(f.alice.token), role: null }) });
    expect(nullRole.status).toBe(200);
  });

  it("a registered claim of the wrong JSON type (a number sub, an object aud, a word for exp) → 403 bad_jwt with GoTrue's decoding message", async () => {
    // These were not refused as GoTrue refuses them: a service_role token with sub 5 or aud {} listed the users (200);
    // Alice's token with sub 5 got 400 "sub claim must be a UUID"; exp "soon" got jose's message.
    const prefix = 'invalid JWT: unable to parse or verify signature, token is malformed: could not JSON decode claim:';
    const numericDate = `${prefix} could not parse NumericData: json:`;
    const cases: [Record<string, unknown>, string][] = [
      [{ sub: 5 }, `${prefix} json: cannot unmarshal number into Go struct field AccessTokenClaims.sub of type string`],
      [{ iss: true }, `${prefix} json: cannot unmarshal bool into Go struct field AccessTokenClaims.iss of type string`],
      [{ jti: {} }, `${prefix} json: cannot unmarshal object into Go struct field AccessTokenClaims.jti of type string`],
      [{ aud: { to: 'authenticated' } }, `${prefix} invalid type for claim`],
      [{ aud: ['authenticated', 5] }, `${prefix} invalid type for claim`],
      [{ exp: 'soon' }, `${numericDate} invalid number literal, trying to unmarshal "\\"soon\\"" into Number`],
      [{ exp: true }, `${numericDate} cannot unmarshal bool into Go value of type json.Number`],
      [{ iat: {} }, `${numericDate} cannot unmarshal object into Go value of type json.Number`],
      [{ nbf: [1] }, `${numericDate} cannot unmarshal array into Go value of type json.Number`],
      // Go stops at a claim whose own decoder fails (aud) even after a plain type mismatch (sub) it meant to report
      [{ sub: 5, aud: {} }, `${prefix} invalid type for claim`],
    ];
    const service = { ...jwtPayload(f.lb.serviceRoleKey), exp: Math.floor(Date.now() / 1000) + 3600 };
    for (const [change, message] of cases) {
      for (const [path, claims] of [['/auth/v1/user', jwtPayload(f.alice.token)], ['/auth/v1/admin/users', service]] as const) {
        const res = await raw(f.lb, path, { bearer: await sign({ ...claims, ...change }) });
        expect([res.status, codeOf(res), (res.json as { message?: string }).message], `${path} ${JSON.stringify(change)}`).toEqual([403, 'bad_jwt', message]);
      }
    }
    // aud as one string or a list of strings, and null claims, are what Go decodes: the token is judged as usual.
    for (const change of [{ aud: ['authenticated'] }, { iss: null, jti: null }]) {
      const res = await raw(f.lb, '/auth/v1/user', { bearer: await sign({ ...jwtPayload(f.alice.token), ...change }) });
      expect(res.status, JSON.stringify(change)).toBe(200);
    }
  });

  it('service_role API keys without exp still work (as apikey and as the admin bearer)', async () => {
    const serviceKey = await sign({ iss: 'supabase-demo', role: 'service_role' });
    const users = await raw(f.lb, '/auth/v1/admin/users', { apikey: serviceKey, bearer: serviceKey });
    expect(users.status, users.text).toBe(200);
  });
});

describe('/rest/v1', () => {
  const mine = () => `rt_profiles?select=id&id=eq.${f.alice.id}`;

  it("a user's token without exp → 401 PGRST303; with exp the same request reads her row", async () => {
    const ok = await restRaw(f.lb, mine(), { bearer: f.alice.token });
    expect([ok.status, ok.json]).toEqual([200, [{ id: f.alice.id }]]);
    for (let i = 0; i < 2; i++) {
      const res = await restRaw(f.lb, mine(), { bearer: await aliceWithoutExp() });
      expect([res.status, codeOfBody(res.json)], res.text).toEqual([401, 'PGRST303']);
      expect((res.json as { message: string }).message).toMatch(/exp/);
      expect(res.headers.get('www-authenticate')).toMatch(/invalid_token/);
    }
    // Writes are refused the same way.
    const write = await restRaw(f.lb, `rt_profiles?id=eq.${f.alice.id}`, {
      method: 'PATCH',
      bearer: await aliceWithoutExp(),
      body: JSON.stringify({ display_name: 'mallory' }),
    });
    expect(write.status).toBe(401);
  });

  it('a custom role without exp is refused as well', async () => {
    const res = await restRaw(f.lb, mine(), { bearer: await sign({ role: 'authenticated', sub: f.alice.id }) });
    expect([res.status, codeOfBody(res.json)]).toEqual([401, 'PGRST303']);
  });

  it("a registered claim of the wrong JSON type → 401 PGRST303 with PostgREST's message (exp, nbf, iat, aud checked in that order); sub is not PostgREST's concern", async () => {
    // aud {} read Alice's row (200); exp "soon" said 'JWT has invalid claims: "exp" claim must be a number'.
    const later = Math.floor(Date.now() / 1000) + 3600;
    const cases: [Record<string, unknown>, string][] = [
      [{ exp: 'soon' }, "The JWT 'exp' claim must be a number"],
      [{ exp: String(later) }, "The JWT 'exp' claim must be a number"],
      [{ nbf: true }, "The JWT 'nbf' claim must be a number"],
      [{ iat: {} }, "The JWT 'iat' claim must be a number"],
      [{ aud: { to: 'authenticated' } }, "The JWT 'aud' claim must be a string or an array of strings"],
      [{ aud: ['authenticated', 5] }, "The JWT 'aud' claim must be a string or an array of strings"],
      [{ aud: 5, iat: 'x', exp: [] }, "The JWT 'exp' claim must be a number"],
    ];
    for (const [change, message] of cases) {
      const res = await restRaw(f.lb, mine(), { bearer: await sign({ ...jwtPayload(f.alice.token), ...change }) });
      expect([res.status, codeOfBody(res.json), (res.json as { message?: string }).message], JSON.stringify(change)).toEqual([401, 'PGRST303', message]);
      expect(res.headers.get('www-authenticate')).toMatch(/invalid_token/);
    }
    for (const change of [{ sub: 5 }, { aud: [] }, { aud: ['authenticated', 'other'] }]) {
      const res = await restRaw(f.lb, mine(), { bearer: await sign({ ...jwtPayload(f.alice.token), ...change }) });
      expect(res.status, JSON.stringify(change) + res.text).toBe(200);
    }
  });

  it('API keys without exp are accepted as PostgREST does (role anon / service_role)', async () => {
    const anon = await restRaw(f.lb, mine(), { bearer: await sign({ role: 'anon' }) });
    expect([anon.status, anon.json]).toEqual([200, [{ id: f.alice.id }]]);
    const service = await restRaw(f.lb, 'rt_secrets?select=*', { bearer: await sign({ role: 'service_role' }) });
    expect(service.status, service.text).toBe(200);
  });
});

describe('/storage/v1', () => {
  const buckets = (token: string) => fetch(`${f.lb.url}/storage/v1/bucket`, { headers: { apikey: f.lb.anonKey, authorization: `Bearer ${token}` } });

  it("a token storage's jose refuses → 400 AccessDenied with jose's own message, as storage; a mistyped aud or sub is not its concern", async () => {
    // The message was GoTrue's ("invalid JWT: unable to parse or verify signature, token has invalid claims: …").
    const now = Math.floor(Date.now() / 1000);
    const cases: [Record<string, unknown>, string][] = [
      [{ exp: 'soon' }, '"exp" claim must be a number'],
      [{ nbf: true }, '"nbf" claim must be a number'],
      [{ exp: now - 60 }, '"exp" claim timestamp check failed'],
      [{ nbf: now + 3600 }, '"nbf" claim timestamp check failed'],
    ];
    for (const [change, message] of cases) {
      const res = await buckets(await sign({ ...jwtPayload(f.alice.token), ...change }));
      expect([res.status, await res.json()], JSON.stringify(change)).toEqual([400, { statusCode: '403', code: 'AccessDenied', error: 'Unauthorized', message }]);
    }
    const forged = await new SignJWT(jwtPayload(f.alice.token)).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('not the secret'));
    expect(await (await buckets(forged)).json()).toMatchObject({ statusCode: '403', message: 'signature verification failed' });
    const res = await buckets(await sign({ ...jwtPayload(f.alice.token), aud: { to: 'authenticated' } }));
    expect(res.status).toBe(200);
  });
});
