import { describe, expect, it } from 'vitest';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import {
  MAX_NESTING_DEPTH,
  RestError,
  effectiveRange,
  looksLikeFilter,
  parseFilterValue,
  parsePrefer,
  parseQuery,
  parseRangeHeader,
  parseSelect,
  preferenceApplied,
  splitQueryString,
  type ParsedQuery,
} from './parse.ts';

// ---------------------------------------------------------------------------------------------------------
// Real requests from the official client: supabase-js → postgrest-js builds the URL, our fetch records it.

interface Captured {
  method: string;
  url: URL;
  headers: Headers;
  body: string | null;
}

async function capture(build: (c: SupabaseClient) => PromiseLike<unknown>): Promise<Captured> {
  const seen: Captured[] = [];
  const client = createClient('http://127.0.0.1:1', 'anon-key', {
    accessToken: async () => 'token',
    global: {
      fetch: async (input: string | URL | Request, init?: RequestInit) => {
        const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
        seen.push({
          method: init?.method ?? 'GET',
          url,
          headers: new Headers(init?.headers),
          body: typeof init?.body === 'string' ? init.body : null,
        });
        return new Response('[]', { status: 200, headers: { 'content-type': 'application/json' } });
      },
    },
  });
  await build(client);
  expect(seen).toHaveLength(1);
  return seen[0]!;
}

async function parsed(build: (c: SupabaseClient) => PromiseLike<unknown>, rpc = false): Promise<ParsedQuery> {
  const req = await capture(build);
  // Parse the raw query string exactly as it arrives on the wire (percent escapes and '+').
  return parseQuery(req.url.search, { rpc });
}

const col = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'column',
  field: { name, jsonPath: [] },
  alias: null,
  cast: null,
  aggregate: null,
  ...extra,
});
const f = (name: string) => ({ name, jsonPath: [] });
const op = (o: string, value: string, negated = false) => ({ negated, operation: { kind: 'op', op: o, value } });

function pgrst100(fn: () => unknown): RestError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RestError);
    const err = e as RestError;
    expect(err.code).toBe('PGRST100');
    expect(err.status).toBe(400);
    return err;
  }
  throw new Error('expected a PGRST100 error');
}

describe('select, as postgrest-js sends it', () => {
  it('defaults to * and cleans whitespace outside quotes', async () => {
    expect((await parsed((c) => c.from('todos').select())).select).toEqual([{ type: 'star' }]);
    const q = await parsed((c) => c.from('todos').select('id, task , "my col"'));
    expect(q.select).toEqual([col('id'), col('task'), col('my col')]);
  });

  it('aliases, casts and JSON paths', async () => {
    const q = await parsed((c) => c.from('t').select('label:task, id::text, data->a->>b, first:data->items->0::int'));
    expect(q.select).toEqual([
      col('task', { alias: 'label' }),
      col('id', { cast: 'text' }),
      { ...col('data'), field: { name: 'data', jsonPath: [{ arrow: '->', kind: 'key', value: 'a' }, { arrow: '->>', kind: 'key', value: 'b' }] } },
      {
        ...col('data'),
        alias: 'first',
        cast: 'int',
        field: { name: 'data', jsonPath: [{ arrow: '->', kind: 'key', value: 'items' }, { arrow: '->', kind: 'index', value: '0' }] },
      },
    ]);
  });

  it('embeds: alias, FK hint, !inner / !left, nesting, spread', async () => {
    const q = await parsed((c) =>
      c.from('todos').select('*, owner:profiles(display_name), lists!todos_list_id_fkey!inner(name, tags(*)), ...authors!left(name)'),
    );
    expect(q.select).toEqual([
      { type: 'star' },
      { type: 'embed', relation: 'profiles', alias: 'owner', hint: null, joinType: null, spread: false, select: [col('display_name')] },
      {
        type: 'embed', relation: 'lists', alias: null, hint: 'todos_list_id_fkey', joinType: 'inner', spread: false,
        select: [col('name'), { type: 'embed', relation: 'tags', alias: null, hint: null, joinType: null, spread: false, select: [{ type: 'star' }] }],
      },
      { type: 'embed', relation: 'authors', alias: null, hint: null, joinType: 'left', spread: true, select: [col('name')] },
    ]);
  });

  it('empty embed (used for filtering with !inner) and an empty select', () => {
    expect(parseSelect('id,lists!inner()')[1]).toMatchObject({ type: 'embed', relation: 'lists', select: [] });
    expect(parseQuery('select=').select).toEqual([]);
  });

  it('aggregates are parsed so they can be refused later', () => {
    expect(parseSelect('total:count(),amount.sum()::int')).toEqual([
      { type: 'count', alias: 'total', cast: null },
      col('amount', { aggregate: { fn: 'sum', cast: 'int' } }),
    ]);
  });

  it('names with dashes, $, unicode, and quoted names with anything in them', () => {
    expect(parseSelect('my-col,$x,名前,"a;b\\"c",data->"k-1"')).toEqual([
      col('my-col'),
      col('$x'),
      col('名前'),
      col('a;b"c'),
      { ...col('data'), field: { name: 'data', jsonPath: [{ arrow: '->', kind: 'key', value: 'k-1' }] } },
    ]);
  });
});

