// AAL2 in the database: the product migration supabase/migrations/20261122000000_mfa_helpers.sql ships
// private.mfa_satisfied(), and a product table with owner policies plus the restrictive policy
// "mfa: aal2 when enrolled" (docs/database.md) is readable and writable by a user without factors at aal1, by an
// enrolled user only at aal2, and never by anon. The naive policy that reads auth.mfa_factors as the caller fails
// with "permission denied", which is why the helper is security definer.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anonClient, emptySeedFile, PASSWORD, signedInClient, startTestServer, totpCode, uniqueEmail, type Localbase } from './helpers.ts';

const fixtureDir = fileURLToPath(new URL('./fixtures/mfa-rls-migrations/', import.meta.url));
const productMigrationsDir = fileURLToPath(new URL('../../../supabase/migrations/', import.meta.url));
const HELPERS_FILE = '20261122000000_mfa_helpers.sql';

const run = `mfa-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer({ migrationsDir: fixtureDir, seedFile: emptySeedFile });
});
afterAll(async () => {
  await lb?.stop();
});

async function bodies(client: SupabaseClient, table = 'mfa_demo_notes'): Promise<{ status: number; bodies: string[] | null; code?: string; message?: string }> {
  const r = await client.from(table).select('body').eq('run', run).order('body');
  return { status: r.status, bodies: r.data ? r.data.map((x) => x.body as string) : null, code: r.error?.code, message: r.error?.message };
}

async function aalOf(client: SupabaseClient): Promise<string | null> {
  const { data, error } = await client.auth.mfa.getAuthenticatorAssuranceLevel();
  if (error) throw error;
  return data.currentLevel;
}

/** Enrolls a TOTP factor and verifies it with a code from `otpauth`: the client's session becomes aal2. */
async function enrollAndVerify(client: SupabaseClient): Promise<string> {
  const enrolled = await client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Authenticator' });
  if (enrolled.error) throw enrolled.error;
  const factorId = enrolled.data.id;
  const challenge = await client.auth.mfa.challenge({ factorId });
  if (challenge.error) throw challenge.error;
  const verified = await client.auth.mfa.verify({ factorId, challengeId: challenge.data.id, code: totpCode(enrolled.data.totp.secret) });
  if (verified.error) throw verified.error;
  return factorId;
}

/** Runs SQL as a role with the JWT claims PostgREST would set, and returns the error code (or null on success). */
async function sqlAs(role: 'anon' | 'authenticated', claims: Record<string, unknown>, sql: string): Promise<{ code: string | null; message: string | null; rows: unknown[] }> {
  try {
    const rows = await lb.db.transaction(async (tx) => {
      await tx.query(`select set_config('role', $1, true), set_config('request.jwt.claims', $2, true)`, [role, JSON.stringify(claims)]);
      return (await tx.query(sql)).rows;
    });
    return { code: null, message: null, rows };
  } catch (err) {
    const e = err as { code?: string; message?: string };
    return { code: e.code ?? 'unknown', message: e.message ?? String(err), rows: [] };
  }
}

describe('the product migration', () => {
  it('the fixture applies a byte-for-byte copy of supabase/migrations/' + HELPERS_FILE, () => {
    expect(readFileSync(fixtureDir + HELPERS_FILE, 'utf8')).toBe(readFileSync(productMigrationsDir + HELPERS_FILE, 'utf8'));
  });

  it('supabase/migrations applies cleanly on a fresh server and defines private.mfa_satisfied()', async () => {
    const product = await startTestServer({ migrationsDir: productMigrationsDir, seedFile: emptySeedFile });
    try {
      const fn = await product.db.query<{ secdef: boolean; volatile: string; config: string[] | null }>(
        `select p.prosecdef as secdef, p.provolatile as volatile, p.proconfig as config
           from pg_proc p join pg_namespace n on n.oid = p.pronamespace
          where n.nspname = 'private' and p.proname = 'mfa_satisfied'`,
      );
      expect(fn.rows).toEqual([{ secdef: true, volatile: 's', config: ['search_path=""'] }]);
      const applied = await product.db.query<{ version: string }>(`select version from supabase_migrations.schema_migrations where version = '20261122000000'`);
      expect(applied.rows).toHaveLength(1);
    } finally {
      await product.stop();
    }
  });
});

describe('a user without factors', () => {
  let client: SupabaseClient;
  beforeAll(async () => {
    ({ client } = await signedInClient(lb, uniqueEmail('nofactor')));
  });

  it('reads and writes own rows at aal1', async () => {
    expect(await aalOf(client)).toBe('aal1');
    const ins = await client.from('mfa_demo_notes').insert({ run, body: 'plain-1' });
    expect([ins.status, ins.error]).toEqual([201, null]);
    expect(await bodies(client)).toMatchObject({ status: 200, bodies: ['plain-1'] });
    const upd = await client.from('mfa_demo_notes').update({ body: 'plain-2' }).eq('run', run).select('body');
    expect(upd.data).toEqual([{ body: 'plain-2' }]);
  });

  it('an enrolled but unverified factor changes nothing (still aal1, still allowed)', async () => {
    const enrolled = await client.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Not finished' });
    expect(enrolled.error).toBeNull();
    expect(await bodies(client)).toMatchObject({ status: 200, bodies: ['plain-2'] });
    const ins = await client.from('mfa_demo_notes').insert({ run, body: 'plain-3' });
    expect(ins.status).toBe(201);
  });
});

describe('a user with a verified TOTP factor', () => {
  let email: string;
  let first: SupabaseClient;
  let fresh: SupabaseClient;
  beforeAll(async () => {
    email = uniqueEmail('enrolled');
    ({ client: first } = await signedInClient(lb, email));
    // Rows written before enrolment stay theirs.
    expect((await first.from('mfa_demo_notes').insert({ run, body: 'enrolled-before' })).status).toBe(201);
    await enrollAndVerify(first);
    fresh = anonClient(lb);
    const signIn = await fresh.auth.signInWithPassword({ email, password: PASSWORD });
    if (signIn.error) throw signIn.error;
  });

  it('the aal2 session reads, inserts, updates and deletes own rows', async () => {
    expect(await aalOf(first)).toBe('aal2');
    expect((await first.from('mfa_demo_notes').insert({ run, body: 'enrolled-aal2' })).status).toBe(201);
    expect(await bodies(first)).toMatchObject({ status: 200, bodies: ['enrolled-aal2', 'enrolled-before'] });
    const upd = await first.from('mfa_demo_notes').update({ body: 'enrolled-aal2-edited' }).eq('run', run).eq('body', 'enrolled-aal2').select('body');
    expect(upd.data).toEqual([{ body: 'enrolled-aal2-edited' }]);
    const del = await first.from('mfa_demo_notes').delete().eq('run', run).eq('body', 'enrolled-aal2-edited').select('body');
    expect(del.data).toEqual([{ body: 'enrolled-aal2-edited' }]);
  });

  it('a fresh aal1 session of the same user sees zero rows', async () => {
    expect(await aalOf(fresh)).toBe('aal1');
    const { data } = await fresh.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(data?.nextLevel).toBe('aal2');
    expect(await bodies(fresh)).toMatchObject({ status: 200, bodies: [] });
    const counted = await fresh.from('mfa_demo_notes').select('id', { count: 'exact', head: true }).eq('run', run);
    expect(counted.count).toBe(0);
  });

  it('the aal1 session cannot insert (403 42501, row-level security), update or delete', async () => {
    const ins = await fresh.from('mfa_demo_notes').insert({ run, body: 'enrolled-aal1' });
    expect([ins.status, ins.error?.code]).toEqual([403, '42501']);
    expect(ins.error?.message).toMatch(/row-level security/);
    const upd = await fresh.from('mfa_demo_notes').update({ body: 'hijacked' }).eq('run', run).select('body');
    expect([upd.status, upd.data]).toEqual([200, []]);
    const del = await fresh.from('mfa_demo_notes').delete().eq('run', run).select('body');
    expect([del.status, del.data]).toEqual([200, []]);
    // Nothing changed, as the aal2 session sees.
    expect(await bodies(first)).toMatchObject({ bodies: ['enrolled-before'] });
  });

  it('another user without factors is unaffected by this user’s enrolment, and sees none of these rows', async () => {
    const { client: other } = await signedInClient(lb, uniqueEmail('other'));
    const mine = await other.from('mfa_demo_notes').insert({ run, body: 'other-1' });
    expect(mine.status).toBe(201);
    expect(await bodies(other)).toMatchObject({ bodies: ['other-1'] });
  });

  it('the helper answers per session: false at aal1 for the enrolled user, true at aal2', async () => {
    const sub = (await fresh.auth.getUser()).data.user?.id;
    expect(sub).toBeTruthy();
    const ask = (aal: string) => sqlAs('authenticated', { sub, role: 'authenticated', aal }, 'select private.mfa_satisfied() as ok');
    expect((await ask('aal1')).rows).toEqual([{ ok: false }]);
    expect((await ask('aal2')).rows).toEqual([{ ok: true }]);
  });
});

describe('anon', () => {
  it('sees no rows and cannot insert (401 42501)', async () => {
    const anon = anonClient(lb);
    expect(await bodies(anon)).toMatchObject({ status: 200, bodies: [] });
    const ins = await anon.from('mfa_demo_notes').insert({ run, body: 'anon' });
    expect([ins.status, ins.error?.code]).toEqual([401, '42501']);
  });

  it('may not call the helper: no usage on schema private', async () => {
    const r = await sqlAs('anon', { role: 'anon' }, 'select private.mfa_satisfied()');
    expect(r.code).toBe('42501');
    expect(r.message).toMatch(/permission denied for schema private/);
  });

  it('the helper is not an rpc endpoint of the Data API', async () => {
    const { client } = await signedInClient(lb, uniqueEmail('rpc'));
    const r = await client.rpc('mfa_satisfied');
    expect(r.status).toBe(404);
  });
});

describe('the naive policy pitfall', () => {
  it('as authenticated, auth.mfa_factors cannot be read directly (permission denied)', async () => {
    const r = await sqlAs('authenticated', { sub: '00000000-0000-0000-0000-000000000000', role: 'authenticated', aal: 'aal1' }, 'select count(*) from auth.mfa_factors');
    expect(r.code).toBe('42501');
    expect(r.message).toMatch(/permission denied for table mfa_factors/);
  });

  it('a restrictive policy reading auth.mfa_factors inline breaks the table for every signed-in user', async () => {
    const { client } = await signedInClient(lb, uniqueEmail('naive'));
    const read = await bodies(client, 'mfa_demo_naive');
    expect([read.status, read.code]).toEqual([403, '42501']);
    expect(read.message).toMatch(/permission denied for table mfa_factors/);
    const ins = await client.from('mfa_demo_naive').insert({ run, body: 'naive' });
    expect([ins.status, ins.error?.code]).toEqual([403, '42501']);
  });
});
