import { describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import type { SupabaseClient } from '@supabase/supabase-js';
import { buildRpc, type BuiltRpc } from './build-rpc.ts';
import { RestError } from './errors.ts';
import { recordingClient } from './recording-client.ts';
import { effectiveRange, parsePrefer, parseQuery } from './parse.ts';
import type { SchemaCache } from './schema-cache.ts';
import { openSchemaDb } from './test-db.ts';

const SCHEMA = `
create table lists (id int primary key, name text not null);
create table todos (id int primary key, list_id int references lists(id), task text not null, done boolean not null default false);
create table calls (n int);
insert into lists values (1, 'Home'), (2, 'Work');
insert into todos values (1, 1, 'a', false), (2, 1, 'b', true), (3, 2, 'c', false), (4, 1, 'd', false);
create function add_one(a int, b int default 1) returns int language sql immutable as 'select a + b';
create function add_one(a text) returns text language sql immutable as $$ select a || '1' $$;
create function hello() returns text language sql stable as $$ select 'hello' $$;
create function todos_for(l int) returns setof todos language sql stable as 'select * from todos where list_id = l';
create function list_counts() returns table(list_id int, n bigint) language sql stable
  as 'select list_id, count(*) from todos group by list_id order by list_id';
create function totals(out total bigint, out finished bigint) language sql stable
  as 'select count(*), count(*) filter (where done) from todos';
create function touch(variadic ids int[]) returns void language sql volatile
  as 'insert into calls select unnest(ids)';
create function echo(json) returns json language sql immutable as 'select $1';
create function ids_of(ids int[]) returns setof int language sql immutable as 'select unnest(ids)';
create function bump() returns setof int language sql volatile as 'insert into calls values (-1) returning n';
create function first_todo() returns todos language sql stable as 'select * from todos order by id limit 1';
create function tasks_of(l lists) returns setof todos language sql stable as 'select * from todos where list_id = l.id order by id';
create function label(todos) returns text language sql stable as 'select $1.task';
create function shade() returns int language sql immutable as 'select 0';
create function shade(text default 'x') returns int language sql immutable as 'select 1';
create function shade(int default 2) returns int language sql immutable as 'select 2';
`;

let db: PGlite;
let cache: SchemaCache;
const recorder = recordingClient();
const client = recorder.client;

openSchemaDb(SCHEMA, (fx) => ({ db, cache } = fx));

interface Result {
  returns: BuiltRpc['returns'];
  total: number | null;
  count: number;
  body: unknown;
}

/** Builds the rpc request with the real client, then builds and runs our statement for it. */
async function rpc(build: (c: SupabaseClient) => PromiseLike<unknown>): Promise<Result> {
  await build(client);
  const sent = recorder.last();
  const fn = sent.url.pathname.split('/').pop() ?? '';
  const get = sent.method === 'GET' || sent.method === 'HEAD';
  const query = parseQuery(sent.url.search, { rpc: true });
  const count = parsePrefer(sent.headers.get('prefer')).count !== null;
  const range = effectiveRange(null, query.limit, query.offset);
  const stmt = buildRpc({
    cache, schema: 'public', fn, query, offset: range.offset, limit: range.limit, count,
    args: get ? { kind: 'params', params: query.params } : { kind: 'json', body: sent.body === null ? {} : JSON.parse(sent.body) },
  });
  const r = await db.query<{ total: number | string | null; page_count: number; body: string | null }>(stmt.sql, stmt.params);
  const row = r.rows[0];
  if (!row) throw new Error('the rpc statement returned no row');
  return { returns: stmt.returns, total: row.total === null ? null : Number(row.total), count: row.page_count, body: row.body === null ? null : JSON.parse(row.body) };
}

async function refusal(fn: () => Promise<unknown>): Promise<RestError> {
  try {
    await fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RestError);
    return e as RestError;
  }
  throw new Error('expected a RestError');
}