describe('filters, as postgrest-js sends them', () => {
  it('comparison operators keep values as strings', async () => {
    const q = await parsed((c) =>
      c.from('t').select().eq('a', 1).neq('b', 'x').gt('c', 2.5).gte('d', '2024-01-01T00:00:00+00:00').lt('e', -1).lte('f', true).eq('g', null),
    );
    expect(q.filters).toEqual([
      { path: [], field: f('a'), expr: op('eq', '1') },
      { path: [], field: f('b'), expr: op('neq', 'x') },
      { path: [], field: f('c'), expr: op('gt', '2.5') },
      { path: [], field: f('d'), expr: op('gte', '2024-01-01T00:00:00+00:00') },
      { path: [], field: f('e'), expr: op('lt', '-1') },
      { path: [], field: f('f'), expr: op('lte', 'true') },
      { path: [], field: f('g'), expr: op('eq', 'null') },
    ]);
  });

  it('like / ilike / match / imatch with spaces, % and regex characters', async () => {
    const q = await parsed((c) => c.from('t').select().like('a', '%Foo Bar%').ilike('b', '*x*').regexMatch('c', '^a.*(b|c)$').regexIMatch('d', 'x+y'));
    expect(q.filters.map((x) => x.expr)).toEqual([op('like', '%Foo Bar%'), op('ilike', '*x*'), op('match', '^a.*(b|c)$'), op('imatch', 'x+y')]);
  });

  it('likeAllOf / ilikeAnyOf use quantifiers', async () => {
    const q = await parsed((c) => c.from('t').select().likeAllOf('a', ['%x%', '%y%']).ilikeAnyOf('b', ['a%']));
    expect(q.filters.map((x) => x.expr.operation)).toEqual([
      { kind: 'quant', op: 'like', quantifier: 'all', value: '{%x%,%y%}' },
      { kind: 'quant', op: 'ilike', quantifier: 'any', value: '{a%}' },
    ]);
  });

  it('is null / true / false and not.is.null', async () => {
    const q = await parsed((c) => c.from('t').select().is('a', null).is('b', true).is('c', false).not('d', 'is', null));
    expect(q.filters.map((x) => x.expr)).toEqual([
      { negated: false, operation: { kind: 'is', value: 'null' } },
      { negated: false, operation: { kind: 'is', value: 'true' } },
      { negated: false, operation: { kind: 'is', value: 'false' } },
      { negated: true, operation: { kind: 'is', value: 'null' } },
    ]);
    expect(parseFilterValue('is.UNKNOWN').operation).toEqual({ kind: 'is', value: 'unknown' });
  });

  it('in / notIn: quoted values with commas and parentheses, duplicates removed by the client', async () => {
    const q = await parsed((c) => c.from('t').select().in('a', ['x,y', 'plain', 'f(g)', 'plain']).in('b', [1, 2, 3]).notIn('c', ['q']));
    expect(q.filters.map((x) => x.expr)).toEqual([
      { negated: false, operation: { kind: 'in', values: ['x,y', 'plain', 'f(g)'] } },
      { negated: false, operation: { kind: 'in', values: ['1', '2', '3'] } },
      { negated: true, operation: { kind: 'in', values: ['q'] } },
    ]);
  });

  it('in with escaped quotes and an empty list', () => {
    expect(parseFilterValue('in.("a\\"b","c\\\\d",e)').operation).toEqual({ kind: 'in', values: ['a"b', 'c\\d', 'e'] });
    expect(parseFilterValue('in.()').operation).toEqual({ kind: 'in', values: [] });
    // a quote that does not close the element is part of a raw value, as in PostgREST
    expect(parseFilterValue('in.("a"b,c)').operation).toEqual({ kind: 'in', values: ['"a"b', 'c'] });
    // postgrest-js does not escape quotes inside the values it quotes; the element ends at a quote before , or )
    expect(parseFilterValue('in.("say "hi" (ok)",x)').operation).toEqual({ kind: 'in', values: ['say "hi" (ok)', 'x'] });
    // ...which stays ambiguous when an inner quote is itself followed by , or ) — such values need escaping
    expect(parseFilterValue('in.("say "hi", ok",x)').operation).toEqual({ kind: 'in', values: ['say "hi', ' ok"', 'x'] });
  });

  it('contains / containedBy / overlaps: arrays, JSON objects, raw strings', async () => {
    const q = await parsed((c) =>
      c.from('t').select().contains('a', ['x', 'y']).contains('b', { k: [1, 2] }).containedBy('c', '[1,5)').overlaps('d', ['p']),
    );
    expect(q.filters.map((x) => x.expr)).toEqual([op('cs', '{x,y}'), op('cs', '{"k":[1,2]}'), op('cd', '[1,5)'), op('ov', '{p}')]);
  });

  it('range operators and isDistinct', async () => {
    const q = await parsed((c) => c.from('t').select().rangeGt('a', '[1,2]').rangeAdjacent('b', '(3,4)').isDistinct('c', 'x'));
    expect(q.filters.map((x) => x.expr)).toEqual([op('sr', '[1,2]'), op('adj', '(3,4)'), op('isdistinct', 'x')]);
  });

  it('full-text search variants', async () => {
    const q = await parsed((c) =>
      c
        .from('t')
        .select()
        .textSearch('a', "'fat' & 'cat'")
        .textSearch('b', 'fat cat', { type: 'plain', config: 'english' })
        .textSearch('c', 'fat cat', { type: 'phrase' })
        .textSearch('d', '"fat cat" -dog', { type: 'websearch', config: 'simple' }),
    );
    expect(q.filters.map((x) => x.expr.operation)).toEqual([
      { kind: 'fts', op: 'fts', language: null, value: "'fat' & 'cat'" },
      { kind: 'fts', op: 'plfts', language: 'english', value: 'fat cat' },
      { kind: 'fts', op: 'phfts', language: null, value: 'fat cat' },
      { kind: 'fts', op: 'wfts', language: 'simple', value: '"fat cat" -dog' },
    ]);
  });

  it('not(), filter(), match() and filters on embedded columns and JSON paths', async () => {
    const q = await parsed((c) =>
      c
        .from('t')
        .select('*, profiles(*)')
        .not('a', 'eq', 'x')
        .filter('b', 'in', '("a,b",c)')
        .match({ c: 1, d: 'two' })
        .eq('profiles.display_name', 'Ann')
        .eq('data->>name', 'x')
        .gt('data->stats->0', 5),
    );
    expect(q.filters).toEqual([
      { path: [], field: f('a'), expr: op('eq', 'x', true) },
      { path: [], field: f('b'), expr: { negated: false, operation: { kind: 'in', values: ['a,b', 'c'] } } },
      { path: [], field: f('c'), expr: op('eq', '1') },
      { path: [], field: f('d'), expr: op('eq', 'two') },
      { path: ['profiles'], field: f('display_name'), expr: op('eq', 'Ann') },
      { path: [], field: { name: 'data', jsonPath: [{ arrow: '->>', kind: 'key', value: 'name' }] }, expr: op('eq', 'x') },
      {
        path: [],
        field: { name: 'data', jsonPath: [{ arrow: '->', kind: 'key', value: 'stats' }, { arrow: '->', kind: 'index', value: '0' }] },
        expr: op('gt', '5'),
      },
    ]);
  });

  it('values with URL-special characters, quotes, ; and unicode arrive intact', async () => {
    const nasty = `a&b=c#d;'" %25 + é ☕ 名前 \\ ) ( ,`;
    const q = await parsed((c) => c.from('t').select().eq('名前', nasty));
    expect(q.filters).toEqual([{ path: [], field: f('名前'), expr: op('eq', nasty) }]);
  });
});

