// Hostile input against /rest/v1: identifier injection, quotes and `;` in values, deep nesting, huge in-lists,
// malformed JSON and wrong types answer 4xx with a code and leave the data intact; a fuzz loop over generated query
// strings never gets a 5xx. Length of the fuzz loop: LOCALBASE_FUZZ_COUNT (default 400).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOfBody, restFixture, restRaw, type RestFixture } from './rest-helpers.ts';

let f: RestFixture;
const QUOTED = `O'Brien"; drop table rt_todos; --`;

beforeAll(async () => {
  f = await restFixture();
  const rows = ['h1', 'h2', QUOTED].map((title, i) => ({ run: f.run, title, priority: i, done: false, tags: [], meta: {} }));
  expect((await f.alice.client.from('rt_todos').insert(rows)).error).toBeNull();
});
afterAll(async () => {
  await f?.lb.stop();
});

/** Everything alice owns in this run, as the service role sees it (the table must stay intact). */
async function snapshot(): Promise<string[]> {
  const r = await f.service.from('rt_todos').select('title').eq('run', f.run).order('title');
  expect(r.error).toBeNull();
  return (r.data ?? []).map((x) => x.title as string);
}

async function expect4xx(path: string, init: Parameters<typeof restRaw>[2] = {}): Promise<unknown> {
  const r = await restRaw(f.lb, path, { bearer: f.alice.token, ...init });
  expect(r.status, `${path} → ${r.status} ${r.text}`).toBeGreaterThanOrEqual(400);
  expect(r.status, `${path} → ${r.status} ${r.text}`).toBeLessThan(500);
  const code = codeOfBody(r.json);
  expect(typeof code, `${path}: ${r.text}`).toBe('string');
  return code;
}

describe('injection', () => {
  it('identifiers in select / order / filters / embeds / columns / on_conflict are checked, never spliced', async () => {
    const before = await snapshot();
    const bad = [
      'rt_todos?select=title,"x"";drop table rt_todos;--"',
      'rt_todos?select=title;drop table rt_todos',
      'rt_todos?select=title)from rt_todos;--',
      'rt_todos?select=*,rt_profiles(display_name;drop table rt_todos)',
      'rt_todos?select=title::text;drop table rt_todos',
      'rt_todos?select=title::regclass',
      'rt_todos?order=title;drop table rt_todos',
      'rt_todos?order=title.desc;delete from rt_todos',
      'rt_todos?order="title"" desc; --"',
      'rt_todos?title);drop table rt_todos;--=eq.1',
      'rt_todos?%22title%22%22=eq.1',
      'rt_todos?or=(title.eq.1);drop table rt_todos',
      'rt_todos?or=(title;drop.eq.1)',
      'rt_todos?title=eq.1&order=pg_sleep(1)',
      'rt_todos;drop table rt_todos',
      'rt_todos"?select=title',
      'rpc/rt_sum;drop table rt_todos?a=1',
    ];
    const codes = new Set<unknown>();
    for (const path of bad) codes.add(await expect4xx(path));
    for (const c of codes) expect(['PGRST100', '42703', 'PGRST200', '42704', 'PGRST205', 'PGRST202', 'PGRST125', 'PGRST204', 'PGRST118']).toContain(c);
    const write = await f.alice.client.from('rt_todos').insert({ run: f.run, title: 'x' }).select('title;drop table rt_todos');
    expect(write.status).toBe(400);
    const cols = await restRaw(f.lb, 'rt_todos?columns=title,"run);drop table rt_todos;--"', { method: 'POST', body: '[{"title":"z","run":"r"}]', bearer: f.alice.token });
    expect([cols.status, codeOfBody(cols.json)]).toEqual([400, 'PGRST204']);
    const conflict = await restRaw(f.lb, 'rt_todos?on_conflict=title);drop table rt_todos;--', { method: 'POST', body: '{"title":"z"}', bearer: f.alice.token, headers: { prefer: 'resolution=merge-duplicates' } });
    expect(conflict.status).toBe(400);
    expect(await snapshot()).toEqual(before);
  });

  it('quotes and ; in values are data: stored, matched and returned verbatim', async () => {
    const eq = await f.alice.client.from('rt_todos').select('title').eq('title', QUOTED);
    expect(eq.data).toEqual([{ title: QUOTED }]);
    const inList = await f.alice.client.from('rt_todos').select('title').in('title', [QUOTED, "'); drop table rt_todos; --"]);
    expect(inList.data).toEqual([{ title: QUOTED }]);
    const like = await f.alice.client.from('rt_todos').select('title').eq('run', f.run).like('title', "%'; drop%");
    expect(like.data).toEqual([]);
    const orValue = await f.alice.client.from('rt_todos').select('title').eq('run', f.run).or(`title.eq."a,b);drop table rt_todos;--",title.eq.h1`);
    expect(orValue.data).toEqual([{ title: 'h1' }]);
    const value = `'; delete from rt_todos where '1'='1`;
    const ins = await f.alice.client.from('rt_todos').insert({ run: f.run, title: value }).select('title').single();
    expect(ins.data).toEqual({ title: value });
    const upd = await f.alice.client.from('rt_todos').update({ meta: { q: `"; --` } }).eq('title', value).select('meta').single();
    expect(upd.data).toEqual({ meta: { q: `"; --` } });
    expect(await snapshot()).toContain('h1');
    expect((await f.alice.client.from('rt_todos').delete().eq('title', value).select('title')).data).toEqual([{ title: value }]);
  });
});

