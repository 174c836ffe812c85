// /rest/v1 rpc arguments, overloads and transaction preferences through the official supabase-js client (fixture:
// fixtures/rest-migrations/20250303000000_rest_rpc.sql, an events / venues domain, and 20250304000000_rest_variadic.sql): row-type arguments, unnamed
// parameters, overloads reached through defaults (300 PGRST203), PGRST202 texts and hints, Content-Range on scalar
// results, Prefer: tx=rollback under db-tx-end, upserts of the key alone, and missing=default per row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownDatabase } from './helpers.ts';
import { restFixture, restRaw, setAuthenticatorSetting, type RestFixture } from './rest-helpers.ts';

let f: RestFixture;
let hall: { id: number; run: string; name: string; city: string | null; capacity: number };
let arena: { id: number; run: string; name: string; city: string | null; capacity: number };

let dropScratch: (() => Promise<void>) | undefined;

beforeAll(async () => {
  // Its own database on PostgreSQL: db-tx-end = rollback must not reach the other files' servers.
  const own = await ownDatabase();
  dropScratch = own.drop;
  f = await restFixture(own.options);
  const v = await f.service
    .from('ev_venues')
    .insert([
      { run: f.run, name: 'Hall', city: 'Ghent', capacity: 120 },
      { run: f.run, name: 'Arena', city: null, capacity: 900 },
    ])
    .select('id, run, name, city, capacity')
    .order('id');
  if (v.error || !v.data) throw new Error(JSON.stringify(v.error));
  [hall, arena] = v.data as [typeof hall, typeof arena];
  const e = await f.service.from('ev_events').insert([
    { run: f.run, venue_id: hall.id, title: 'quiz' },
    { run: f.run, venue_id: hall.id, title: 'choir' },
    { run: f.run, venue_id: arena.id, title: 'final' },
  ]);
  if (e.error) throw new Error(JSON.stringify(e.error));
});

afterAll(async () => {
  if (f) await setAuthenticatorSetting(f.lb, 'db_tx_end', null).catch(() => undefined);
  await f?.lb.stop();
  await dropScratch?.();
});

/** Sets PostgREST's in-database db-tx-end (or resets it with null) and reloads the server's cache. */
const setTxEnd = (value: string | null): Promise<void> => setAuthenticatorSetting(f.lb, 'db_tx_end', value);

describe('row-type arguments', () => {
  it('a JSON object fills a table-row or view-row parameter; overloads are told apart by the argument name', async () => {
    const byRow = await f.anon.rpc('ev_events_at', { venue: hall }).select('title');
    expect([byRow.status, byRow.error, byRow.data]).toEqual([200, null, [{ title: 'quiz' }, { title: 'choir' }]]);
    // a partial object: the missing fields are NULL
    const partial = await f.anon.rpc('ev_events_at', { large: { id: arena.id, capacity: 900 } }).select('title');
    expect(partial.data).toEqual([{ title: 'final' }]);
    const text = await f.anon.rpc('ev_describe', { venue: { name: 'Hall', capacity: 120 } });
    expect([text.status, text.data]).toEqual([200, 'Hall in nowhere for 120']);
    // the record literal still works, and an array of rows from a JSON array of objects
    expect((await f.anon.rpc('ev_describe', { venue: `(1,x,Cave,Liège,30)` })).data).toBe('Cave in Liège for 30');
    expect((await f.anon.rpc('ev_largest', { venues: [hall, arena] })).data).toBe('Arena');
  });

  it('row results: a single row as an object, with embeds and filters applied after the call', async () => {
    const ev = (await f.service.from('ev_events').select('id, run, venue_id, title').eq('run', f.run).eq('title', 'final').single()).data!;
    const venue = await f.anon.rpc('ev_venue_of', { ev }).select('name, capacity');
    expect([venue.status, venue.data]).toEqual([200, { name: 'Arena', capacity: 900 }]);
    const first = await f.anon.rpc('ev_first_event', { venue: hall }).select('title, ev_venues(name)');
    expect(first.data).toEqual({ title: 'quiz', ev_venues: { name: 'Hall' } });
    const filtered = await f.anon.rpc('ev_first_event', { venue: hall }).eq('title', 'nope').select('title');
    expect([filtered.status, filtered.data]).toEqual([200, null]);
  });

  it('a malformed row value is PostgreSQL’s own 400', async () => {
    const bad = await f.anon.rpc('ev_describe', { venue: { capacity: 'lots' } });
    expect([bad.status, bad.error?.code]).toEqual([400, '22P02']);
  });
});