describe('logic trees', () => {
  it('or with nested and, as sent by .or()', async () => {
    const q = await parsed((c) => c.from('t').select().or('a.eq.1,and(b.gt.2,c.is.null)'));
    expect(q.logic).toEqual([
      {
        path: [],
        tree: {
          type: 'expr', negated: false, op: 'or',
          children: [
            { type: 'filter', field: f('a'), expr: op('eq', '1') },
            {
              type: 'expr', negated: false, op: 'and',
              children: [
                { type: 'filter', field: f('b'), expr: op('gt', '2') },
                { type: 'filter', field: f('c'), expr: { negated: false, operation: { kind: 'is', value: 'null' } } },
              ],
            },
          ],
        },
      },
    ]);
  });

  it('or on a referenced table, not.or, and=, quoted values with , ( ) and arrays', async () => {
    const q = await parsed((c) =>
      c.from('t').select('*, lists(*)').or('name.eq."a,(b)",tags.cs.{x,y},id.in.(1,"2,3"),not.and(x.lt.1,y.not.is.null)', { referencedTable: 'lists' }),
    );
    expect(q.logic[0]?.path).toEqual(['lists']);
    expect(q.logic[0]?.tree.children).toEqual([
      { type: 'filter', field: f('name'), expr: op('eq', 'a,(b)') },
      { type: 'filter', field: f('tags'), expr: op('cs', '{x,y}') },
      { type: 'filter', field: f('id'), expr: { negated: false, operation: { kind: 'in', values: ['1', '2,3'] } } },
      {
        type: 'expr', negated: true, op: 'and',
        children: [
          { type: 'filter', field: f('x'), expr: op('lt', '1') },
          { type: 'filter', field: f('y'), expr: { negated: true, operation: { kind: 'is', value: 'null' } } },
        ],
      },
    ]);
    const raw = parseQuery('not.or=(a.eq.1,b.eq.2)&and=(c.gte.3,d->>k.eq.v)&rel.not.and=(e.eq.4)');
    expect(raw.logic.map((l) => [l.path, l.tree.negated, l.tree.op])).toEqual([
      [[], true, 'or'],
      [[], false, 'and'],
      [['rel'], true, 'and'],
    ]);
    expect(raw.logic[1]?.tree.children[1]).toEqual({
      type: 'filter', field: { name: 'd', jsonPath: [{ arrow: '->>', kind: 'key', value: 'k' }] }, expr: op('eq', 'v'),
    });
  });

  it('escaped quotes inside quoted logic values', () => {
    const q = parseQuery('or=' + encodeURIComponent('(a.eq."say \\"hi\\", ok",b.eq.x)'));
    expect(q.logic[0]?.tree.children[0]).toEqual({ type: 'filter', field: f('a'), expr: op('eq', 'say "hi", ok') });
  });

  it('unbalanced or empty trees are PGRST100 with the position', () => {
    const e1 = pgrst100(() => parseQuery('or=(a.eq.1'));
    expect(e1.message).toBe('"failed to parse logic tree ((a.eq.1)" (line 1, column 10)');
    expect(e1.details).toContain('end of input');
    pgrst100(() => parseQuery('or=a.eq.1)'));
    pgrst100(() => parseQuery('or=()'));
    pgrst100(() => parseQuery('or=(a.eq.1))'));
    pgrst100(() => parseQuery('or=(a.eq.1,xor(b.eq.2))'));
    pgrst100(() => parseQuery('or=(a.zz.1)'));
  });

  it(`nesting deeper than ${MAX_NESTING_DEPTH} levels is refused; ${MAX_NESTING_DEPTH} is fine`, () => {
    const nest = (n: number) => 'or=(' + 'and('.repeat(n - 1) + 'a.eq.1' + ')'.repeat(n);
    expect(parseQuery(nest(MAX_NESTING_DEPTH)).logic).toHaveLength(1);
    const e = pgrst100(() => parseQuery(nest(MAX_NESTING_DEPTH + 1)));
    expect(e.details).toContain('nested too deeply');
    // a pathological depth must not overflow the stack
    pgrst100(() => parseQuery(nest(100_000)));
  });
});

