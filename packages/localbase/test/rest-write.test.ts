// /rest/v1 writes and rpc through the official supabase-js client: insert (single, bulk, columns, missing=default),
// upsert (merge / ignore, on_conflict), update / delete with and without returning, rpc POST and GET, Content-Profile,
// and the SQLSTATE → HTTP status mapping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOfBody, restFixture, restRaw, type RestFixture } from './rest-helpers.ts';

let f: RestFixture;
beforeAll(async () => {
  f = await restFixture();
});
afterAll(async () => {
  await f?.lb.stop();
});

const full = (run: string, title: string, extra: Record<string, unknown> = {}) => ({ run, title, done: false, priority: null, tags: [], meta: {}, ...extra });

describe('insert', () => {
  it('single insert: 201 without a body; with select the row; with single an object', async () => {
    const plain = await f.alice.client.from('rt_todos').insert({ run: f.run, title: 'i1' });
    expect([plain.status, plain.statusText, plain.data, plain.error]).toEqual([201, 'Created', null, null]);
    const rep = await f.alice.client.from('rt_todos').insert({ run: f.run, title: 'i2', priority: 7 }).select('title, priority, owner, done');
    expect([rep.status, rep.data]).toEqual([201, [{ title: 'i2', priority: 7, owner: f.alice.id, done: false }]]);
    const one = await f.alice.client.from('rt_todos').insert({ run: f.run, title: 'i3' }).select('title').single();
    expect([one.status, one.data]).toEqual([201, { title: 'i3' }]);
  });

  it('bulk insert with columns=; missing keys are NULL unless missing=default', async () => {
    const bulk = await f.alice.client
      .from('rt_todos')
      .insert([full(f.run, 'bulk1', { priority: 1 }), full(f.run, 'bulk2')])
      .select('title, priority')
      .order('title');
    expect([bulk.status, bulk.data]).toEqual([201, [{ title: 'bulk1', priority: 1 }, { title: 'bulk2', priority: null }]]);
    // done is missing from the second object: NULL → not-null violation → 400 23502
    const nulls = await f.alice.client.from('rt_todos').insert([{ run: f.run, title: 'n1', done: true }, { run: f.run, title: 'n2' }]);
    expect([nulls.status, nulls.error?.code]).toEqual([400, '23502']);
    const defaults = await f.alice.client
      .from('rt_todos')
      .insert([{ run: f.run, title: 'd1', done: true }, { run: f.run, title: 'd2' }], { defaultToNull: false })
      .select('title, done, tags');
    expect([defaults.status, defaults.data]).toEqual([201, [{ title: 'd1', done: true, tags: [] }, { title: 'd2', done: false, tags: [] }]]);
    const counted = await f.alice.client.from('rt_todos').insert([full(f.run, 'c1'), full(f.run, 'c2')], { count: 'exact' });
    expect([counted.status, counted.count]).toEqual([201, 2]);
  });

  it('unknown body column → 400 PGRST204; malformed JSON → 400 PGRST102', async () => {
    const unknown = await f.alice.client.from('rt_todos').insert({ run: f.run, title: 'u', nope: 1 });
    expect([unknown.status, unknown.error?.code, unknown.error?.message]).toEqual([400, 'PGRST204', "Could not find the 'nope' column of 'rt_todos' in the schema cache"]);
    const bad = await restRaw(f.lb, 'rt_todos', { method: 'POST', body: '{"run": ', bearer: f.alice.token });
    expect([bad.status, codeOfBody(bad.json)]).toEqual([400, 'PGRST102']);
  });

  it('SQLSTATEs: 23505 → 409, 23503 → 409, 23514 → 400, 22P02 → 400', async () => {
    const dup = await f.alice.client.from('rt_todos').insert({ run: f.run, title: 'i1' });
    expect([dup.status, dup.error?.code]).toEqual([409, '23505']);
    const fk = await f.alice.client.from('rt_comments').insert({ todo_id: -1, body: 'orphan' });
    expect([fk.status, fk.error?.code]).toEqual([409, '23503']);
    const check = await f.alice.client.from('rt_todos').insert({ run: f.run, title: 'x'.repeat(201) });
    expect([check.status, check.error?.code]).toEqual([400, '23514']);
    const type = await f.alice.client.from('rt_todos').insert({ run: f.run, title: 't', priority: 'high' });
    expect([type.status, type.error?.code]).toEqual([400, '22P02']);
  });
});