describe('unnamed parameters', () => {
  it('a single unnamed text / jsonb parameter receives the body as sent; an unnamed int is no endpoint', async () => {
    // the text overload takes the whole JSON body; the int overload is not callable, so nothing is ambiguous
    const shout = await restRaw(f.lb, 'rpc/ev_shout', { method: 'POST', body: '{"": "hey"}' });
    expect([shout.status, shout.json]).toEqual([200, '{"": "HEY"}']);
    expect((await f.anon.rpc('ev_keys', { a: 1, b: 2, c: 3 })).data).toBe(3);
    expect((await f.anon.rpc('ev_keys', { '': 1 })).data).toBe(1);
    const plain = await restRaw(f.lb, 'rpc/ev_shout', { method: 'POST', body: 'quiet please', headers: { 'content-type': 'text/plain' } });
    expect([plain.status, plain.json]).toEqual([200, 'QUIET PLEASE']);
    const bytes = await fetch(`${f.lb.url}/rest/v1/rpc/ev_size`, {
      method: 'POST',
      headers: { apikey: f.lb.anonKey, 'content-type': 'application/octet-stream' },
      body: new Uint8Array([0, 1, 2, 255, 254]),
    });
    expect([bytes.status, await bytes.json()]).toEqual([200, 5]);

    const int = await f.anon.rpc('ev_numbered', { '': 4 });
    expect([int.status, int.error]).toEqual([
      404,
      {
        code: 'PGRST202',
        message: 'Could not find the function public.ev_numbered() in the schema cache',
        details: 'Searched for the function public.ev_numbered with parameter  or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
        hint: null,
      },
    ]);
    // a computed-field style function f(table) is not an rpc endpoint either
    const computed = await f.anon.rpc('ev_headline');
    expect([computed.status, computed.error?.message, computed.error?.details]).toEqual([
      404,
      'Could not find the function public.ev_headline without parameters in the schema cache',
      'Searched for the function public.ev_headline without parameters or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
    ]);
  });
});

describe('overloads and defaults', () => {
  it('several overloads reachable through defaults → 300 PGRST203, fewer parameters listed first', async () => {
    for (const call of [() => f.anon.rpc('ev_pick'), () => f.anon.rpc('ev_pick', {})]) {
      const r = await call();
      expect([r.status, r.error]).toEqual([
        300,
        {
          code: 'PGRST203',
          message: 'Could not choose the best candidate function between: public.ev_pick(), public.ev_pick( => text), public.ev_pick(n => integer)',
          details: null,
          hint: 'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
        },
      ]);
    }
    expect((await f.anon.rpc('ev_pick', { n: 7 })).data).toBe('int:7');
    expect((await f.anon.rpc('ev_pick', { '': 'abc' })).data).toBe('text:{"":"abc"}');
  });

  it('PGRST202 hints: a close function name, or the closest parameter list of the overloads', async () => {
    const typo = await f.anon.rpc('ev_capacty', { p_id: 1 });
    expect([typo.status, typo.error?.message, typo.error?.details, typo.error?.hint]).toEqual([
      404,
      'Could not find the function public.ev_capacty(p_id) in the schema cache',
      'Searched for the function public.ev_capacty with parameter p_id or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
      'Perhaps you meant to call the function public.ev_capacity',
    ]);
    const params = await f.anon.rpc('ev_rename', { p_id: 1, p_nam: 'x' });
    expect([params.error?.message, params.error?.hint]).toEqual([
      'Could not find the function public.ev_rename(p_id, p_nam) in the schema cache',
      'Perhaps you meant to call the function public.ev_rename(p_id, p_name)',
    ]);
    const get = await f.anon.rpc('ev_capacity', { id: 1 }, { get: true });
    expect(get.error?.details).toBe('Searched for the function public.ev_capacity with parameter id, but no matches were found in the schema cache.');
    const far = await f.anon.rpc('zzzz_unrelated');
    expect([far.error?.message, far.error?.hint]).toEqual(['Could not find the function public.zzzz_unrelated without parameters in the schema cache', null]);
  });
});