describe('order, limit, offset, range, columns, on_conflict', () => {
  it('order: repeated calls are comma-appended; nulls; referenced tables', async () => {
    const q = await parsed((c) =>
      c
        .from('t')
        .select('*, lists(*)')
        .order('id', { ascending: false, nullsFirst: true })
        .order('task')
        .order('name', { referencedTable: 'lists', nullsFirst: false }),
    );
    expect(q.order).toEqual([
      {
        path: [],
        terms: [
          { relation: null, field: f('id'), direction: 'desc', nulls: 'nullsfirst' },
          { relation: null, field: f('task'), direction: 'asc', nulls: null },
        ],
      },
      { path: ['lists'], terms: [{ relation: null, field: f('name'), direction: 'asc', nulls: 'nullslast' }] },
    ]);
  });

  it('order by a related column and by JSON paths; bare nulls without a direction', () => {
    expect(parseQuery('order=profiles(name).desc,data->k.asc.nullsfirst,x.nullslast').order[0]?.terms).toEqual([
      { relation: 'profiles', field: f('name'), direction: 'desc', nulls: null },
      { relation: null, field: { name: 'data', jsonPath: [{ arrow: '->', kind: 'key', value: 'k' }] }, direction: 'asc', nulls: 'nullsfirst' },
      { relation: null, field: f('x'), direction: null, nulls: 'nullslast' },
    ]);
  });

  it('range(10,19) is offset/limit; limit on a referenced table', async () => {
    const q = await parsed((c) => c.from('t').select('*, lists(*)').range(10, 19).limit(3, { referencedTable: 'lists' }));
    expect([q.offset, q.limit]).toEqual([10, 10]);
    expect(q.embeddedRanges).toEqual([{ path: ['lists'], limit: 3, offset: null }]);
    const q2 = await parsed((c) => c.from('t').select().limit(0));
    expect(q2.limit).toBe(0);
  });

  it('bad limit/offset values are PGRST100', () => {
    for (const bad of ['limit=abc', 'limit=-1', 'limit=1e3', 'limit=', 'offset=-5', 'offset=1.5', 'limit=99999999999999999999', 'rel.limit=x']) {
      const e = pgrst100(() => parseQuery(bad));
      expect(e.message).toMatch(/failed to parse (limit|offset) parameter/);
    }
  });

  it('bulk insert sends columns="a","b"; upsert sends on_conflict and resolution', async () => {
    const ins = await capture((c) => c.from('t').insert([{ task: 'a', done: false }, { task: 'b', 'odd name': 1 }]).select());
    const q = parseQuery(ins.url.search);
    expect(q.columns).toEqual(['task', 'done', 'odd name']);
    expect(q.select).toEqual([{ type: 'star' }]);
    expect(parsePrefer(ins.headers.get('prefer')).return).toBe('representation');

    const up = await capture((c) => c.from('t').upsert({ a: 1, b: 2 }, { onConflict: 'a,b', ignoreDuplicates: true, count: 'exact' }));
    expect(parseQuery(up.url.search).onConflict).toEqual(['a', 'b']);
    const prefs = parsePrefer(up.headers.get('prefer'));
    expect([prefs.resolution, prefs.count, prefs.return]).toEqual(['ignore-duplicates', 'exact', null]);

    const up2 = await capture((c) => c.from('t').upsert([{ a: 1 }], { defaultToNull: false }));
    expect(parsePrefer(up2.headers.get('prefer'))).toMatchObject({ resolution: 'merge-duplicates', missing: 'default' });
  });

  it('update / delete with filters and representation', async () => {
    const upd = await capture((c) => c.from('t').update({ done: true }).eq('id', 5).select('id'));
    expect(upd.method).toBe('PATCH');
    const q = parseQuery(upd.url.search);
    expect(q.filters).toEqual([{ path: [], field: f('id'), expr: op('eq', '5') }]);
    expect(q.select).toEqual([col('id')]);
    const del = await capture((c) => c.from('t').delete({ count: 'exact' }).in('id', [1, 2]));
    expect(del.method).toBe('DELETE');
    expect(parsePrefer(del.headers.get('prefer')).count).toBe('exact');
  });

  it('bad column lists are PGRST100', () => {
    pgrst100(() => parseQuery('columns=a;b'));
    pgrst100(() => parseQuery('on_conflict=a,'));
    pgrst100(() => parseQuery('columns="unterminated'));
  });
});