describe('upsert', () => {
  it('merge-duplicates on a unique key updates the row (200 when nothing was inserted)', async () => {
    const first = await f.alice.client.from('rt_todos').upsert(full(f.run, 'up1', { priority: 1 }), { onConflict: 'run,title' }).select('title, priority');
    expect([first.status, first.data]).toEqual([201, [{ title: 'up1', priority: 1 }]]);
    const again = await f.alice.client.from('rt_todos').upsert(full(f.run, 'up1', { priority: 2 }), { onConflict: 'run,title' }).select('title, priority');
    expect([again.status, again.data]).toEqual([200, [{ title: 'up1', priority: 2 }]]);
    const mixed = await f.alice.client
      .from('rt_todos')
      .upsert([full(f.run, 'up1', { priority: 3 }), full(f.run, 'up2', { priority: 4 })], { onConflict: 'run,title' })
      .select('title, priority')
      .order('title');
    expect([mixed.status, mixed.data]).toEqual([201, [{ title: 'up1', priority: 3 }, { title: 'up2', priority: 4 }]]);
  });

  it('ignore-duplicates leaves the existing row; the primary key is the default conflict target', async () => {
    const ign = await f.alice.client
      .from('rt_todos')
      .upsert(full(f.run, 'up1', { priority: 99 }), { onConflict: 'run,title', ignoreDuplicates: true })
      .select('title');
    expect([ign.status, ign.data]).toEqual([201, []]);
    const row = await f.alice.client.from('rt_todos').select('id, priority').eq('run', f.run).eq('title', 'up1').single();
    expect(row.data?.priority).toBe(3);
    const byPk = await f.alice.client
      .from('rt_todos')
      .upsert({ ...full(f.run, 'up1-renamed', { priority: 5 }), id: row.data?.id })
      .select('title, priority');
    expect([byPk.status, byPk.data]).toEqual([200, [{ title: 'up1-renamed', priority: 5 }]]);
    const badTarget = await f.alice.client.from('rt_todos').upsert(full(f.run, 'x'), { onConflict: 'nope' });
    expect(badTarget.status).toBe(400);
  });
});

describe('update and delete', () => {
  it('update: 204 without select, 200 with the rows, [] when nothing matched', async () => {
    await f.alice.client.from('rt_todos').insert([full(f.run, 'ud1'), full(f.run, 'ud2')]);
    const plain = await f.alice.client.from('rt_todos').update({ priority: 10 }).eq('run', f.run).eq('title', 'ud1');
    expect([plain.status, plain.data, plain.error]).toEqual([204, null, null]);
    const rep = await f.alice.client.from('rt_todos').update({ done: true }).eq('run', f.run).in('title', ['ud1', 'ud2']).select('title, done, priority').order('title');
    expect([rep.status, rep.data]).toEqual([200, [{ title: 'ud1', done: true, priority: 10 }, { title: 'ud2', done: true, priority: null }]]);
    const none = await f.alice.client.from('rt_todos').update({ done: true }).eq('run', f.run).eq('title', 'missing').select();
    expect([none.status, none.data]).toEqual([200, []]);
    const counted = await f.alice.client.from('rt_todos').update({ priority: 11 }, { count: 'exact' }).eq('run', f.run).like('title', 'ud%');
    expect([counted.status, counted.count]).toEqual([204, 2]);
    const unknown = await f.alice.client.from('rt_todos').update({ nope: 1 }).eq('title', 'ud1');
    expect([unknown.status, unknown.error?.code]).toEqual([400, 'PGRST204']);
    const notNull = await f.alice.client.from('rt_todos').update({ title: null }).eq('run', f.run).eq('title', 'ud1');
    expect([notNull.status, notNull.error?.code]).toEqual([400, '23502']);
  });

  it('delete: 204, or 200 with the deleted rows', async () => {
    await f.alice.client.from('rt_todos').insert([full(f.run, 'del1'), full(f.run, 'del2')]);
    const rep = await f.alice.client.from('rt_todos').delete().eq('run', f.run).eq('title', 'del1').select('title');
    expect([rep.status, rep.data]).toEqual([200, [{ title: 'del1' }]]);
    const plain = await f.alice.client.from('rt_todos').delete().eq('run', f.run).eq('title', 'del2');
    expect([plain.status, plain.error]).toEqual([204, null]);
    const left = await f.alice.client.from('rt_todos').select('title').eq('run', f.run).like('title', 'del%');
    expect(left.data).toEqual([]);
    const single = await f.alice.client.from('rt_todos').delete().eq('run', f.run).like('title', 'c%').select().single();
    expect([single.status, single.error?.code]).toEqual([406, 'PGRST116']);
    // Accept: vnd.pgrst.object+json checks the affected rows without return=representation too (PostgREST's
    // failNotSingular looks at the media type only): nothing is deleted or updated
    const minimal = await f.alice.client.from('rt_todos').delete().eq('run', f.run).like('title', 'c%').single();
    expect([minimal.status, minimal.error?.code, minimal.error?.details]).toEqual([406, 'PGRST116', 'The result contains 2 rows']);
    const patch = await f.alice.client.from('rt_todos').update({ priority: 99 }).eq('run', f.run).like('title', 'c%').single();
    expect([patch.status, patch.error?.code]).toEqual([406, 'PGRST116']);
    const kept = await f.alice.client.from('rt_todos').select('title, priority').eq('run', f.run).like('title', 'c%').order('title');
    expect(kept.data?.map((r) => r.title)).toEqual(['c1', 'c2']); // the failed single deletes were rolled back
    expect(kept.data?.some((r) => r.priority === 99)).toBe(false); // and so was the update
    const one = await f.alice.client.from('rt_todos').update({ priority: 7 }).eq('run', f.run).eq('title', 'c1').single();
    expect([one.status, one.error]).toEqual([204, null]);
  });
});

