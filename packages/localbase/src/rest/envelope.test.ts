import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import { buildRead } from './build-read.ts';
import { ENVELOPE_SQL, runEnveloped, type EnvelopeContext } from './envelope.ts';
import { RestError } from './errors.ts';
import { parseQuery } from './parse.ts';
import { loadSchemaCache, type SchemaCache } from './schema-cache.ts';
import { isPgError, restErrorFromPg } from './sql.ts';

// Supabase's roles and auth helpers, reduced to what RLS needs.
const SCHEMA = `
create role anon nologin noinherit;
create role authenticated nologin noinherit;
create role service_role nologin noinherit bypassrls;
create schema auth;
grant usage on schema auth to anon, authenticated, service_role;
create function auth.uid() returns uuid language sql stable as $$
  select coalesce(nullif(current_setting('request.jwt.claim.sub', true), ''),
                  (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub'))::uuid
$$;
create table notes (
  id int primary key,
  owner uuid not null,
  body text not null
);
alter table notes enable row level security;
create policy "own notes" on notes for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid());
grant select, insert, update, delete on notes to authenticated, service_role;
insert into notes values
  (1, 'aaaaaaaa-0000-4000-8000-000000000001', 'a1'),
  (2, 'aaaaaaaa-0000-4000-8000-000000000001', 'a2'),
  (3, 'bbbbbbbb-0000-4000-8000-000000000002', 'b1');
`;
const A = 'aaaaaaaa-0000-4000-8000-000000000001';
const B = 'bbbbbbbb-0000-4000-8000-000000000002';

let db: PGlite;
let cache: SchemaCache;

beforeAll(async () => {
  db = new PGlite();
  await db.exec(SCHEMA);
  await db.exec(ENVELOPE_SQL);
  await db.exec(ENVELOPE_SQL); // idempotent
  cache = await loadSchemaCache(db);
});

afterAll(async () => {
  await db.close();
});

const user = (sub: string): EnvelopeContext => ({
  role: 'authenticated',
  claims: { sub, role: 'authenticated', aud: 'authenticated', email: `${sub.slice(0, 1)}@example.com` },
  readOnly: true,
  method: 'GET',
  path: '/rest/v1/notes',
});
const anon: EnvelopeContext = { role: 'anon', claims: { role: 'anon' }, readOnly: true, method: 'GET', path: '/rest/v1/notes' };
const service: EnvelopeContext = { role: 'service_role', claims: { role: 'service_role' }, readOnly: true, method: 'GET', path: '/rest/v1/notes' };

async function read(ctx: EnvelopeContext, qs = 'select=id,body&order=id') {
  const stmt = buildRead({ cache, schema: 'public', table: 'notes', query: parseQuery(qs), offset: 0, limit: null, count: true, paramStyle: 'array' });
  const row = await runEnveloped<{ total: number; page_count: number; body: string }>(db, ctx, stmt);
  if (!row) throw new Error('no row');
  return { total: row.total, rows: JSON.parse(row.body) as Array<{ id: number; body: string }> };
}

async function refusal(fn: () => Promise<unknown>, authenticated: boolean): Promise<RestError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof RestError) return e;
    expect(isPgError(e)).toBe(true);
    return restErrorFromPg(e as Error & { code: string }, authenticated);
  }
  throw new Error('expected a failure');
}