describe('rpc', () => {
  it('GET rpc: plain values are arguments, operator values are filters', async () => {
    const req = await capture((c) => c.rpc('search', { q: 'hello world', tags: ['a', 'b'], n: 3 }, { get: true }).gte('score', 2));
    expect(req.method).toBe('GET');
    expect(req.url.pathname).toBe('/rest/v1/rpc/search');
    const q = parseQuery(req.url.search, { rpc: true });
    expect(q.params).toEqual([
      ['q', 'hello world'],
      ['tags', '{a,b}'],
      ['n', '3'],
    ]);
    expect(q.filters).toEqual([{ path: [], field: f('score'), expr: op('gte', '2') }]);
  });

  it('outside rpc mode a value without an operator is a filter error', () => {
    const e = pgrst100(() => parseQuery('name=bob'));
    expect(e.message).toBe('"failed to parse filter (bob)" (line 1, column 1)');
    expect(e.details).toBe('unknown single value operator bob');
    expect(looksLikeFilter('name', 'bob')).toBe(false);
    expect(looksLikeFilter('name', 'not.eq.bob')).toBe(true);
    expect(looksLikeFilter('a.b', 'x')).toBe(true);
    expect(looksLikeFilter('a', 'fts(english).x')).toBe(true);
  });
});

describe('hostile and malformed input', () => {
  it('identifier injection in select, order, filter keys and logic trees', () => {
    const e = pgrst100(() => parseQuery('select=' + encodeURIComponent('id;drop table x')));
    expect(e.message).toBe('"failed to parse select parameter (id;drop table x)" (line 1, column 3)');
    expect(e.details).toMatch(/^unexpected ";" expecting /);
    expect(e.toJSON()).toEqual({ code: 'PGRST100', details: e.details, hint: null, message: e.message });

    const o = pgrst100(() => parseQuery('order=' + encodeURIComponent('id;--')));
    expect(o.message).toBe('"failed to parse order (id;--)" (line 1, column 3)');
    pgrst100(() => parseQuery('order=id.desc;select'));
    pgrst100(() => parseQuery('order=id.descc'));
    pgrst100(() => parseQuery('order=id.asc.nulls'));
    pgrst100(() => parseQuery(encodeURIComponent('id);drop table x;--') + '=eq.1'));
    pgrst100(() => parseQuery('or=' + encodeURIComponent('(id);drop.eq.1)')));
    pgrst100(() => parseQuery('select=' + encodeURIComponent('id::text;drop')));
    pgrst100(() => parseQuery('select=' + encodeURIComponent("id::text')")));
    pgrst100(() => parseQuery('select=' + encodeURIComponent('rel(id);x')));
    // a quoted identifier may contain anything: it is an exact name, quoted again when SQL is built
    expect(parseSelect('"id;drop table x"')).toEqual([col('id;drop table x')]);
  });

  it('values may contain anything; they never leave the AST as SQL', () => {
    const q = parseQuery('name=eq.' + encodeURIComponent("'; drop table todos; --"));
    expect(q.filters[0]?.expr).toEqual(op('eq', "'; drop table todos; --"));
  });

  it('unbalanced parentheses in select', () => {
    const e = pgrst100(() => parseQuery('select=id,name(id'));
    expect(e.message).toBe('"failed to parse select parameter (id,name(id)" (line 1, column 11)');
    pgrst100(() => parseQuery('select=id)'));
    pgrst100(() => parseQuery('select=(id)'));
    pgrst100(() => parseQuery('select=a((b))'));
    pgrst100(() => parseQuery('select=a!b!c!d(x)'));
    pgrst100(() => parseQuery('select=a!inner!left(x)'));
    pgrst100(() => parseQuery('select=a->(b)'));
    pgrst100(() => parseQuery('select=a::'));
    pgrst100(() => parseQuery('select=*!hint'));
    pgrst100(() => parseQuery('select=x:*'));
    pgrst100(() => parseQuery('select=a.nope()'));
  });

  it(`select embeds deeper than ${MAX_NESTING_DEPTH} levels are refused`, () => {
    const nest = (n: number) => 'select=' + 'a('.repeat(n) + 'id' + ')'.repeat(n);
    expect(parseQuery(nest(MAX_NESTING_DEPTH)).select).toHaveLength(1);
    expect(pgrst100(() => parseQuery(nest(MAX_NESTING_DEPTH + 1))).details).toContain('nested too deeply');
    pgrst100(() => parseQuery(nest(50_000)));
  });

  it('huge in-lists and selects parse without trouble', () => {
    const values = Array.from({ length: 100_000 }, (_, i) => (i % 3 === 0 ? `"v,${i}"` : String(i)));
    const q = parseQuery('id=in.(' + encodeURIComponent(values.join(',')) + ')');
    const op0 = q.filters[0]?.expr.operation;
    expect(op0?.kind === 'in' && op0.values.length).toBe(100_000);
    expect(op0?.kind === 'in' && op0.values[3]).toBe('v,3');
    const cols = Array.from({ length: 5000 }, (_, i) => `c${i}`).join(',');
    expect(parseQuery('select=' + cols).select).toHaveLength(5000);
  });

  it('empty values and keys', () => {
    expect(pgrst100(() => parseQuery('a=')).details).toContain('operator');
    pgrst100(() => parseQuery('a=not.'));
    pgrst100(() => parseQuery('a=eq'));
    pgrst100(() => parseQuery('a=in.'));
    pgrst100(() => parseQuery('a=in.(1,2'));
    pgrst100(() => parseQuery('a=in.(1,2)x'));
    pgrst100(() => parseQuery('a=is.maybe'));
    pgrst100(() => parseQuery('a=eq(some).x'));
    pgrst100(() => parseQuery('a=cs(any).{x}'));
    pgrst100(() => parseQuery('=eq.1'));
    pgrst100(() => parseQuery('a..b=eq.1'));
    pgrst100(() => parseQuery('order='));
    pgrst100(() => parseQuery('order=,'));
    // eq. with nothing after is a comparison with the empty string, as in PostgREST
    expect(parseQuery('a=eq.').filters[0]?.expr).toEqual(op('eq', ''));
    // a parameter without "=" is ignored, as in PostgREST
    expect(parseQuery('a&select=id').filters).toEqual([]);
  });

  it('malformed percent-encoding and invalid UTF-8 do not throw', () => {
    expect(splitQueryString('a=%zz%4')).toEqual([['a', '%zz%4']]);
    expect(splitQueryString('a=%ff%fe')).toEqual([['a', '\ufffd\ufffd']]);
    expect(parseQuery('name=eq.%E2%98%95+x').filters[0]?.expr).toEqual(op('eq', '☕ x'));
  });

  it('fuzz: random query strings either parse or fail with PGRST100 (deterministic seed)', () => {
    let seed = 42;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const atoms = [
      'id', 'a', 'b', '"q,(x)"', '*', ',', '(', ')', '.', '::', ':', '->', '->>', '!', '!inner', '...', 'eq', 'in', 'is', 'not',
      'or', 'and', 'null', '{', '}', '"', '\\', ';', '--', "'", ' ', '%', '+', '=', '&', 'é', '0', '-1', 'fts', '(any)',
    ];
    const gen = () => Array.from({ length: 1 + rnd(12) }, () => atoms[rnd(atoms.length)]).join('');
    const keys = ['select', 'order', 'or', 'and', 'not.or', 'rel.or', 'limit', 'offset', 'columns', 'on_conflict', 'id', 'rel.id', 'data->>k'];
    let ok = 0;
    let rejected = 0;
    for (let i = 0; i < 3000; i++) {
      const qs = `${keys[rnd(keys.length)]}=${encodeURIComponent(gen())}&${keys[rnd(keys.length)]}=${gen()}`;
      try {
        parseQuery(qs, { rpc: rnd(2) === 0 });
        ok++;
      } catch (e) {
        if (!(e instanceof RestError) || e.code !== 'PGRST100' || e.status !== 400) throw new Error(`unexpected error for ${qs}`, { cause: e });
        rejected++;
      }
    }
    expect(ok).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(100);
  });
});

