// Row-level security is decided by PostgreSQL for the role of the verified JWT: two users cannot read, insert as,
// update or delete each other's rows; anon sees only what it is granted; service_role sees everything.
// Also the key/JWT handling of /rest/v1 (PGRST301 / PGRST303, role claims, apikey).
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOfBody, restFixture, restRaw, type RestFixture } from './rest-helpers.ts';

let f: RestFixture;
beforeAll(async () => {
  f = await restFixture();
  const { alice, bob, run } = f;
  expect((await alice.client.from('rt_todos').insert([{ run, title: 'alice-1' }, { run, title: 'alice-2' }].map((r) => ({ ...r, done: false, priority: null, tags: [], meta: {} })))).error).toBeNull();
  expect((await bob.client.from('rt_todos').insert({ run, title: 'bob-1' })).error).toBeNull();
});
afterAll(async () => {
  await f?.lb.stop();
});

const titlesOf = async (client: RestFixture['anon'], run: string): Promise<string[]> => {
  const r = await client.from('rt_todos').select('title').eq('run', run).order('title');
  expect(r.error).toBeNull();
  return (r.data ?? []).map((x) => x.title as string);
};

describe('two users', () => {
  it('each reads only their own rows, also through count and filters naming the other', async () => {
    expect(await titlesOf(f.alice.client, f.run)).toEqual(['alice-1', 'alice-2']);
    expect(await titlesOf(f.bob.client, f.run)).toEqual(['bob-1']);
    const byOwner = await f.alice.client.from('rt_todos').select('title', { count: 'exact' }).eq('owner', f.bob.id);
    expect([byOwner.data, byOwner.count]).toEqual([[], 0]);
  });

  it('cannot insert a row owned by the other (403 42501), nor move one of theirs to the other', async () => {
    const ins = await f.alice.client.from('rt_todos').insert({ run: f.run, title: 'forged', owner: f.bob.id });
    expect([ins.status, ins.error?.code]).toEqual([403, '42501']);
    expect(ins.error?.message).toMatch(/row-level security/);
    const move = await f.alice.client.from('rt_todos').update({ owner: f.bob.id }).eq('run', f.run).eq('title', 'alice-1');
    expect([move.status, move.error?.code]).toEqual([403, '42501']);
    const upsert = await f.alice.client.from('rt_todos').upsert({ run: f.run, title: 'bob-1', priority: 1 }, { onConflict: 'run,title' });
    expect(upsert.status).toBeGreaterThanOrEqual(400); // the conflicting row is bob's: not visible, not updatable
    expect(upsert.status).toBeLessThan(500);
  });

  it('cannot update or delete the other’s rows: 0 rows affected, the row unchanged', async () => {
    const upd = await f.alice.client.from('rt_todos').update({ title: 'hijacked' }).eq('run', f.run).eq('title', 'bob-1').select();
    expect([upd.status, upd.data]).toEqual([200, []]);
    const del = await f.alice.client.from('rt_todos').delete().eq('run', f.run).select();
    expect(del.data?.map((r) => r.title).sort()).toEqual(['alice-1', 'alice-2']); // only her own
    expect(await titlesOf(f.bob.client, f.run)).toEqual(['bob-1']);
    expect((await f.alice.client.from('rt_todos').insert([{ run: f.run, title: 'alice-1' }, { run: f.run, title: 'alice-2' }].map((r) => ({ ...r, done: false, priority: null, tags: [], meta: {} })))).error).toBeNull();
  });

  it('auth.uid() in an rpc and a default value is the caller', async () => {
    const row = await f.bob.client.rpc('rt_add_todo', { p_run: f.run, p_title: 'bob-rpc' });
    expect(row.data).toMatchObject({ owner: f.bob.id });
    expect(await titlesOf(f.alice.client, f.run)).toEqual(['alice-1', 'alice-2']);
  });
});