describe('one-call envelope', () => {
  it('each user sees only their rows (RLS by PostgreSQL), with counts', async () => {
    expect(await read(user(A))).toEqual({ total: 2, rows: [{ id: 1, body: 'a1' }, { id: 2, body: 'a2' }] });
    expect(await read(user(B))).toEqual({ total: 1, rows: [{ id: 3, body: 'b1' }] });
    expect(await read(user(B), 'select=id&id=eq.1')).toEqual({ total: 0, rows: [] });
  });

  it('service_role bypasses RLS; anon without a grant gets 42501 → 401', async () => {
    expect((await read(service)).total).toBe(3);
    const e = await refusal(() => read(anon), false);
    expect([e.status, e.code]).toEqual([401, '42501']);
  });

  it('sets the claims, the per-claim settings, method and path; all gone after the call', async () => {
    const stmt = {
      sql: `select current_user::text as who, current_setting('request.jwt.claim.sub', true) as sub,
              current_setting('request.jwt.claim.email', true) as email, current_setting('request.method', true) as method,
              current_setting('request.path', true) as path, auth.uid()::text as uid, ($1)[1]::text as p`,
      params: ["it's"],
    };
    expect(await runEnveloped(db, user(A), stmt)).toEqual({
      who: 'authenticated', sub: A, email: 'a@example.com', method: 'GET', path: '/rest/v1/notes', uid: A, p: "it's",
    });
    const after = await db.query<{ who: string; claims: string | null }>(
      `select current_user::text as who, current_setting('request.jwt.claims', true) as claims`,
    );
    expect(after.rows[0]?.who).toBe('postgres');
    expect(after.rows[0]?.claims ?? '').toBe('');
  });

  it('read-only requests cannot write (25006); writes obey WITH CHECK (42501 → 403)', async () => {
    const insert = (id: number, owner: string) => ({ sql: `insert into public.notes values (($1)[1]::int, ($1)[2]::uuid, 'x') returning id`, params: [String(id), owner] });
    const ro = await refusal(() => runEnveloped(db, user(A), insert(10, A)), true);
    expect([ro.status, ro.code]).toEqual([405, '25006']);
    const rw = { ...user(A), readOnly: false, method: 'POST' };
    expect(await runEnveloped(db, rw, insert(11, A))).toEqual({ id: 11 });
    const foreign = await refusal(() => runEnveloped(db, rw, insert(12, B)), true);
    expect([foreign.status, foreign.code]).toEqual([403, '42501']);
    expect((await db.query<{ n: number }>('select count(*)::int as n from notes')).rows[0]?.n).toBe(4);
  });

  it('returns null for no row and keeps a row of nulls', async () => {
    expect(await runEnveloped(db, service, { sql: 'select 1 as x where false', params: [] })).toBeNull();
    expect(await runEnveloped(db, service, { sql: 'select null::int as x, null::text as y', params: [] })).toEqual({ x: null, y: null });
    const rw = { ...user(B), readOnly: false, method: 'DELETE' };
    expect(await runEnveloped(db, rw, { sql: 'delete from public.notes where id = ($1)[1]::int returning id', params: ['1'] })).toBeNull();
    expect(await runEnveloped(db, rw, { sql: 'with d as (delete from public.notes where id = ($1)[1]::int returning id) select count(*)::int as n from d', params: ['3'] })).toEqual({ n: 1 });
  });

  it('expectSingle and maxAffected undo the change when violated', async () => {
    const rw = { ...user(A), readOnly: false, method: 'PATCH' };
    const update = {
      sql: `with u as (update public.notes set body = body || '!' returning id) select count(*)::int as page_count from u`,
      params: [],
    };
    const mine = (await db.query<{ n: number }>('select count(*)::int as n from notes where owner = $1', [A])).rows[0]!.n;
    expect(mine).toBeGreaterThan(1);
    const single = await refusal(() => runEnveloped(db, { ...rw, expectSingle: true }, update), true);
    expect([single.code, single.message, single.details]).toEqual(['PT406', 'Cannot coerce the result to a single JSON object', `The result contains ${mine} rows`]);
    const max = await refusal(() => runEnveloped(db, { ...rw, maxAffected: 1 }, update), true);
    expect([max.status, max.code]).toEqual([400, 'PT400']);
    const bodies = await db.query<{ body: string }>('select body from notes where owner = $1 order by id', [A]);
    expect(bodies.rows.every((r) => !r.body.endsWith('!'))).toBe(true);
    expect(await runEnveloped(db, { ...rw, maxAffected: 5 }, update)).toEqual({ page_count: mine });
  });

  it('rollback: the statement’s writes are undone inside the one call, its row is still returned', async () => {
    const rw = { ...user(A), readOnly: false, method: 'PATCH' };
    const update = {
      sql: `with u as (update public.notes set body = body || '?' returning body) select count(*)::int as page_count, string_agg(body, ',') as bodies from u`,
      params: [],
    };
    const row = await runEnveloped<{ page_count: number; bodies: string }>(db, { ...rw, rollback: true }, update);
    expect(row?.page_count).toBeGreaterThan(0);
    expect(row?.bodies.split(',').every((b) => b.endsWith('?'))).toBe(true);
    const bodies = await db.query<{ body: string }>('select body from notes where owner = $1', [A]);
    expect(bodies.rows.some((r) => r.body.endsWith('?'))).toBe(false);
    // checks still raise under rollback
    expect((await refusal(() => runEnveloped(db, { ...rw, rollback: true, maxAffected: 0 }, update), true)).code).toBe('PT400');
  });

  it('refuses roles outside the API roles before touching the database', async () => {
    const e = await refusal(() => runEnveloped(db, { ...user(A), role: 'postgres' }, { sql: 'select 1 as x', params: [] }), true);
    expect([e.status, e.code]).toEqual([401, 'PGRST301']);
  });

  it('the API roles cannot call the envelope function themselves', async () => {
    const e = await refusal(
      () =>
        db.transaction(async (tx) => {
          await tx.query(`select set_config('role', 'authenticated', true)`);
          await tx.query(`select localbase_rest.exec('service_role', '{}', false, 'GET', '/', '{}', 'select 1', '{}')`);
        }),
      true,
    );
    expect(e.code).toBe('42501');
  });
});