describe('Prefer header', () => {
  it('single header, several headers, comma lists, first wins', () => {
    expect(parsePrefer('count=exact, return=representation')).toMatchObject({ count: 'exact', return: 'representation', invalid: [] });
    expect(parsePrefer(['resolution=ignore-duplicates', 'missing=default,tx=rollback', 'return=minimal', 'return=representation'])).toMatchObject({
      resolution: 'ignore-duplicates', missing: 'default', tx: 'rollback', return: 'minimal',
    });
    expect(parsePrefer('handling=strict, max-affected=5')).toMatchObject({ handling: 'strict', maxAffected: 5 });
    expect(parsePrefer('return=headers-only,count=planned').count).toBe('planned');
    expect(parsePrefer(null)).toMatchObject({ return: null, count: null, invalid: [] });
  });

  it('what postgrest-js sends for .maxAffected() and .rollback()', async () => {
    // maxAffected() is typed for PostgREST 13+ clients only; the untyped call sends the same request.
    type WithMax = { maxAffected(n: number): { rollback(): PromiseLike<unknown> } };
    const req = await capture((c) => (c.from('t').delete().eq('id', 1) as unknown as WithMax).maxAffected(3).rollback());
    expect(parsePrefer(req.headers.get('prefer'))).toMatchObject({ handling: 'strict', maxAffected: 3, tx: 'rollback' });
  });

  it('unknown preferences are ignored leniently and refused with handling=strict', () => {
    expect(parsePrefer('count=exactly, foo=bar, return=minimal').invalid).toEqual(['count=exactly', 'foo=bar']);
    try {
      parsePrefer('handling=strict, foo=bar');
      throw new Error('expected PGRST122');
    } catch (e) {
      expect(e).toBeInstanceOf(RestError);
      expect((e as RestError).toJSON()).toEqual({
        code: 'PGRST122', message: 'Invalid preferences given with handling=strict', details: 'Invalid preferences: foo=bar', hint: null,
      });
    }
  });

  it('Preference-Applied', () => {
    expect(preferenceApplied({ resolution: 'merge-duplicates', return: 'representation', count: 'exact' })).toBe(
      'resolution=merge-duplicates, return=representation, count=exact',
    );
    expect(preferenceApplied({})).toBeNull();
  });
});

