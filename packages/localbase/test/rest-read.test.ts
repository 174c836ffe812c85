// /rest/v1 reads through the official supabase-js client: select grammar, embedding, filters, logic trees, order,
// ranges, counts, HEAD, single/maybeSingle, views, profiles and the read-side errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOfBody, restFixture, restRaw, type RestFixture } from './rest-helpers.ts';

let f: RestFixture;
const ids: Record<string, number> = {};

beforeAll(async () => {
  f = await restFixture();
  const { alice, bob, run } = f;
  const a = await alice.client
    .from('rt_todos')
    .insert([
      { run, title: 'a1', priority: 1, tags: ['x', 'y'], meta: { k: 1 }, done: false },
      { run, title: 'a2', priority: 3, tags: [], meta: {}, done: true },
      { run, title: 'a3', priority: null, tags: [], meta: { k: 2 }, done: false },
    ])
    .select('id, title');
  expect(a.error).toBeNull();
  for (const r of a.data ?? []) ids[r.title as string] = r.id as number;
  const b = await bob.client.from('rt_todos').insert({ run, title: 'b1', priority: 2 }).select('id').single();
  expect(b.error).toBeNull();
  ids.b1 = b.data?.id as number;
  const c = await alice.client.from('rt_comments').insert([
    { todo_id: ids.a1, body: 'first' },
    { todo_id: ids.a1, body: 'second' },
    { todo_id: ids.a2, body: 'third' },
  ]);
  expect(c.error).toBeNull();
});

afterAll(async () => {
  await f?.lb.stop();
});

const titles = (rows: unknown): string[] => ((rows ?? []) as { title: string }[]).map((r) => r.title);

describe('select', () => {
  it('columns, *, aliases and casts', async () => {
    const r = await f.alice.client.from('rt_todos').select('t:title, priority::text').eq('run', f.run).order('title');
    expect([r.status, r.data]).toEqual([200, [{ t: 'a1', priority: '1' }, { t: 'a2', priority: '3' }, { t: 'a3', priority: null }]]);
    const all = await f.alice.client.from('rt_todos').select('*').eq('id', ids.a1).single();
    expect(all.data).toMatchObject({ id: ids.a1, owner: f.alice.id, run: f.run, title: 'a1', done: false, priority: 1, tags: ['x', 'y'], meta: { k: 1 } });
    expect(Object.keys(all.data ?? {}).sort()).toEqual(['created_at', 'done', 'id', 'meta', 'owner', 'priority', 'run', 'tags', 'title']);
    const json = await f.alice.client.from('rt_todos').select('title, k:meta->k, ks:meta->>k').eq('id', ids.a1).single();
    expect(json.data).toEqual({ title: 'a1', k: 1, ks: '1' });
  });

  it('arrow operators on an array column work as on PostgREST (to_jsonb): select, filter and order', async () => {
    const r = await f.alice.client
      .from('rt_todos')
      .select('title, first:tags->0, second:tags->>1')
      .eq('run', f.run)
      .eq('tags->>0', 'x');
    expect([r.error, r.status, r.data]).toEqual([null, 200, [{ title: 'a1', first: 'x', second: 'y' }]]);
    const o = await f.alice.client.from('rt_todos').select('title').eq('run', f.run).order('tags->>0', { nullsFirst: true }).order('title');
    expect([o.error, titles(o.data)]).toEqual([null, ['a2', 'a3', 'a1']]);
  });

  it('embeds a to-one relationship as an object and a to-many as an array', async () => {
    const one = await f.alice.client.from('rt_todos').select('title, author:rt_profiles(display_name)').eq('id', ids.a1).single();
    expect(one.data).toEqual({ title: 'a1', author: { display_name: 'alice' } });
    const many = await f.alice.client
      .from('rt_todos')
      .select('title, rt_comments(body)')
      .eq('run', f.run)
      .order('title')
      .order('body', { referencedTable: 'rt_comments' });
    expect(many.data).toEqual([
      { title: 'a1', rt_comments: [{ body: 'first' }, { body: 'second' }] },
      { title: 'a2', rt_comments: [{ body: 'third' }] },
      { title: 'a3', rt_comments: [] },
    ]);
    // profiles are public, todos are not: bob's embedded todos are filtered by RLS for alice
    const profiles = await f.alice.client
      .from('rt_profiles')
      .select('display_name, rt_todos(title)')
      .eq('run', f.run)
      .order('display_name')
      .order('title', { referencedTable: 'rt_todos' });
    expect(profiles.data).toEqual([
      { display_name: 'alice', rt_todos: [{ title: 'a1' }, { title: 'a2' }, { title: 'a3' }] },
      { display_name: 'bob', rt_todos: [] },
    ]);
    const inner = await f.alice.client.from('rt_profiles').select('display_name, rt_todos!inner(title)').eq('run', f.run).eq('rt_todos.title', 'a2');
    expect(inner.data).toEqual([{ display_name: 'alice', rt_todos: [{ title: 'a2' }] }]);
  });

  it('unknown relationship → 400 PGRST200; unknown column → 400 42703; unknown table → 404 PGRST205', async () => {
    const rel = await f.alice.client.from('rt_todos').select('title, rt_secrets(secret)');
    expect([rel.status, rel.error?.code]).toEqual([400, 'PGRST200']);
    const col = await f.alice.client.from('rt_todos').select('nope');
    expect([col.status, col.error?.code]).toEqual([400, '42703']);
    const tab = await f.alice.client.from('rt_nope').select();
    expect([tab.status, tab.error?.code, tab.error?.message]).toEqual([404, 'PGRST205', "Could not find the table 'public.rt_nope' in the schema cache"]);
    const syntax = await restRaw(f.lb, 'rt_todos?select=title,(', { bearer: f.alice.token });
    expect([syntax.status, codeOfBody(syntax.json)]).toEqual([400, 'PGRST100']);
  });
});

