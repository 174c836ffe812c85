// /rest/v1 options: the max_rows cap, the statement timeout (a PostgreSQL server cancels the statement; PGlite runs
// in a worker thread that is stopped and reopened, see test/statement-timeout.test.ts), and reloading the schema
// cache after DDL run outside the migrations.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOfBody, restFixture, restRaw, type RestFixture } from './rest-helpers.ts';

let f: RestFixture;
beforeAll(async () => {
  f = await restFixture({ maxRows: 3, statementTimeoutMs: 400 });
  const rows = Array.from({ length: 5 }, (_, i) => ({ run: f.run, title: `m${i}`, priority: i, done: false, tags: [], meta: {} }));
  expect((await f.alice.client.from('rt_todos').insert(rows)).error).toBeNull();
});
afterAll(async () => {
  await f?.lb.stop();
});

describe('max_rows', () => {
  it('caps every read, also when a larger limit is asked; the count still tells the total', async () => {
    const all = await f.alice.client.from('rt_todos').select('title', { count: 'exact' }).eq('run', f.run).order('title');
    expect([all.status, all.count, all.data?.map((r) => r.title)]).toEqual([206, 5, ['m0', 'm1', 'm2']]);
    const big = await f.alice.client.from('rt_todos').select('title').eq('run', f.run).order('title').limit(100);
    expect(big.data).toHaveLength(3);
    const next = await f.alice.client.from('rt_todos').select('title').eq('run', f.run).order('title').range(3, 10);
    expect(next.data?.map((r) => r.title)).toEqual(['m3', 'm4']);
    const rpc = await f.alice.client.rpc('rt_todos_of', { p_run: f.run }).select('title');
    expect(rpc.data).toHaveLength(3);
    const raw = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}&order=title`, { bearer: f.alice.token });
    expect(raw.headers.get('content-range')).toBe('0-2/*');
  });
});

describe('statement timeout', () => {
  it('cancels a runaway query with 500 57014 and a hint naming the limit', async () => {
    const started = Date.now();
    const r = await f.alice.client.rpc('rt_sleep', { seconds: 5 });
    expect(Date.now() - started).toBeLessThan(4000);
    expect([r.status, r.error?.code, r.error?.message]).toEqual([500, '57014', 'canceling statement due to statement timeout']);
    expect(r.error?.hint).toMatch(/statement timeout of 400 ms/);
    const after = await f.alice.client.rpc('rt_sleep', { seconds: 0.01 });
    expect([after.status, after.data]).toEqual([200, 1]); // the database is usable again
  });

  it('the reopened database answers a burst of different first requests within the limit: no second restart', async () => {
    const db = f.lb.db as typeof f.lb.db & { restarts?: number };
    const cancelled = await f.alice.client.rpc('rt_sleep', { seconds: 5 });
    expect(cancelled.error?.code).toBe('57014');
    const restarts = db.restarts; // a PGlite worker counts its restarts; a PostgreSQL server has none
    const c = f.alice.client;
    // Each one a statement the reopened worker has not run yet (cold catalog caches, new plans, plpgsql compiled).
    const answers = [
      await c.rpc('rt_sleep', { seconds: 0.01 }),
      await c.from('rt_todos').select('title, priority', { count: 'exact' }).eq('run', f.run).order('priority', { ascending: false }),
      await c.from('rt_open_todos').select('title').eq('run', f.run).limit(2),
      await c.from('rt_profiles').select('*'),
      await c.from('rt_comments').select('*, rt_todos(title)'),
      await c.rpc('rt_count_mine', { p_run: f.run }),
      await c.rpc('rt_sum', { a: 1, b: [2, 3] }),
      await c.rpc('rt_add_todo', { p_run: f.run, p_title: 'after the reopen' }).select('title'),
      await c.rpc('rt_touch', { p_run: f.run }),
      await c.from('rt_todos').update({ done: true }).eq('run', f.run).eq('title', 'after the reopen').select('done'),
      await c.from('rt_todos').delete().eq('run', f.run).eq('title', 'after the reopen').select('title'),
      await c.rpc('rt_todos_of', { p_run: f.run }).select('title').order('title').limit(1),
    ];
    expect(answers.map((a) => a.error?.code ?? a.status)).toEqual([200, 206, 200, 200, 200, 200, 200, 200, 204, 200, 200, 200]);
    if (restarts !== undefined) expect(db.restarts).toBe(restarts);
  });

  it('a query within the limit runs', async () => {
    const r = await f.alice.client.rpc('rt_sleep', { seconds: 0.05 });
    expect([r.status, r.data]).toEqual([200, 1]);
  });
});

describe('schema reload', () => {
  it('a table created outside the migrations appears after reloadSchema()', async () => {
    const name = `rt_tmp_${f.run.replace(/[^a-z0-9]/g, '_')}`;
    await f.lb.db.exec(`create table public.${name} (id int primary key, label text)`);
    try {
      const before = await restRaw(f.lb, `${name}?select=label`, { bearer: f.alice.token });
      expect([before.status, codeOfBody(before.json)]).toEqual([404, 'PGRST205']);
      await f.lb.reloadSchema();
      await f.lb.db.exec(`insert into public.${name} values (1, 'fresh')`);
      const after = await f.alice.client.from(name).select('label');
      expect([after.status, after.data]).toEqual([200, [{ label: 'fresh' }]]);
    } finally {
      await f.lb.db.exec(`drop table public.${name}`);
      await f.lb.reloadSchema();
    }
  });
});