describe('Range header', () => {
  it('parses first-last and first-, ignores other units and malformed values', () => {
    expect(parseRangeHeader('0-9', 'items')).toEqual({ offset: 0, limit: 10 });
    expect(parseRangeHeader('5-')).toEqual({ offset: 5, limit: null });
    expect(parseRangeHeader('0-9', 'bytes')).toBeNull();
    expect(parseRangeHeader('abc')).toBeNull();
    expect(parseRangeHeader(undefined)).toBeNull();
  });

  it('a lower bound above the upper is 416 PGRST103', () => {
    try {
      parseRangeHeader('10-5');
      throw new Error('expected PGRST103');
    } catch (e) {
      expect((e as RestError).status).toBe(416);
      expect((e as RestError).code).toBe('PGRST103');
    }
  });

  it('header and limit/offset restrict each other; max_rows caps', () => {
    expect(effectiveRange(null, null, null)).toEqual({ offset: 0, limit: null });
    expect(effectiveRange(null, null, null, 1000)).toEqual({ offset: 0, limit: 1000 });
    expect(effectiveRange({ offset: 0, limit: 10 }, null, null)).toEqual({ offset: 0, limit: 10 });
    expect(effectiveRange({ offset: 0, limit: 10 }, 5, 3)).toEqual({ offset: 3, limit: 5 });
    // no row in common: PostgREST's 416 ("Limit should be greater than or equal to zero."), limit=0 excepted
    expect(() => effectiveRange({ offset: 20, limit: 10 }, 5, 0)).toThrow(expect.objectContaining({ status: 416, code: 'PGRST103' }));
    expect(effectiveRange({ offset: 20, limit: 10 }, 0, 0)).toEqual({ offset: 20, limit: 0 });
    expect(effectiveRange(null, 5000, 10, 1000)).toEqual({ offset: 10, limit: 1000 });
  });
});
