// The statement timeout over HTTP with supabase-js: a runaway query is cancelled with PostgREST's 57014 answer while
// other requests keep being answered, the database works afterwards, committed rows survive and the cancelled
// statement's own writes do not. On PGlite the mechanism is the worker thread (stopped and reopened from the data
// folder); on a PostgreSQL server (LOCALBASE_TEST_DATABASE_URL) it is statement_timeout. Also: a crashed worker.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGliteWorkerDatabase } from '../src/db/pglite-worker-client.ts';
import { anonClient, ownDatabase, PASSWORD, removeDataFolder, serviceClient, startTestServer, testDatabaseUrl, uniqueEmail } from './helpers.ts';
import { codeOfBody, restFixture, restRaw, restUser, runTag, startRestServer, type RestFixture } from './rest-helpers.ts';
import type { Localbase } from './helpers.ts';

const TIMEOUT_MS = 1000;

/** A table and a function that writes to it and then sleeps, unique to this run (a shared PostgreSQL keeps them). */
async function createSlowWriter(lb: Localbase, tag: string): Promise<{ table: string; fn: string; drop: () => Promise<void> }> {
  const base = `st_${tag.replace(/[^a-z0-9]/g, '_')}`;
  const table = `${base}_notes`;
  const fn = `${base}_write_then_sleep`;
  await lb.db.exec(`
    create table public.${table} (id int primary key, note text not null);
    grant select, insert on public.${table} to authenticated;
    create function public.${fn}(p_id int, p_seconds double precision) returns int language plpgsql as $$
    begin
      insert into public.${table} (id, note) values (p_id, 'from the cancelled statement');
      perform pg_sleep(p_seconds);
      return p_id;
    end $$;
    grant execute on function public.${fn}(int, double precision) to authenticated;
  `);
  await lb.reloadSchema();
  return {
    table,
    fn,
    drop: async () => {
      await lb.db.exec(`drop function public.${fn}(int, double precision); drop table public.${table};`);
    },
  };
}

describe('a runaway query on the running server', () => {
  let f: RestFixture;
  beforeAll(async () => {
    f = await restFixture({ statementTimeoutMs: TIMEOUT_MS });
  });
  afterAll(async () => {
    await f?.lb.stop();
  });

  it('is cancelled with 500 57014 and a hint naming the limit, while other requests are answered meanwhile', async () => {
    let rpcSettled = false;
    const rpc = f.alice.client.rpc('rt_sleep', { seconds: 30 }).then((r) => {
      rpcSettled = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 150)); // the sleep is running now
    const health = await fetch(`${f.lb.url}/auth/v1/health`, { headers: { apikey: f.lb.anonKey } });
    expect(health.status).toBe(200);
    expect(((await health.json()) as { name?: string }).name).toBe('GoTrue');
    // Answered while the runaway statement was still running (on the main thread PGlite would block until its end).
    expect(rpcSettled).toBe(false);
    const user = await f.alice.client.auth.getUser();
    expect(user.data.user?.email).toBe(f.alice.email);

    const r = await rpc;
    expect([r.status, r.error?.code, r.error?.message]).toEqual([500, '57014', 'canceling statement due to statement timeout']);
    expect(r.error?.hint).toBe(`The request ran longer than the statement timeout of ${TIMEOUT_MS} ms (--statement-timeout)`);

    // The database works again, for /rest/v1 and for auth.
    const after = await f.alice.client.rpc('rt_sleep', { seconds: 0.01 });
    expect([after.status, after.data]).toEqual([200, 1]);
    const again = anonClient(f.lb);
    const signIn = await again.auth.signInWithPassword({ email: f.alice.email, password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.id).toBe(f.alice.id);
  });

  it('keeps committed rows and loses the cancelled statement’s own writes', async () => {
    const w = await createSlowWriter(f.lb, runTag('t'));
    try {
      expect((await f.alice.client.from(w.table).insert({ id: 1, note: 'committed before' })).status).toBe(201);
      const r = await f.alice.client.rpc(w.fn, { p_id: 2, p_seconds: 30 });
      expect([r.status, r.error?.code]).toEqual([500, '57014']);
      expect((await f.alice.client.from(w.table).insert({ id: 3, note: 'committed after' })).status).toBe(201);
      const rows = await f.alice.client.from(w.table).select('id, note').order('id');
      expect(rows.data).toEqual([
        { id: 1, note: 'committed before' },
        { id: 3, note: 'committed after' },
      ]);
      // A quick call of the same function commits normally: the timeout, not the function, undid the insert.
      const quick = await f.alice.client.rpc(w.fn, { p_id: 4, p_seconds: 0 });
      expect([quick.status, quick.data]).toEqual([200, 4]);
    } finally {
      await w.drop();
    }
  });
});

describe.skipIf(testDatabaseUrl)('PGlite worker (file-backed data folder)', () => {
  let dataDir: string;
  let lb: Localbase | undefined;
  beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'localbase-timeout-test-'));
  });
  afterAll(async () => {
    await lb?.stop();
    removeDataFolder(dataDir);
  });

  it('committed data survives the cancel and a restart of the server on the same folder', async () => {
    lb = await startRestServer({ memory: false, dataDir, statementTimeoutMs: TIMEOUT_MS });
    const run = runTag();
    const alice = await restUser(lb, 'alice', run);
    const w = await createSlowWriter(lb, run);
    expect((await alice.client.from(w.table).insert({ id: 1, note: 'kept' })).status).toBe(201);
    const r = await alice.client.rpc(w.fn, { p_id: 2, p_seconds: 30 });
    expect([r.status, r.error?.code]).toEqual([500, '57014']);
    expect((await alice.client.from(w.table).select('id, note')).data).toEqual([{ id: 1, note: 'kept' }]);
    expect((lb.db as PGliteWorkerDatabase).restarts).toBe(1);

    await lb.stop();
    lb = await startRestServer({ memory: false, dataDir, statementTimeoutMs: TIMEOUT_MS });
    const again = await anonClient(lb).auth.signInWithPassword({ email: alice.email, password: PASSWORD });
    expect(again.error).toBeNull();
    const token = again.data.session?.access_token ?? '';
    const res = await fetch(`${lb.url}/rest/v1/${w.table}?select=id,note`, { headers: { apikey: lb.anonKey, authorization: `Bearer ${token}` } });
    expect([res.status, await res.json()]).toEqual([200, [{ id: 1, note: 'kept' }]]);
  });
});

