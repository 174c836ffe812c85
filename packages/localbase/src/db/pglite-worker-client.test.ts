// PGlite in a worker thread through the Database interface: values and errors cross the thread boundary intact,
// transactions behave as on the main thread, requests queue instead of running inside another's transaction, a
// deadline cancels a statement (57014) and the database is reopened, memory mode's folder goes away on close.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../index.ts';
import { BOOTSTRAP_SQL } from './bootstrap.ts';
import { loadOrBuildTemplate } from './pglite.ts';
import { openPGliteWorker, type PGliteWorkerDatabase } from './pglite-worker-client.ts';

let db: PGliteWorkerDatabase;
beforeAll(async () => {
  const tpl = await loadOrBuildTemplate(resolveConfig().cacheDir, BOOTSTRAP_SQL);
  db = await openPGliteWorker({ memory: true, templateFile: tpl.file });
  await db.exec('create table t (id int primary key, note text not null)');
});
afterAll(async () => {
  await db?.close();
});

describe('PGlite worker database', () => {
  it('returns the same JavaScript values as PGlite on the main thread', async () => {
    const r = await db.query(
      `select now() as ts, '{"a":[1,2]}'::jsonb as j, '\\x0102ff'::bytea as b, array[1,2,3] as arr, null::text as n,
              12345678901::int8 as big, 1.5::float8 as f, true as t, $1::text as p`,
      ['param'],
    );
    const row = r.rows[0] ?? {};
    expect(row.ts).toBeInstanceOf(Date);
    expect(row.j).toEqual({ a: [1, 2] });
    expect(row.b).toEqual(new Uint8Array([1, 2, 255]));
    expect([row.arr, row.n, row.f, row.t, row.p]).toEqual([[1, 2, 3], null, 1.5, true, 'param']);
    expect(String(row.big)).toBe('12345678901');
  });

  it('rejects with PostgreSQL’s error fields (code, constraint, detail) as an Error', async () => {
    await db.query("insert into t values (1, 'one')");
    const err = (await db.query("insert into t values (1, 'again')").catch((e: unknown) => e)) as Record<string, unknown>;
    expect(err).toBeInstanceOf(Error);
    expect([err.code, err.constraint, err.message]).toEqual(['23505', 't_pkey', 'duplicate key value violates unique constraint "t_pkey"']);
    expect(err.detail).toBe('Key (id)=(1) already exists.');
    expect(db.restarts).toBe(0); // an SQL error is not a crash
  });

  it('commits a transaction, rolls it back when the callback throws', async () => {
    await db.transaction(async (tx) => {
      await tx.query("insert into t values (10, 'ten')");
      await tx.exec("insert into t values (11, 'eleven')");
    });
    await expect(
      db.transaction(async (tx) => {
        await tx.query("insert into t values (12, 'twelve')");
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect((await db.query('select id from t where id >= 10 order by id')).rows).toEqual([{ id: 10 }, { id: 11 }]);
  });

  it('queues a request behind an open transaction instead of running it inside', async () => {
    let release: () => void = () => {};
    const inTx = new Promise<void>((r) => (release = r));
    const tx = db
      .transaction(async (t) => {
        await t.query("insert into t values (20, 'rolled back')");
        await inTx; // the transaction stays open while another request arrives
        throw new Error('roll back');
      })
      .catch(() => 'rolled back');
    const other = db.query("insert into t values (21, 'other request') returning id");
    await new Promise((r) => setTimeout(r, 50));
    release();
    expect(await tx).toBe('rolled back');
    expect((await other).rows).toEqual([{ id: 21 }]);
    // Had the other insert run inside the transaction, the rollback would have taken it too.
    expect((await db.query('select id from t where id in (20, 21) order by id')).rows).toEqual([{ id: 21 }]);
  });

  it('a result too deeply nested to cross the thread boundary fails its statement (54001) instead of hanging', async () => {
    // A jsonb value nested some thousands of levels deep: PostgreSQL stores it, but the structured clone of the row
    // cannot be rebuilt on this thread ('messageerror'). Without a deadline (auth and storage statements have none)
    // the statement used to wait forever, and every request after it behind the mutex.
    const deep = `${'['.repeat(6000)}${']'.repeat(6000)}`;
    const err = (await db.query('select $1::jsonb as j', [deep]).catch((e: unknown) => e)) as Record<string, unknown>;
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe('54001');
    expect(String(err.message)).toMatch(/too deeply nested/);
    expect((await db.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    expect(db.restarts).toBe(0);
  }, 10_000);

  it('cancels a statement past its deadline with 57014, reopens, and keeps committed rows', async () => {
    const before = db.restarts;
    const err = (await db.queryWithTimeout('select pg_sleep(30)', [], 300).catch((e: unknown) => e)) as Record<string, unknown>;
    expect(err).toBeInstanceOf(Error);
    expect([err.code, err.message]).toEqual(['57014', 'canceling statement due to statement timeout']);
    expect(db.restarts).toBe(before + 1);
    expect((await db.query('select id from t where id in (1, 10, 11, 21) order by id')).rows).toEqual([{ id: 1 }, { id: 10 }, { id: 11 }, { id: 21 }]);
  });

  it('a transaction whose statement times out is lost as a whole; its later statements fail with 08006', async () => {
    const tpl = await loadOrBuildTemplate(resolveConfig().cacheDir, BOOTSTRAP_SQL);
    // statementTimeoutMs: a deadline for every statement, transactions' included — every statement here meets it, the
    // first after the cancel included (it waits for the worker to reopen), so it is far above what they take on a
    // loaded 2-core CI machine (300 ms failed there once); only pg_sleep(30) must pass it.
    const timed = await openPGliteWorker({ memory: true, templateFile: tpl.file, statementTimeoutMs: 3000 });
    try {
      await timed.exec('create table k (id int primary key)');
      const seen: unknown[] = [];
      const outcome = await timed
        .transaction(async (tx) => {
          await tx.query('insert into k values (1)');
          seen.push(await tx.query('select pg_sleep(30)').catch((e: unknown) => (e as { code?: string }).code));
          seen.push(await tx.query('insert into k values (2)').catch((e: unknown) => (e as { code?: string }).code));
          return 'committed?';
        })
        .catch((e: unknown) => (e as { code?: string }).code);
      expect(seen).toEqual(['57014', '08006']);
      expect(outcome).toBe('08006'); // COMMIT cannot commit what the cancel threw away
      expect((await timed.query('select count(*)::int as n from k')).rows).toEqual([{ n: 0 }]);
      await timed.transaction(async (tx) => {
        await tx.query('insert into k values (3)');
      });
      expect((await timed.query('select id from k')).rows).toEqual([{ id: 3 }]);
    } finally {
      await timed.close();
    }
  });

  it('memory mode keeps its data in a folder that close() deletes', async () => {
    const tpl = await loadOrBuildTemplate(resolveConfig().cacheDir, BOOTSTRAP_SQL);
    const mem = await openPGliteWorker({ memory: true, templateFile: tpl.file });
    expect(fs.existsSync(`${mem.dataDir}/PG_VERSION`)).toBe(true);
    // A statement without a deadline does not keep close() waiting forever: it is ended, and told so.
    const endless = mem.query('select pg_sleep(600)').catch((e: unknown) => (e as { code?: string }).code);
    await mem.close();
    expect(await endless).toBe('08006');
    expect(fs.existsSync(mem.dataDir)).toBe(false);
    await expect(mem.query('select 1')).rejects.toThrow('the database is closed');
  });
});