describe('limits and malformed input', () => {
  it('deep nesting of logic trees → 400 PGRST100; moderate nesting works', async () => {
    let deep = 'title.eq.h1';
    for (let i = 0; i < 60; i++) deep = `or(${deep},title.eq.x${i})`;
    expect(await expect4xx(`rt_todos?or=(${deep})`)).toBe('PGRST100');
    let ok = 'title.eq.h1';
    for (let i = 0; i < 8; i++) ok = `and(${ok},title.neq.x${i})`;
    const r = await restRaw(f.lb, `rt_todos?select=title&run=eq.${f.run}&or=(${ok})`, { bearer: f.alice.token });
    expect([r.status, r.json]).toEqual([200, [{ title: 'h1' }]]);
    let embeds = 'title';
    for (let i = 0; i < 40; i++) embeds = `rt_profiles(rt_todos(${embeds}))`;
    await expect4xx(`rt_todos?select=${embeds}`);
  });

  it('a large in-list works as one bound parameter; an oversized URL is refused with a 4xx', async () => {
    const values = Array.from({ length: 1500 }, (_, i) => `v${i}`).concat(['h2']);
    const r = await f.alice.client.from('rt_todos').select('title').in('title', values);
    expect([r.status, r.data]).toEqual([200, [{ title: 'h2' }]]);
    const huge = Array.from({ length: 20_000 }, (_, i) => i).join(',');
    const res = await fetch(`${f.lb.url}/rest/v1/rt_todos?priority=in.(${huge})`, { headers: { apikey: f.lb.anonKey } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });

  it('malformed JSON bodies → 400 PGRST102; bodies of the wrong shape → 400 with a code', async () => {
    for (const body of ['{', '[1,2', '{"title": "x",}', "{'title': 'x'}", 'nul']) {
      expect(await expect4xx('rt_todos', { method: 'POST', body })).toBe('PGRST102');
    }
    for (const body of ['1', '"text"', 'true', '[1, 2]', '[{"title":"a"}, 3]', '[{"run":"r","title":"a"}, {"other":1}]']) {
      await expect4xx('rt_todos', { method: 'POST', body });
    }
    await expect4xx('rt_todos?id=eq.1', { method: 'PATCH', body: '[' });
    await expect4xx('rpc/rt_sum', { method: 'POST', body: '{"a": ' });
    await expect4xx('rpc/rt_sum', { method: 'POST', body: '[1,2]' });
  });

  it('a JSON body nested over 1000 levels is refused with 400 PGRST102 and the server keeps answering (ADR 172)', async () => {
    // 200,000 levels (400 kB) once made PGlite panic ("ERRORDATA_STACK_SIZE exceeded"): every later request failed
    const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n);
    for (const [path, body] of [
      ['rpc/ev_keys', `{"a":${deep(200_000)}}`],
      ['rpc/rt_count_mine', `{"p_run":${deep(200_000)}}`],
      ['rt_todos', `{"run":"${f.run}","title":"deep","meta":${deep(1001)}}`],
    ] as const) {
      const r = await restRaw(f.lb, path, { bearer: f.alice.token, method: 'POST', body });
      expect([r.status, codeOfBody(r.json)], path).toEqual([400, 'PGRST102']);
    }
    const patch = await restRaw(f.lb, `rt_todos?run=eq.${f.run}`, { bearer: f.alice.token, method: 'PATCH', body: `{"meta":${deep(5000)}}` });
    expect([patch.status, codeOfBody(patch.json)]).toEqual([400, 'PGRST102']);
    // 1000 levels are data; and the database still answers
    const ok = await f.alice.client.from('rt_todos').insert({ run: f.run, title: 'deep-ok', meta: JSON.parse(deep(999)) as unknown }).select('title').single();
    expect([ok.error, ok.data]).toEqual([null, { title: 'deep-ok' }]);
    expect((await f.anon.rpc('ev_keys', { a: 1, b: 2 })).data).toBe(2);
    expect(await snapshot()).toContain('h1');
  });

  it('wrong types in bodies and filters → 400 with the PostgreSQL code', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ priority: 'high' }, '22P02'],
      [{ priority: 1e40 }, '22P02'], // json_populate_record reads "1e+40" as integer text, as PostgREST,
      [{ done: 'maybe' }, '22P02'],
      [{ created_at: 'not a date' }, '22007'],
      [{ tags: 'not-an-array' }, '22P02'],
      [{ title: 'nul\u0000byte' }, '22P05'],
    ];
    for (const [extra, code] of cases) {
      const r = await f.alice.client.from('rt_todos').insert({ run: f.run, title: 'typed', ...extra });
      expect([r.status, r.error?.code], JSON.stringify(extra)).toEqual([400, code]);
    }
    expect(await expect4xx('rt_todos?created_at=gt.yesterday-ish')).toMatch(/^22/);
    expect(await expect4xx('rt_todos?id=in.(1,two)')).toBe('22P02');
    expect(await expect4xx('rt_todos?tags=cs.{unclosed')).toBe('22P02');
    expect(await expect4xx('rt_todos?title=eq.%00')).toMatch(/^22/);
    expect(await expect4xx('rt_todos?limit=-1')).toBe('PGRST100');
    expect(await expect4xx('rt_todos?offset=abc')).toBe('PGRST100');
  });

  it('unsupported methods and paths → 4xx', async () => {
    expect((await restRaw(f.lb, 'rt_todos', { method: 'PUT', body: '{}', bearer: f.alice.token })).status).toBeLessThan(500);
    expect(await expect4xx('rt_todos/1')).toBe('PGRST125');
    expect(await expect4xx('rpc/rt_sum?a=1', { method: 'DELETE' })).toBe('PGRST117');
  });

  it('a malformed percent escape in the table or function name is a name that does not exist (404), not a 500', async () => {
    // PostgREST decodes path segments leniently: `%zz` stays as it is, so no table or function has that name.
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE'] as const) {
      const body = method === 'POST' || method === 'PATCH' ? '{}' : undefined;
      expect(await expect4xx('rt_%zz', { method, body })).toBe('PGRST205');
    }
    expect(await expect4xx('rpc/rt_%E0%A4%A', { method: 'POST', body: '{}' })).toBe('PGRST202');
    expect(await expect4xx('rpc/rt_%zz')).toBe('PGRST202');
  });
});