describe('filters', () => {
  const q = () => f.alice.client.from('rt_todos').select('title').eq('run', f.run).order('title');
  it.each([
    ['eq', () => q().eq('priority', 1), ['a1']],
    ['neq', () => q().neq('priority', 1), ['a2']],
    ['gt', () => q().gt('priority', 1), ['a2']],
    ['gte', () => q().gte('priority', 1), ['a1', 'a2']],
    ['lt', () => q().lt('priority', 3), ['a1']],
    ['lte', () => q().lte('priority', 3), ['a1', 'a2']],
    ['like', () => q().like('title', 'a%'), ['a1', 'a2', 'a3']],
    ['like with *', () => q().filter('title', 'like', '*2'), ['a2']],
    ['ilike', () => q().ilike('title', 'A_'), ['a1', 'a2', 'a3']],
    ['is null', () => q().is('priority', null), ['a3']],
    ['is true', () => q().is('done', true), ['a2']],
    ['in', () => q().in('priority', [1, 3]), ['a1', 'a2']],
    ['in with quoted strings', () => q().in('title', ['a1', 'x,y', 'a(3)', 'a3']), ['a1', 'a3']],
    ['cs array', () => q().contains('tags', ['x']), ['a1']],
    ['cd array', () => q().containedBy('tags', ['x', 'y', 'z']), ['a1', 'a2', 'a3']],
    ['cs jsonb', () => q().contains('meta', { k: 2 }), ['a3']],
    ['not.is.null', () => q().not('priority', 'is', null), ['a1', 'a2']],
    ['not.in', () => q().not('priority', 'in', '(1)'), ['a2']],
    ['or', () => q().or('priority.eq.1,priority.is.null'), ['a1', 'a3']],
    ['or with nested and', () => q().or('and(priority.gte.1,done.is.true),title.eq.a3'), ['a2', 'a3']],
    ['or with not', () => q().or('priority.not.eq.1,title.eq.a1'), ['a1', 'a2']],
    ['match', () => q().match({ priority: 3, done: true }), ['a2']],
  ])('%s', async (_name, build, expected) => {
    const r = await build();
    expect(r.error).toBeNull();
    expect(titles(r.data)).toEqual(expected);
  });

  it('and=(…), not.or=(…) and deeper nesting in the raw grammar', async () => {
    const base = `rt_todos?select=title&run=eq.${f.run}&order=title`;
    const get = async (filter: string) => {
      const r = await restRaw(f.lb, `${base}&${filter}`, { bearer: f.alice.token });
      expect(r.status, r.text).toBe(200);
      return titles(r.json);
    };
    expect(await get('and=(priority.gte.1,priority.lte.2)')).toEqual(['a1']);
    expect(await get('not.or=(priority.eq.1,priority.eq.3)')).toEqual([]); // a3: NOT (NULL OR NULL) is NULL
    expect(await get('not.and=(priority.eq.1,done.is.false)')).toEqual(['a2']);
    expect(await get('or=(and(title.eq.a1,or(priority.eq.1,priority.eq.9)),and(done.is.true,not.or(title.eq.a1,title.eq.a3)))')).toEqual(['a1', 'a2']);
  });

  it('a value of the wrong type → 400 22P02', async () => {
    const r = await f.alice.client.from('rt_todos').select('title').eq('priority', 'abc');
    expect([r.status, r.error?.code]).toEqual([400, '22P02']);
  });
});