describe('rpc', () => {
  it('POST a volatile function returning a row; GET a stable one returning a scalar', async () => {
    const add = await f.alice.client.rpc('rt_add_todo', { p_run: f.run, p_title: 'via-rpc' });
    expect(add.status).toBe(200);
    expect(add.data).toMatchObject({ run: f.run, title: 'via-rpc', owner: f.alice.id });
    const count = await f.alice.client.rpc('rt_count_mine', { p_run: f.run }, { get: true });
    const mine = await f.alice.client.from('rt_todos').select('*', { count: 'exact', head: true }).eq('run', f.run);
    expect([count.status, count.data]).toEqual([200, mine.count]);
    expect((await f.bob.client.rpc('rt_count_mine', { p_run: f.run })).data).toBe(0);
  });

  it('set-returning functions take filters, order, range and count; array arguments by GET and POST', async () => {
    const set = await f.alice.client.rpc('rt_todos_of', { p_run: f.run }, { count: 'exact' }).like('title', 'up%').select('title').order('title');
    expect([set.status, set.data, set.count]).toEqual([200, [{ title: 'up1-renamed' }, { title: 'up2' }], 2]);
    const single = await f.alice.client.rpc('rt_todos_of', { p_run: f.run }).eq('title', 'up2').select('title').single();
    expect(single.data).toEqual({ title: 'up2' });
    expect((await f.anon.rpc('rt_sum', { a: 1, b: [2, 3] }, { get: true })).data).toBe(6);
    expect((await f.anon.rpc('rt_sum', { a: 1, b: [2, 3] })).data).toBe(6);
    expect((await f.anon.rpc('rt_sum', { a: 4 })).data).toBe(4);
  });

  it('void → 204; RAISE → 400 P0001 with hint; volatile via GET → 405 25006; unknown → 404 PGRST202', async () => {
    const v = await f.alice.client.rpc('rt_touch', { p_run: f.run });
    expect([v.status, v.data, v.error]).toEqual([204, null, null]);
    const raised = await f.alice.client.rpc('rt_fail', { msg: 'no way' });
    expect([raised.status, raised.error?.code, raised.error?.message, raised.error?.hint]).toEqual([400, 'P0001', 'no way', 'raised by rt_fail']);
    const ro = await f.alice.client.rpc('rt_add_todo', { p_run: f.run, p_title: 'ro' }, { get: true });
    expect([ro.status, ro.error?.code]).toEqual([405, '25006']);
    const unknown = await f.alice.client.rpc('rt_nope', { a: 1 });
    expect([unknown.status, unknown.error?.code]).toEqual([404, 'PGRST202']);
    const badArg = await f.alice.client.rpc('rt_sum', { a: 'one' });
    expect([badArg.status, badArg.error?.code]).toEqual([400, '22P02']);
  });
});

describe('Content-Profile', () => {
  it('writes go to the schema named by Content-Profile', async () => {
    const tag = `cp-${f.run}`;
    const ins = await f.alice.client.schema('rt_other').from('items').insert({ label: 'one', run: tag }).select('label');
    expect([ins.status, ins.data]).toEqual([201, [{ label: 'one' }]]);
    const upd = await f.alice.client.schema('rt_other').from('items').update({ label: 'two' }).eq('run', tag).select('label');
    expect(upd.data).toEqual([{ label: 'two' }]);
    const del = await f.alice.client.schema('rt_other').from('items').delete().eq('run', tag).select('label');
    expect(del.data).toEqual([{ label: 'two' }]);
    const raw = await restRaw(f.lb, 'items', { method: 'POST', body: '{"label":"x"}', bearer: f.alice.token, headers: { 'content-profile': 'nope' } });
    expect([raw.status, codeOfBody(raw.json)]).toEqual([406, 'PGRST106']);
  });
});