describe('fuzz', () => {
  it('generated query strings never produce a 5xx and leave the table intact', async () => {
    const before = await snapshot();
    let seed = Number(process.env.LOCALBASE_FUZZ_SEED ?? 12345);
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pick = <T,>(xs: readonly T[]): T => xs[rnd(xs.length)] as T;
    const cols = ['title', 'priority', 'done', 'tags', 'meta', 'id', 'owner', 'created_at', 'nope', 'meta->k', 'meta->>k', '"title"', 'title::text', 'x"y', '*'];
    const ops = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'is', 'in', 'cs', 'cd', 'ov', 'fts', 'match', 'not.eq', 'not.in', 'isdistinct', 'bogus', ''];
    const vals = ['1', 'null', 'true', 'abc', "'", '"', ';', '(1,2)', '{a,b}', '{"k":1}', '%', '*', '', '()', '(', ')', ',', '\\', '2024-01-01', '-1', '1e999', '%00'];
    const keys = ['select', 'order', 'limit', 'offset', 'or', 'and', 'not.or', 'columns', 'on_conflict'];
    const part = (): string => {
      const k = rnd(6);
      if (k === 0) return `select=${encodeURIComponent(Array.from({ length: 1 + rnd(3) }, () => (rnd(4) === 0 ? `rt_profiles(${pick(cols)})` : pick(cols))).join(','))}`;
      if (k === 1) return `order=${encodeURIComponent(`${pick(cols)}.${pick(['asc', 'desc', 'nullsfirst', 'x', ''])}`)}`;
      if (k === 2) return `${pick(keys)}=${encodeURIComponent(pick(vals))}`;
      if (k === 3) return `or=${encodeURIComponent(`(${pick(cols)}.${pick(ops)}.${pick(vals)},${pick(['and', 'or', 'not.and'])}(${pick(cols)}.${pick(ops)}.${pick(vals)}))`)}`;
      return `${encodeURIComponent(pick(cols))}=${encodeURIComponent(`${pick(ops)}.${pick(vals)}`)}`;
    };
    const count = Number(process.env.LOCALBASE_FUZZ_COUNT ?? 400);
    const statuses = new Map<number, number>();
    const codes = new Set<string>();
    for (let i = 0; i < count; i++) {
      const qs = Array.from({ length: 1 + rnd(4) }, part).join('&');
      const method = pick(['GET', 'GET', 'GET', 'HEAD', 'PATCH', 'DELETE', 'POST']);
      const table = pick(['rt_todos', 'rt_todos', 'rt_open_todos', 'rpc/rt_todos_of', 'rt_nope']);
      const body = method === 'PATCH' || method === 'POST' ? pick(['{"priority": 1}', '{"nope": 1}', '{', '[]', '{"title": null}']) : undefined;
      // writes filter on a run that has no rows, so the fuzz cannot change this run's data even when it succeeds
      const scoped = method === 'GET' || method === 'HEAD' ? qs : `${qs}&run=eq.none-${f.run}`;
      const r = await restRaw(f.lb, `${table}?${scoped}`, { method, body, bearer: pick([f.alice.token, f.bob.token, undefined]) });
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      expect(r.status, `${method} ${table}?${scoped} → ${r.text}`).toBeLessThan(500);
      if (r.status >= 400 && method !== 'HEAD') {
        const code = codeOfBody(r.json);
        expect(typeof code, `${method} ${table}?${scoped} → ${r.text}`).toBe('string');
        codes.add(code as string);
      }
    }
    // the generator must reach many parts of the pipeline, not just the parser
    expect(codes.size).toBeGreaterThanOrEqual(6);
    expect([...statuses.keys()].some((s) => s < 300)).toBe(true);
    expect(await snapshot()).toEqual(before);
  });
});
