import { describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import type { SupabaseClient } from '@supabase/supabase-js';
import { buildRead } from './build-read.ts';
import { RestError } from './errors.ts';
import { recordingClient } from './recording-client.ts';
import { effectiveRange, parseQuery } from './parse.ts';
import type { SchemaCache } from './schema-cache.ts';
import { isPgError, pgErrorStatus } from './sql.ts';
import { openSchemaDb } from './test-db.ts';

const SCHEMA = `
create table profiles (id int primary key, display_name text not null, data jsonb);
create table lists (id int primary key, name text not null, owner_id int not null references profiles(id));
create table todos (
  id int primary key,
  list_id int not null references lists(id),
  owner_id int references profiles(id),
  reviewer_id int references profiles(id),
  task text not null,
  done boolean not null default false,
  tags text[] not null default '{}',
  meta jsonb,
  due date
);
create table tags (id int primary key, name text not null unique);
create table todo_tags (todo_id int references todos(id), tag_id int references tags(id), primary key (todo_id, tag_id));
insert into profiles values (1, 'Ann', '{"city":"Oslo"}'), (2, 'Bob', '{"city":"Rome"}'), (3, 'Cy', null);
insert into lists values (10, 'Home', 1), (20, 'Work', 2), (30, 'Empty', 3);
insert into todos values
  (1, 10, 1, 2, 'buy milk', false, '{shop,food}', '{"prio":1,"labels":["a","b"]}', '2024-01-01'),
  (2, 10, 1, null, 'clean, (really) "well"', true, '{home}', '{"prio":2}', null),
  (3, 20, 2, 1, 'write report', false, '{work}', null, '2024-03-05'),
  (4, 20, 2, 1, 'Fix Bug', true, '{work,urgent}', '{"prio":3}', '2024-02-01'),
  (5, 10, null, null, 'café ☕', false, '{}', null, null);
insert into tags values (1, 'red'), (2, 'blue');
insert into todo_tags values (1, 1), (1, 2), (3, 2);
`;

let db: PGlite;
let cache: SchemaCache;
// The real client builds the URLs; its fetch only records them.
const recorder = recordingClient(() => new Response('[]', { status: 200 }));
const client = recorder.client;

openSchemaDb(SCHEMA, (fx) => ({ db, cache } = fx));

interface Answer {
  total: number | null;
  count: number;
  rows: Array<Record<string, unknown>>;
}

async function run(table: string, qs: string, opts: { count?: boolean; maxRows?: number } = {}): Promise<Answer> {
  const query = parseQuery(qs);
  const range = effectiveRange(null, query.limit, query.offset, opts.maxRows ?? null);
  const stmt = buildRead({ cache, schema: 'public', table, query, offset: range.offset, limit: range.limit, count: opts.count ?? false });
  const r = await db.query<{ total: number | string | null; page_count: number; body: string }>(stmt.sql, stmt.params);
  const row = r.rows[0];
  if (!row) throw new Error('the read statement returned no row');
  return { total: row.total === null ? null : Number(row.total), count: row.page_count, rows: JSON.parse(row.body) as Array<Record<string, unknown>> };
}

/** Builds the request with the real client, then runs our statement for its query string. */
async function viaClient(build: (c: SupabaseClient) => PromiseLike<unknown>, opts: { count?: boolean } = {}): Promise<Answer> {
  await build(client);
  const sent = recorder.last();
  const table = sent.url.pathname.split('/').pop() ?? '';
  return run(table, sent.url.search, opts);
}

async function rejects(table: string, qs: string): Promise<RestError> {
  try {
    await run(table, qs);
  } catch (e) {
    expect(e).toBeInstanceOf(RestError);
    return e as RestError;
  }
  throw new Error(`expected ${qs} to be refused`);
}

const ids = (a: Answer) => a.rows.map((r) => r.id);

describe('buildRead on PGlite', () => {
  it('columns, aliases, casts and JSON paths keep the requested order and names', async () => {
    const a = await viaClient((c) => c.from('todos').select('id, label:task, done::text, meta->prio, p:meta->>prio, first:meta->labels->0').eq('id', 1));
    expect(a.rows).toEqual([{ id: 1, label: 'buy milk', done: 'false', prio: 1, p: '1', first: 'a' }]);
    // a non-JSON column is read through to_jsonb, as PostgREST does: an array by index, text as a JSON string
    expect((await run('todos', 'select=id,tags->1,t:tags->>0,task->x&tags->>0=eq.work&order=id')).rows).toEqual([
      { id: 3, tags: null, t: 'work', x: null },
      { id: 4, tags: 'urgent', t: 'work', x: null },
    ]);
  });

  it('filters with the real client: eq/neq/gt/lt, like/ilike, is, in with quoted values, cs/ov, not, match', async () => {
    expect(ids(await viaClient((c) => c.from('todos').select('id').gt('id', 2).lte('id', 4).order('id')))).toEqual([3, 4]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').ilike('task', '%BUG%')))).toEqual([4]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').like('task', '*milk')))).toEqual([1]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').is('owner_id', null)))).toEqual([5]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').not('owner_id', 'is', null).neq('done', true).order('id')))).toEqual([1, 3]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').in('task', ['clean, (really) "well"', 'café ☕']).order('id')))).toEqual([2, 5]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').in('id', []).order('id')))).toEqual([]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').notIn('id', [1, 2, 3]).order('id')))).toEqual([4, 5]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').contains('tags', ['work']).order('id')))).toEqual([3, 4]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').overlaps('tags', ['food', 'home']).order('id')))).toEqual([1, 2]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').contains('meta', { prio: 2 })))).toEqual([2]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').regexMatch('task', '^[a-z]+ (milk|report)$').order('id')))).toEqual([1, 3]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').eq('meta->>prio', '3')))).toEqual([4]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').likeAnyOf('task', ['%milk%', '%report%']).order('id')))).toEqual([1, 3]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').textSearch('task', 'report | milk', { config: 'english' }).order('id')))).toEqual([1, 3]);
    expect(ids(await viaClient((c) => c.from('todos').select('id').gte('due', '2024-02-01').order('due', { ascending: false })))).toEqual([3, 4]);
  });

  it('or / and trees, nested and negated', async () => {
    expect(ids(await viaClient((c) => c.from('todos').select('id').or('id.eq.5,and(done.is.true,task.ilike.*bug*)').order('id')))).toEqual([4, 5]);
    expect(ids(await run('todos', 'select=id&not.or=(done.is.true,owner_id.is.null)&order=id'))).toEqual([1, 3]);
    expect(ids(await run('todos', 'select=id&or=(task.eq."clean, (really) \\"well\\"",id.in.(4,5))&order=id'))).toEqual([2, 4, 5]);
  });

  it('order with several columns and nulls placement; limit/offset and count', async () => {
    expect(ids(await viaClient((c) => c.from('todos').select('id').order('due', { ascending: true, nullsFirst: true }).order('id')))).toEqual([2, 5, 1, 4, 3]);
    const page = await viaClient((c) => c.from('todos').select('id', { count: 'exact' }).order('id').range(1, 2), { count: true });
    expect([ids(page), page.count, page.total]).toEqual([[2, 3], 2, 5]);
    const filtered = await run('todos', 'select=id&done=is.false&limit=1&order=id', { count: true });
    expect([ids(filtered), filtered.total]).toEqual([[1], 3]);
    expect((await run('todos', 'select=id', { maxRows: 2 })).rows).toHaveLength(2);
  });

  it('to-one embeds are objects (null when absent), to-many are arrays, many-to-many via the junction', async () => {
    const a = await viaClient((c) =>
      c.from('todos').select('id, owner:profiles!todos_owner_id_fkey(display_name), lists(name), tags(name)').in('id', [1, 5]).order('id'),
    );
    expect(a.rows).toEqual([
      { id: 1, owner: { display_name: 'Ann' }, lists: { name: 'Home' }, tags: [{ name: 'red' }, { name: 'blue' }] },
      { id: 5, owner: null, lists: { name: 'Home' }, tags: [] },
    ]);
    const lists = await viaClient((c) => c.from('lists').select('name, todos(id, task)').order('id').order('id', { referencedTable: 'todos', ascending: false }).limit(1, { referencedTable: 'todos' }));
    expect(lists.rows).toEqual([
      { name: 'Home', todos: [{ id: 5, task: 'café ☕' }] },
      { name: 'Work', todos: [{ id: 4, task: 'Fix Bug' }] },
      { name: 'Empty', todos: [] },
    ]);
  });

  it('nested embeds, embedded filters, !inner, and ordering by a to-one column', async () => {
    const a = await run('profiles', 'select=display_name,lists(name,todos(id))&lists.todos.done=is.true&order=id');
    expect(a.rows).toEqual([
      { display_name: 'Ann', lists: [{ name: 'Home', todos: [{ id: 2 }] }] },
      { display_name: 'Bob', lists: [{ name: 'Work', todos: [{ id: 4 }] }] },
      { display_name: 'Cy', lists: [{ name: 'Empty', todos: [] }] },
    ]);
    const inner = await viaClient((c) => c.from('lists').select('name, todos!inner(id)').eq('todos.done', true).order('id'));
    expect(inner.rows).toEqual([
      { name: 'Home', todos: [{ id: 2 }] },
      { name: 'Work', todos: [{ id: 4 }] },
    ]);
    const byOwner = await run('lists', 'select=name,profiles(display_name)&order=profiles(display_name).desc');
    expect(byOwner.rows.map((r) => r.name)).toEqual(['Empty', 'Work', 'Home']);
  });

  it('unknown names and unsupported features are clear 4xx errors', async () => {
    expect((await rejects('nope', 'select=*')).toJSON()).toMatchObject({ code: 'PGRST205' });
    expect((await rejects('nope', 'select=*')).status).toBe(404);
    expect((await rejects('todos', 'select=id,nope')).toJSON()).toMatchObject({ code: '42703', message: 'column todos.nope does not exist' });
    expect((await rejects('todos', 'nope=eq.1')).code).toBe('42703');
    expect((await rejects('todos', 'order=nope')).code).toBe('42703');
    expect((await rejects('todos', 'select=id,profiles(*)')).code).toBe('PGRST201');
    expect((await rejects('todos', 'select=id,nothing(*)')).code).toBe('PGRST200');
    expect((await rejects('todos', 'lists.name=eq.x')).code).toBe('PGRST108');
    expect((await rejects('todos', 'select=id::evil')).code).toBe('42704');
    expect((await rejects('lists', 'select=...todos(id.sum())')).code).toBe('PGRST127');
    expect((await rejects('lists', 'select=*,todos(*)&order=todos(id)')).code).toBe('PGRST118');
  });

  it('bad values are PostgreSQL errors from bound parameters (22P02), the table untouched', async () => {
    for (const qs of ['id=eq.abc', 'id=in.(1,x)', 'due=gt.notadate', 'meta=cs.{bad']) {
      await expect(run('todos', qs)).rejects.toMatchObject({ code: expect.stringMatching(/^22/) });
    }
    expect((await run('todos', "task=eq.'; drop table todos; --")).rows).toEqual([]);
    expect((await run('todos', 'select=id&task=eq.' + encodeURIComponent("x' or '1'='1"))).rows).toEqual([]);
    expect((await db.query<{ n: number }>('select count(*)::int as n from todos')).rows[0]?.n).toBe(5);
  });

  it('fuzz: generated query strings give rows or a 4xx, never a 5xx, and never change the data', async () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pick = <T,>(xs: readonly T[]): T => xs[rnd(xs.length)]!;
    const cols = ['id', 'task', 'done', 'tags', 'meta', 'due', 'owner_id', 'meta->prio', 'meta->>prio', 'nope', '"id"', 'id;x'];
    const ops = ['eq', 'neq', 'gt', 'lte', 'like', 'ilike', 'in', 'is', 'cs', 'ov', 'not.eq', 'match', 'fts', 'isdistinct', 'eq(any)'];
    const vals = ['1', 'abc', '(1,2)', '("a,b",c)', 'null', 'true', '{a,b}', '{"prio":1}', "'", '%', '2024-01-01', '', '[1,2]', '\\', 'é'];
    const selects = ['*', 'id,task', 'id,lists(name)', 'id,profiles!todos_owner_id_fkey(*)', 'id,tags(*)', 'x:id::text', 'meta->labels', 'id,nope(*)'];
    let ok = 0;
    let refused = 0;
    for (let i = 0; i < 400; i++) {
      const parts = [`select=${encodeURIComponent(pick(selects))}`];
      for (let k = rnd(3); k >= 0; k--) parts.push(`${encodeURIComponent(pick(cols))}=${encodeURIComponent(`${pick(ops)}.${pick(vals)}`)}`);
      if (rnd(3) === 0) parts.push(`or=${encodeURIComponent(`(${pick(cols)}.${pick(ops)}.${pick(vals)},${pick(cols)}.is.null)`)}`);
      if (rnd(3) === 0) parts.push(`order=${encodeURIComponent(pick(cols))}.${pick(['asc', 'desc', 'desc.nullslast'])}`);
      if (rnd(4) === 0) parts.push(`limit=${pick(['0', '2', '-1', 'x'])}`);
      const qs = parts.join('&');
      try {
        await run('todos', qs, { count: rnd(2) === 0 });
        ok++;
      } catch (e) {
        const status = e instanceof RestError ? e.status : isPgError(e) ? pgErrorStatus(e.code ?? '', true) : 500;
        if (status >= 500) throw new Error(`5xx for ${qs}`, { cause: e });
        refused++;
      }
    }
    expect(ok).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(20);
    expect((await db.query<{ n: number }>('select count(*)::int as n from todos')).rows[0]?.n).toBe(5);
  });
});