describe('order, ranges and counts', () => {
  it('orders by several columns with nulls first/last', async () => {
    const base = () => f.alice.client.from('rt_todos').select('title').eq('run', f.run);
    expect(titles((await base().order('priority', { ascending: false, nullsFirst: true })).data)).toEqual(['a3', 'a2', 'a1']);
    expect(titles((await base().order('priority', { ascending: false, nullsFirst: false })).data)).toEqual(['a2', 'a1', 'a3']);
    expect(titles((await base().order('priority', { ascending: true })).data)).toEqual(['a1', 'a2', 'a3']);
    expect(titles((await base().order('priority', { ascending: true, nullsFirst: true })).data)).toEqual(['a3', 'a1', 'a2']);
    expect(titles((await base().order('done').order('title', { ascending: false })).data)).toEqual(['a3', 'a1', 'a2']);
  });

  it('range / limit / offset, with an exact count: 206 and Content-Range', async () => {
    const page = await f.alice.client.from('rt_todos').select('title', { count: 'exact' }).eq('run', f.run).order('title').range(1, 2);
    expect([page.status, page.statusText, page.count, titles(page.data)]).toEqual([206, 'Partial Content', 3, ['a2', 'a3']]);
    const lim = await f.alice.client.from('rt_todos').select('title').eq('run', f.run).order('title').limit(1);
    expect(titles(lim.data)).toEqual(['a1']);
    const all = await f.alice.client.from('rt_todos').select('title', { count: 'exact' }).eq('run', f.run);
    expect([all.status, all.count]).toEqual([200, 3]);
    const raw = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}&order=title&offset=1&limit=1`, {
      bearer: f.alice.token,
      headers: { prefer: 'count=exact' },
    });
    expect([raw.status, raw.headers.get('content-range'), raw.json]).toEqual([206, '1-1/3', [{ title: 'a2' }]]);
    const noCount = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}&order=title`, { bearer: f.alice.token });
    expect(noCount.headers.get('content-range')).toBe('0-2/*');
    const header = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}&order=title`, { bearer: f.alice.token, headers: { range: '2-5' } });
    expect([header.status, header.headers.get('content-range'), header.json]).toEqual([200, '2-2/*', [{ title: 'a3' }]]);
    // a Range header and limit/offset that share no row: PostgREST's 416 (its "negative limit"), not an empty 200
    const disjoint = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}&order=title&limit=1`, { bearer: f.alice.token, headers: { range: '1-2' } });
    expect([disjoint.status, disjoint.json]).toEqual([
      416,
      { code: 'PGRST103', message: 'Requested range not satisfiable', details: 'Limit should be greater than or equal to zero.', hint: null },
    ]);
    const limitZero = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}&limit=0`, { bearer: f.alice.token, headers: { range: '1-2' } });
    expect([limitZero.status, limitZero.json]).toEqual([200, []]);
    const past = await f.alice.client.from('rt_todos').select('title', { count: 'exact' }).eq('run', f.run).range(5, 9);
    expect([past.status, past.error?.code]).toEqual([416, 'PGRST103']);
    const empty = await restRaw(f.lb, `rt_todos?select=title&run=eq.nothing-${f.run}`, { bearer: f.alice.token, headers: { prefer: 'count=exact' } });
    expect([empty.status, empty.headers.get('content-range'), empty.json]).toEqual([200, '*/0', []]);
  });

  it('planned counts are the planner\'s estimate, estimated ones exact below max rows', async () => {
    const r = await f.alice.client.from('rt_todos').select('title', { count: 'planned' }).eq('run', f.run);
    expect(typeof r.count).toBe('number');
    const e = await f.alice.client.from('rt_todos').select('title', { count: 'estimated' }).eq('run', f.run);
    expect(e.count).toBe(3);
  });

  it('HEAD returns the count without a body', async () => {
    const r = await f.alice.client.from('rt_todos').select('*', { count: 'exact', head: true }).eq('run', f.run);
    expect([r.status, r.count, r.data, r.error]).toEqual([200, 3, null, null]);
    const raw = await fetch(`${f.lb.url}/rest/v1/rt_todos?run=eq.${f.run}`, {
      method: 'HEAD',
      headers: { apikey: f.lb.anonKey, authorization: `Bearer ${f.alice.token}`, prefer: 'count=exact' },
    });
    expect([raw.status, raw.headers.get('content-range'), await raw.text()]).toEqual([200, '0-2/3', '']);
  });
});

describe('single and maybeSingle', () => {
  it('single: one row → object; 0 or many → 406 PGRST116', async () => {
    const one = await f.alice.client.from('rt_todos').select('title').eq('id', ids.a2).single();
    expect([one.status, one.data]).toEqual([200, { title: 'a2' }]);
    const many = await f.alice.client.from('rt_todos').select('title').eq('run', f.run).single();
    expect([many.status, many.error?.code, many.error?.message, many.error?.details]).toEqual([
      406,
      'PGRST116',
      'Cannot coerce the result to a single JSON object',
      'The result contains 3 rows',
    ]);
    const none = await f.alice.client.from('rt_todos').select('title').eq('id', ids.b1).single();
    expect([none.status, none.error?.code, none.error?.details]).toEqual([406, 'PGRST116', 'The result contains 0 rows']);
  });

  it('maybeSingle: 0 rows → null, 1 row → object, many → PGRST116', async () => {
    const none = await f.alice.client.from('rt_todos').select('title').eq('id', ids.b1).maybeSingle();
    expect([none.status, none.data, none.error]).toEqual([200, null, null]);
    const one = await f.alice.client.from('rt_todos').select('title').eq('id', ids.a3).maybeSingle();
    expect(one.data).toEqual({ title: 'a3' });
    const many = await f.alice.client.from('rt_todos').select('title').eq('run', f.run).maybeSingle();
    expect(many.error?.code).toBe('PGRST116');
  });
});

describe('views and profiles', () => {
  it('a security_invoker view applies the caller’s RLS', async () => {
    const a = await f.alice.client.from('rt_open_todos').select('title').eq('run', f.run).order('title');
    expect(titles(a.data)).toEqual(['a1', 'a3']);
    const b = await f.bob.client.from('rt_open_todos').select('title').eq('run', f.run);
    expect(titles(b.data)).toEqual(['b1']);
    // the view's owner column is rt_todos.owner, so it carries that column's foreign key to rt_profiles
    const embed = await f.alice.client.from('rt_open_todos').select('title, rt_profiles(display_name)').eq('run', f.run).order('title');
    expect([embed.status, embed.data]).toEqual([200, [{ title: 'a1', rt_profiles: { display_name: 'alice' } }, { title: 'a3', rt_profiles: { display_name: 'alice' } }]]);
  });

  it('Accept-Profile selects another exposed schema; an unexposed one → 406 PGRST106', async () => {
    const tag = `p-${f.run}`;
    const ins = await f.service.schema('rt_other').from('items').insert({ label: 'other', run: tag }).select('label, run');
    expect([ins.status, ins.data]).toEqual([201, [{ label: 'other', run: tag }]]);
    const r = await f.alice.client.schema('rt_other').from('items').select('label').eq('run', tag);
    expect([r.status, r.data]).toEqual([200, [{ label: 'other' }]]);
    const wrongSchema = await f.alice.client.from('items').select('label');
    expect([wrongSchema.status, wrongSchema.error?.code]).toEqual([404, 'PGRST205']);
    const bad = await f.alice.client.schema('auth').from('users').select('*');
    expect([bad.status, bad.error?.code]).toEqual([406, 'PGRST106']);
  });
});