describe('buildRpc on PGlite', () => {
  it('scalar results, defaults and overloads chosen by argument names', async () => {
    expect(await rpc((c) => c.rpc('add_one', { a: 1, b: 2 }))).toMatchObject({ returns: 'scalar', body: 3 });
    expect(await rpc((c) => c.rpc('add_one', { a: 5, b: 1 }, { get: true }))).toMatchObject({ returns: 'scalar', body: 6 });
    expect(await rpc((c) => c.rpc('hello'))).toMatchObject({ returns: 'scalar', body: 'hello' });
    expect(await rpc((c) => c.rpc('hello', {}, { get: true }))).toMatchObject({ body: 'hello' });
    const amb = await refusal(() => rpc((c) => c.rpc('add_one', { a: 1 })));
    expect([amb.status, amb.code]).toEqual([300, 'PGRST203']);
    // PostgREST lists the candidates with fewer parameters first
    expect(amb.message).toBe('Could not choose the best candidate function between: public.add_one(a => text), public.add_one(a => integer, b => integer)');
  });

  it('unknown function or argument names: 404 PGRST202', async () => {
    const e = await refusal(() => rpc((c) => c.rpc('nope', { x: 1, a: 2 })));
    expect(e.toJSON()).toEqual({
      code: 'PGRST202',
      message: 'Could not find the function public.nope(a, x) in the schema cache',
      details: 'Searched for the function public.nope with parameters a, x or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
      hint: null,
    });
    expect(e.status).toBe(404);
    expect((await refusal(() => rpc((c) => c.rpc('hello', { extra: 1 })))).code).toBe('PGRST202');
  });

  it('set-returning functions take select, filters, order, range and count; embeds work on table rows', async () => {
    const r = await rpc((c) => c.rpc('todos_for', { l: 1 }, { count: 'exact' }).select('id, task, lists(name)').eq('done', false).order('id', { ascending: false }).range(0, 1));
    expect(r).toEqual({
      returns: 'set', total: 2, count: 2,
      body: [{ id: 4, task: 'd', lists: { name: 'Home' } }, { id: 1, task: 'a', lists: { name: 'Home' } }],
    });
  });

  it('RETURNS TABLE, OUT parameters and a single composite', async () => {
    expect((await rpc((c) => c.rpc('list_counts'))).body).toEqual([{ list_id: 1, n: 3 }, { list_id: 2, n: 1 }]);
    expect((await rpc((c) => c.rpc('list_counts').gt('n', 1))).body).toEqual([{ list_id: 1, n: 3 }]);
    expect(await rpc((c) => c.rpc('totals'))).toMatchObject({ returns: 'object', body: { total: 4, finished: 1 } });
    expect(await rpc((c) => c.rpc('first_todo'))).toMatchObject({ returns: 'object', body: { id: 1, list_id: 1, task: 'a', done: false } });
  });

  it('arrays from a JSON body and from GET parameters; variadic; void', async () => {
    expect((await rpc((c) => c.rpc('ids_of', { ids: [3, 1, 2] }))).body).toEqual([3, 1, 2]);
    expect((await rpc((c) => c.rpc('ids_of', { ids: [5, 6] }, { get: true }))).body).toEqual([5, 6]);
    expect((await rpc((c) => c.rpc('ids_of', { ids: [1, 2, 3, 4] }).range(1, 2))).body).toEqual([2, 3]);
    expect(await rpc((c) => c.rpc('touch', { ids: [7, 8] }))).toMatchObject({ returns: 'void', body: null });
    expect((await db.query<{ n: number }>('select n from calls order by n')).rows).toEqual([{ n: 7 }, { n: 8 }]);
  });

  it('a JSON object fills a row-type parameter (json_to_record), partial objects leave NULLs', async () => {
    expect((await rpc((c) => c.rpc('tasks_of', { l: { id: 2, name: 'Work' } }))).body).toEqual([{ id: 3, list_id: 2, task: 'c', done: false }]);
    expect((await rpc((c) => c.rpc('tasks_of', { l: { id: 1 } }).select('task'))).body).toEqual([{ task: 'a' }, { task: 'b' }, { task: 'd' }]);
  });

  it('functions with an unnamed non-json/text parameter are not callable; overloads through defaults → PGRST203', async () => {
    const computed = await refusal(() => rpc((c) => c.rpc('label')));
    expect([computed.code, computed.message]).toEqual(['PGRST202', 'Could not find the function public.label without parameters in the schema cache']);
    const amb = await refusal(() => rpc((c) => c.rpc('shade')));
    expect([amb.status, amb.message]).toEqual([300, 'Could not choose the best candidate function between: public.shade(), public.shade( => text)']);
    expect(await rpc((c) => c.rpc('shade', { '': 'y' }))).toMatchObject({ returns: 'scalar', body: 1 });
  });

  it('a single unnamed json parameter receives the whole body', async () => {
    expect((await rpc((c) => c.rpc('echo', { any: ['thing', 1], nested: { x: null } }))).body).toEqual({ any: ['thing', 1], nested: { x: null } });
  });

  it('a volatile set-returning function runs once even with a count', async () => {
    const before = (await db.query<{ n: number }>('select count(*)::int as n from calls')).rows[0]!.n;
    const r = await rpc((c) => c.rpc('bump', {}, { count: 'exact' }));
    expect([r.body, r.total]).toEqual([[-1], 1]);
    expect((await db.query<{ n: number }>('select count(*)::int as n from calls')).rows[0]?.n).toBe(before + 1);
  });

  it('bad argument values are PostgreSQL errors; a non-object body is PGRST102', async () => {
    await expect(rpc((c) => c.rpc('add_one', { a: 'x', b: 1 }))).rejects.toMatchObject({ code: '22P02' });
    const stmt = () =>
      buildRpc({ cache, schema: 'public', fn: 'hello', args: { kind: 'json', body: [1] }, query: parseQuery(''), offset: 0, limit: null, count: false });
    expect((await refusal(async () => stmt())).code).toBe('PGRST102');
  });
});