describe('concurrency', () => {
  it('concurrent requests of different users never see each other’s role or claims', async () => {
    const who = [f.alice, f.bob, null] as const;
    const expected = [['alice-1', 'alice-2'], ['bob-1', 'bob-rpc'], []];
    const results = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const u = who[i % 3];
        const r = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}&title=not.like.svc*&order=title`, u ? { bearer: u.token } : {});
        return { i, status: r.status, titles: (r.json as { title: string }[]).map((x) => x.title) };
      }),
    );
    for (const r of results) expect([r.status, r.titles], `request ${r.i}`).toEqual([200, expected[r.i % 3]]);
  });
});

describe('anon and service_role', () => {
  it('anon sees nothing it is not granted: RLS-filtered table → [], no grant → 401 42501, its writes → 401', async () => {
    expect(await titlesOf(f.anon, f.run)).toEqual([]);
    const secrets = await f.anon.from('rt_secrets').select('*');
    expect([secrets.status, secrets.error?.code]).toEqual([401, '42501']);
    const ins = await f.anon.from('rt_todos').insert({ run: f.run, title: 'anon', owner: f.alice.id });
    expect([ins.status, ins.error?.code]).toEqual([401, '42501']);
    const del = await f.anon.from('rt_todos').delete().eq('run', f.run).select();
    expect(del.data).toEqual([]);
    const profiles = await f.anon.from('rt_profiles').select('display_name').eq('run', f.run).order('display_name');
    expect(profiles.data).toEqual([{ display_name: 'alice' }, { display_name: 'bob' }]); // granted by a policy
    // a signed-in user may read rt_secrets (policy for authenticated): permission errors differ by role
    const asUser = await f.alice.client.from('rt_secrets').select('*');
    expect([asUser.status, asUser.error]).toEqual([200, null]);
  });

  it('service_role bypasses RLS: sees and writes every row', async () => {
    expect(await titlesOf(f.service, f.run)).toEqual(['alice-1', 'alice-2', 'bob-1', 'bob-rpc']);
    const ins = await f.service.from('rt_todos').insert({ run: f.run, title: 'svc-for-bob', owner: f.bob.id }).select('owner').single();
    expect([ins.status, ins.data]).toEqual([201, { owner: f.bob.id }]);
    expect(await titlesOf(f.bob.client, f.run)).toEqual(['bob-1', 'bob-rpc', 'svc-for-bob']);
  });
});

describe('keys and JWTs', () => {
  const secret = () => new TextEncoder().encode(f.lb.jwtSecret);
  const sign = (claims: Record<string, unknown>, exp: string | number = '1h', key = secret()) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt().setExpirationTime(exp).sign(key);

  it('expired → 401 PGRST303; bad signature / malformed → 401 PGRST301 with WWW-Authenticate', async () => {
    const expired = await sign({ sub: f.alice.id, role: 'authenticated' }, Math.floor(Date.now() / 1000) - 60);
    const r1 = await restRaw(f.lb, 'rt_todos?select=title', { bearer: expired });
    expect([r1.status, codeOfBody(r1.json), (r1.json as { message?: string }).message]).toEqual([401, 'PGRST303', 'JWT expired']);
    const forged = await sign({ sub: f.alice.id, role: 'authenticated' }, '1h', new TextEncoder().encode('x'.repeat(40)));
    const r2 = await restRaw(f.lb, 'rt_todos?select=title', { bearer: forged });
    expect([r2.status, codeOfBody(r2.json)]).toEqual([401, 'PGRST301']);
    expect(r2.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    const garbage = await restRaw(f.lb, 'rt_todos?select=title', { bearer: 'not-a-jwt' });
    expect([garbage.status, codeOfBody(garbage.json), (garbage.json as { message?: string }).message]).toEqual([401, 'PGRST301', 'Expected 3 parts in JWT; got 1']);
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ role: 'service_role' })).toString('base64url')}.`;
    const r3 = await restRaw(f.lb, 'rt_todos?select=title', { bearer: none });
    expect([r3.status, codeOfBody(r3.json)]).toEqual([401, 'PGRST301']);
  });

  it('a validly signed token cannot pick a database role outside anon/authenticated/service_role', async () => {
    for (const role of ['postgres', 'authenticator', 'pg_read_all_data']) {
      const token = await sign({ sub: f.alice.id, role });
      const r = await restRaw(f.lb, 'rt_secrets?select=*', { bearer: token });
      expect([r.status, codeOfBody(r.json)]).toEqual([401, 'PGRST301']);
    }
  });

  it('a role claim that is not a string names the role of its JSON text, as PostgREST and storage take it, never anon', async () => {
    // It was read as no role at all: anon's answer (here an empty list and a storage bucket list) where Supabase
    // refuses the token's role.
    for (const [role, text] of [
      [123, '123'],
      [['service_role'], '["service_role"]'],
      [{ name: 'authenticated' }, '{"name":"authenticated"}'],
    ] as const) {
      const token = await sign({ sub: f.alice.id, role });
      const r = await restRaw(f.lb, `rt_profiles?select=display_name&run=eq.${f.run}`, { bearer: token });
      expect([r.status, codeOfBody(r.json), (r.json as { message?: string }).message], text).toEqual([401, 'PGRST301', `role "${text}" is not allowed`]);
      const s = await fetch(`${f.lb.url}/storage/v1/bucket`, { headers: { apikey: f.lb.anonKey, authorization: `Bearer ${token}` } });
      expect([s.status, ((await s.json()) as { message?: string }).message], text).toEqual([400, expect.stringMatching(/^role ".+" does not exist$/)]);
    }
    // PostgREST's "no role claim" is only a missing one: null is the role "null"
    const nullRole = await restRaw(f.lb, `rt_profiles?select=display_name&run=eq.${f.run}`, { bearer: await sign({ sub: f.alice.id, role: null }) });
    expect([nullRole.status, (nullRole.json as { message?: string }).message]).toEqual([401, 'role "null" is not allowed']);
  });

  it('the bearer decides the role; the apikey alone gives its role; a wrong apikey is refused', async () => {
    const svcBearer = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}`, { bearer: f.lb.serviceRoleKey });
    expect((svcBearer.json as unknown[]).length).toBe(5);
    const anonKeyOnly = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}`);
    expect(anonKeyOnly.json).toEqual([]);
    const serviceKeyOnly = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}`, { apikey: f.lb.serviceRoleKey });
    expect((serviceKeyOnly.json as unknown[]).length).toBe(5);
    const userOverService = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}`, { apikey: f.lb.serviceRoleKey, bearer: f.bob.token });
    expect((userOverService.json as unknown[]).length).toBe(3);
    const noKey = await fetch(`${f.lb.url}/rest/v1/rt_todos`);
    expect(noKey.status).toBe(401);
    const wrongKey = await restRaw(f.lb, 'rt_todos', { apikey: 'wrong' });
    expect(wrongKey.status).toBe(401);
    const queryKey = await fetch(`${f.lb.url}/rest/v1/rt_profiles?select=display_name&run=eq.${f.run}&apikey=${f.lb.anonKey}`);
    expect([queryKey.status, (await queryKey.json()) as unknown[]]).toEqual([200, [{ display_name: 'alice' }, { display_name: 'bob' }]].map((x, i) => (i === 1 ? expect.arrayContaining(x as unknown[]) : x)));
  });

  it('a token that was accepted stops working when it expires (verified tokens are not trusted past exp)', async () => {
    const exp = Math.floor(Date.now() / 1000) + 2;
    const token = await sign({ sub: f.alice.id, role: 'authenticated' }, exp);
    const ok = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}&order=title`, { bearer: token });
    expect([ok.status, (ok.json as unknown[]).length]).toEqual([200, 2]);
    await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 200));
    const late = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}`, { bearer: token });
    expect([late.status, codeOfBody(late.json)]).toEqual([401, 'PGRST303']);
  });

  it('browser clients get CORS headers on answers and errors, and can read Content-Range', async () => {
    for (const path of [`rt_profiles?select=display_name&run=eq.${f.run}`, 'rt_nope', 'rt_secrets?select=*']) {
      const r = await restRaw(f.lb, path, { headers: { origin: 'http://localhost:3000' } });
      expect(r.headers.get('access-control-allow-origin'), path).toBe('http://localhost:3000');
      expect(r.headers.get('access-control-allow-credentials'), path).toBe('true');
      expect((r.headers.get('access-control-expose-headers') ?? '').toLowerCase(), path).toContain('content-range');
    }
  });
});