describe.skipIf(testDatabaseUrl)('PGlite worker crash', () => {
  let f: RestFixture;
  beforeAll(async () => {
    f = await restFixture({ statementTimeoutMs: TIMEOUT_MS });
  });
  afterAll(async () => {
    await f?.lb.stop();
  });

  it('answers the statement in flight with 503 08006, keeps the server up and reopens the database', async () => {
    const db = f.lb.db as PGliteWorkerDatabase;
    expect((await f.alice.client.from('rt_profiles').select('display_name').eq('id', f.alice.id)).data).toEqual([{ display_name: 'alice' }]);
    db.crashWorkerForTesting();
    // Raw fetch: supabase-js would retry a GET answered 503 (and then succeed on the reopened database).
    const r = await restRaw(f.lb, `rt_profiles?select=display_name&id=eq.${f.alice.id}`, { bearer: f.alice.token });
    expect([r.status, codeOfBody(r.json)]).toEqual([503, '08006']);
    expect((r.json as { message?: string }).message).toMatch(/database stopped unexpectedly .*fatal error requested by a test/);
    expect(db.restarts).toBe(1);
    // Served again, with the data committed before the crash (memory mode keeps it in a folder).
    const after = await f.alice.client.from('rt_profiles').select('display_name').eq('id', f.alice.id);
    expect([after.status, after.data]).toEqual([200, [{ display_name: 'alice' }]]);
    const health = await fetch(`${f.lb.url}/auth/v1/health`, { headers: { apikey: f.lb.anonKey } });
    expect(health.status).toBe(200);
  });
});

describe.skipIf(!testDatabaseUrl)('auth and storage behind a lock another client of the PostgreSQL server holds', () => {
  let lb: Localbase;
  let drop: () => Promise<void>;
  let other: pg.Client;
  beforeAll(async () => {
    const own = await ownDatabase();
    drop = own.drop;
    lb = await startTestServer({ ...own.options, statementTimeoutMs: TIMEOUT_MS });
    other = new pg.Client({ connectionString: own.options.databaseUrl });
    await other.connect();
  });
  afterAll(async () => {
    await other?.end();
    await lb?.stop();
    await drop?.();
  });

  it("a sign-in waiting on the lock gets GoTrue's 504 request_timeout instead of hanging; it works once the lock is gone", async () => {
    const email = uniqueEmail('locked');
    await serviceClient(lb).auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    await other.query('begin');
    await other.query('lock table auth.users in access exclusive mode');
    const res = await fetch(`${lb.url}/auth/v1/token?grant_type=password`, {
      method: 'POST',
      headers: { apikey: lb.anonKey, 'content-type': 'application/json', 'x-supabase-api-version': '2024-01-01' },
      body: JSON.stringify({ email, password: PASSWORD }),
      signal: AbortSignal.timeout(20_000),
    });
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ code: 'request_timeout', message: 'Processing this request timed out, please retry after a moment.' });
    await other.query('rollback');

    const { error } = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
    expect(error).toBeNull();
  });
  it("a storage request waiting on the lock gets the storage server's 544 DatabaseTimeout; it works once the lock is gone", async () => {
    const files = serviceClient(lb).storage;
    expect((await files.createBucket('locked-files')).error).toBeNull();
    await other.query('begin');
    await other.query('lock table storage.objects in access exclusive mode');
    const up = await files.from('locked-files').upload('a.txt', 'a', { contentType: 'text/plain' });
    expect(up.error).toMatchObject({ name: 'StorageApiError', status: 544, statusCode: '544', code: 'DatabaseTimeout', message: 'The connection to the database timed out' });
    const res = await fetch(`${lb.url}/storage/v1/object/list/locked-files`, {
      method: 'POST',
      headers: { apikey: lb.serviceRoleKey, authorization: `Bearer ${lb.serviceRoleKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prefix: '' }),
    });
    expect([res.status, await res.json()]).toEqual([
      544,
      { statusCode: '544', code: 'DatabaseTimeout', error: 'DatabaseTimeout', message: 'The connection to the database timed out' },
    ]);
    await other.query('rollback');

    expect((await files.from('locked-files').upload('a.txt', 'a', { contentType: 'text/plain' })).error).toBeNull();
  });
});