describe('repeated parameters (GET, form POST)', () => {
  it('a VARIADIC parameter takes every repeated value as PostgREST does; another parameter the last one', async () => {
    const three = await restRaw(f.lb, 'rpc/ev_total?n=1&n=2&n=3');
    expect([three.status, three.json]).toEqual([200, 6]);
    const one = await restRaw(f.lb, 'rpc/ev_total?n=4');
    expect([one.status, one.json]).toEqual([200, 4]);
    const form = await restRaw(f.lb, 'rpc/ev_total', { method: 'POST', body: 'n=5&n=6', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect([form.status, form.json]).toEqual([200, 11]);
    const last = await restRaw(f.lb, `rpc/ev_capacity?p_id=${hall.id}&p_id=${arena.id}`);
    expect([last.status, last.json]).toEqual([200, 900]);
  });
});

describe('Content-Range and count on scalar results', () => {
  it('POST, GET and HEAD with count=exact report one row', async () => {
    const post = await f.anon.rpc('ev_capacity', { p_id: arena.id }, { count: 'exact' });
    expect([post.status, post.data, post.count]).toEqual([200, 900, 1]);
    const get = await f.anon.rpc('ev_capacity', { p_id: arena.id }, { get: true, count: 'exact' });
    expect([get.data, get.count]).toEqual([900, 1]);
    const head = await f.anon.rpc('ev_capacity', { p_id: arena.id }, { head: true, count: 'exact' });
    expect([head.status, head.data, head.count]).toEqual([200, null, 1]);
    const raw = await restRaw(f.lb, 'rpc/ev_capacity', { method: 'POST', body: JSON.stringify({ p_id: arena.id }) });
    expect(raw.headers.get('content-range')).toBe('0-0/*');
    const none = await restRaw(f.lb, 'rpc/ev_noop', { method: 'POST', body: '{}', headers: { prefer: 'count=exact' } });
    expect([none.status, none.headers.get('content-range')]).toEqual([204, '0-0/1']);
  });
});

describe('Prefer: tx under db-tx-end', () => {
  const nameOf = async (id: number) => (await f.service.from('ev_venues').select('name').eq('id', id).single()).data?.name;

  it('default commit: tx=rollback is ignored and not reported', async () => {
    await setTxEnd(null);
    const r = await f.service.from('ev_venues').update({ city: 'Bruges' }).eq('id', hall.id).select('city').rollback();
    expect([r.status, r.data]).toEqual([200, [{ city: 'Bruges' }]]);
    const raw = await restRaw(f.lb, `ev_venues?id=eq.${hall.id}`, { method: 'PATCH', body: '{"city": "Ghent"}', headers: { prefer: 'tx=rollback' }, apikey: f.lb.serviceRoleKey });
    expect([raw.status, raw.headers.get('preference-applied')]).toEqual([204, null]);
    expect((await f.service.from('ev_venues').select('city').eq('id', hall.id).single()).data?.city).toBe('Ghent');
  });

  it('commit-allow-override: writes and rpc roll back but still answer, with Preference-Applied', async () => {
    await setTxEnd('commit-allow-override');
    try {
      const ins = await f.service.from('ev_venues').insert({ run: f.run, name: 'Ghost', capacity: 5 }).select('name, capacity').rollback().single();
      expect([ins.status, ins.data]).toEqual([201, { name: 'Ghost', capacity: 5 }]);
      const up = await f.service.from('ev_venues').upsert({ id: hall.id, run: f.run, name: 'Hall', city: 'Paris', capacity: 120 }).select('city').rollback();
      expect(up.data).toEqual([{ city: 'Paris' }]);
      const upd = await f.service.from('ev_venues').update({ name: 'Renamed' }).eq('id', hall.id).select('name').rollback();
      expect(upd.data).toEqual([{ name: 'Renamed' }]);
      const rpc = await f.service.rpc('ev_rename', { p_id: hall.id, p_name: 'ViaRpc' }).rollback();
      expect(rpc.data).toBe('ViaRpc');
      const del = await f.service.from('ev_events').delete().eq('run', f.run).eq('title', 'choir').select('title').rollback();
      expect(del.data).toEqual([{ title: 'choir' }]);
      const raw = await restRaw(f.lb, `ev_venues?id=eq.${hall.id}`, {
        method: 'PATCH', body: '{"city": "Rome"}', headers: { prefer: 'return=minimal, tx=rollback' }, apikey: f.lb.serviceRoleKey,
      });
      expect([raw.status, raw.headers.get('preference-applied')]).toEqual([204, 'return=minimal, tx=rollback']);

      expect(await nameOf(hall.id)).toBe('Hall');
      const left = await f.service.from('ev_venues').select('name, city').eq('run', f.run).order('id');
      expect(left.data).toEqual([{ name: 'Hall', city: 'Ghent' }, { name: 'Arena', city: null }]);
      expect((await f.service.from('ev_events').select('title').eq('run', f.run).eq('title', 'choir')).data).toEqual([{ title: 'choir' }]);

      // tx=commit (or no preference) commits
      const kept = await restRaw(f.lb, `ev_venues?id=eq.${arena.id}`, { method: 'PATCH', body: '{"city": "Antwerp"}', headers: { prefer: 'tx=commit' }, apikey: f.lb.serviceRoleKey });
      expect([kept.status, kept.headers.get('preference-applied')]).toEqual([204, 'tx=commit']);
      expect((await f.service.from('ev_venues').select('city').eq('id', arena.id).single()).data?.city).toBe('Antwerp');

      // deferred constraints are checked before the rollback: a bad row is still an error
      const deferred = await f.service.from('ev_tickets').insert({ run: f.run, event_id: -1 }).select().rollback();
      expect([deferred.status, deferred.error?.code]).toEqual([409, '23503']);
    } finally {
      await setTxEnd(null);
    }
  });

  it('rollback (without override): every write is undone, tx=commit is not honoured', async () => {
    await setTxEnd('rollback');
    try {
      const r = await restRaw(f.lb, `ev_venues?id=eq.${arena.id}`, { method: 'PATCH', body: '{"city": "Lille"}', headers: { prefer: 'tx=commit' }, apikey: f.lb.serviceRoleKey });
      expect([r.status, r.headers.get('preference-applied')]).toEqual([204, null]);
      expect((await f.service.from('ev_venues').select('city').eq('id', arena.id).single()).data?.city).toBe('Antwerp');
    } finally {
      await setTxEnd(null);
    }
  });
});

describe('upsert and missing=default', () => {
  it('an upsert whose body holds only the conflict key updates and returns the existing row', async () => {
    const r = await f.service.from('ev_venues').upsert({ run: f.run, name: 'Arena' }, { onConflict: 'run,name' }).select('name, capacity');
    expect([r.status, r.data]).toEqual([200, [{ name: 'Arena', capacity: 900 }]]);
    const ignored = await f.service.from('ev_venues').upsert({ run: f.run, name: 'Arena' }, { onConflict: 'run,name', ignoreDuplicates: true }).select('name');
    expect([ignored.status, ignored.data]).toEqual([201, []]);
  });

  it('missing=default takes each column default for every row: sequences advance once per row', async () => {
    const before = (await f.service.from('ev_counters').insert({ run: f.run }).select('id, stamp').single()).data!;
    const bulk = await f.service
      .from('ev_counters')
      .insert([{ run: f.run, id: before.id + 1000000 }, { run: f.run, label: 'given' }], { defaultToNull: false })
      .select('id, label, stamp');
    expect(bulk.status).toBe(201);
    const [a, b] = bulk.data as Array<{ id: number; label: string; stamp: number }>;
    // row 1 gave its id but the serial still advanced for it; row 2 gave its label and got the default stamp
    expect(a).toEqual({ id: before.id + 1000000, label: 'plain', stamp: before.stamp + 1 });
    expect(b).toEqual({ id: before.id + 2, label: 'given', stamp: before.stamp + 2 });
  });
});
