// Realtime postgres changes with supabase-js's channel().on('postgres_changes', …) over real WebSockets: payloads of
// INSERT / UPDATE / DELETE as realtime-js hands them to the app, `*` and per-event bindings, every filter operator,
// RLS per subscriber (two users and anon; fixtures/realtime-changes-migrations), column privileges, rollbacks, a token
// refreshed on an open socket, an expired one, the system errors of bad bindings, and tables published later.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RealtimeChannel, SupabaseClient } from '@supabase/supabase-js';
import { emptySeedFile, ownDatabase, sleep, startTestServer, testDatabaseUrl, type Localbase } from './helpers.ts';
import { accessToken, closeRealtimeClients, realtimeClient, subscribe, until } from './realtime-helpers.ts';

const migrationsDir = fileURLToPath(new URL('./fixtures/realtime-changes-migrations/', import.meta.url));
let lb: Localbase;
let dropScratch: (() => Promise<void>) | undefined;
const alice = crypto.randomUUID();
const bob = crypto.randomUUID();

beforeAll(async () => {
  // Its own database on PostgreSQL: the publication and its tables must not reach the other files.
  const own = await ownDatabase();
  dropScratch = own.drop;
  lb = await startTestServer({ migrationsDir, seedFile: emptySeedFile, ...own.options });
});

afterAll(async () => {
  await closeRealtimeClients();
  await lb?.stop();
  await dropScratch?.();
});

/** What realtime-js hands a postgres_changes callback. */
interface Change {
  schema: string;
  table: string;
  commit_timestamp: string;
  eventType: string;
  new: Record<string, unknown>;
  old: Record<string, unknown>;
  errors: unknown;
}
interface Binding {
  event: '*' | 'INSERT' | 'UPDATE' | 'DELETE';
  schema: string;
  table?: string;
  filter?: string;
}
interface Listener {
  channel: RealtimeChannel;
  /** What each binding's callback received, in order. */
  heard: Change[][];
  system: Record<string, unknown>[];
}

let channelNo = 0;

/** A channel with postgres_changes bindings, subscribed (status and system messages collected). */
async function listen(client: SupabaseClient, bindings: Binding[]): Promise<Listener & { status: string }> {
  const channel = client.channel(`changes-${++channelNo}`);
  const heard: Change[][] = bindings.map(() => []);
  const system: Record<string, unknown>[] = [];
  bindings.forEach((b, i) => channel.on('postgres_changes', b, (p: Change) => heard[i]!.push(p)));
  channel.on('system', {}, (m: Record<string, unknown>) => system.push(m));
  const { status } = await subscribe(channel);
  return { channel, heard, system, status };
}

async function userClient(sub: string): Promise<SupabaseClient> {
  const client = realtimeClient(lb);
  await client.realtime.setAuth(await accessToken(lb, 3600, sub));
  return client;
}

const exec = (sql: string, params: unknown[] = []) => lb.db.query(sql, params);
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('realtime: postgres changes payloads', () => {
  it('delivers INSERT, UPDATE and DELETE as realtime-js hands them to the app', async () => {
    const l = await listen(realtimeClient(lb), [{ event: '*', schema: 'public', table: 'plain' }]);
    expect(l.status).toBe('SUBSCRIBED');
    await until(() => l.system.length > 0, 2000, 'the subscription status');
    expect(l.system[0]).toMatchObject({ extension: 'postgres_changes', status: 'ok', message: 'Subscribed to PostgreSQL' });

    await exec(`insert into public.plain (id, body, n, secret) values (1, 'one', 10, 'hidden')`);
    await exec(`update public.plain set body = 'uno', n = 11 where id = 1`);
    await exec(`delete from public.plain where id = 1`);
    await until(() => l.heard[0]!.length === 3, 3000, 'three changes');
    const [ins, upd, del] = l.heard[0]!;
    // The anon role may not select `secret`: it is in neither the columns nor the records.
    expect(ins).toEqual({
      schema: 'public',
      table: 'plain',
      commit_timestamp: expect.stringMatching(TIMESTAMP),
      eventType: 'INSERT',
      new: { id: 1, body: 'one', n: 10 },
      old: {},
      errors: null,
    });
    expect(Date.now() - Date.parse(ins!.commit_timestamp)).toBeLessThan(5000);
    // The old row is its replica identity: the primary key by default.
    expect(upd).toMatchObject({ eventType: 'UPDATE', new: { id: 1, body: 'uno', n: 11 }, old: { id: 1 }, errors: null });
    expect(del).toMatchObject({ eventType: 'DELETE', new: {}, old: { id: 1 }, errors: null });
  });

  it('sends every selectable column of the old row with REPLICA IDENTITY FULL', async () => {
    await exec('alter table public.plain replica identity full');
    try {
      const l = await listen(realtimeClient(lb), [{ event: '*', schema: 'public', table: 'plain' }]);
      await exec(`insert into public.plain values (2, 'two', 20, 's')`);
      await exec(`update public.plain set n = 21 where id = 2`);
      await exec(`delete from public.plain where id = 2`);
      await until(() => l.heard[0]!.length === 3, 3000, 'three changes');
      expect(l.heard[0]![1]!.old).toEqual({ id: 2, body: 'two', n: 20 });
      // No RLS on the table: a DELETE carries the whole (selectable) old row.
      expect(l.heard[0]![2]!.old).toEqual({ id: 2, body: 'two', n: 21 });
    } finally {
      await exec('alter table public.plain replica identity default');
    }
  });

  it('sends a change over 1 MiB as Realtime does: values over 64 bytes left out, errors ["Error 413: Payload Too Large"]', async () => {
    // localbase sent the whole row to every subscriber (a row of 20 MB was a 20 MB frame to each of them).
    await exec('alter table public.plain replica identity full');
    try {
      const l = await listen(realtimeClient(lb), [{ event: '*', schema: 'public', table: 'plain' }]);
      const big = 'b'.repeat(1_100_000);
      const short = 's'.repeat(62); // 64 bytes as JSON text, with its quotes
      await exec(`insert into public.plain (id, body, n) values (3, $1, 30)`, [big]);
      await exec(`update public.plain set n = 31, body = $1 where id = 3`, [short]);
      await exec(`update public.plain set body = $1 where id = 3`, [`${short}x`]);
      await exec('delete from public.plain where id = 3');
      await until(() => l.heard[0]!.length === 4, 5000, 'four changes');
      const [ins, upd, small, del] = l.heard[0]!;
      const tooLarge = ['Error 413: Payload Too Large'];
      expect(ins).toMatchObject({ eventType: 'INSERT', new: { id: 3, n: 30 }, errors: tooLarge });
      expect(ins!.new).not.toHaveProperty('body');
      // the old image (REPLICA IDENTITY FULL) counts as well
      expect(upd).toMatchObject({ eventType: 'UPDATE', new: { id: 3, n: 31, body: short }, old: { id: 3, n: 30 }, errors: tooLarge });
      expect(upd!.old).not.toHaveProperty('body');
      expect(small).toMatchObject({ eventType: 'UPDATE', new: { body: `${short}x` }, old: { body: short }, errors: null });
      expect(del).toMatchObject({ eventType: 'DELETE', old: { id: 3, body: `${short}x` }, errors: null });
    } finally {
      await exec('alter table public.plain replica identity default');
    }
  });

  it('converts values by their column types (arrays, json, booleans, timestamps)', async () => {
    const l = await listen(realtimeClient(lb, { key: lb.serviceRoleKey }), [{ event: 'INSERT', schema: 'public', table: 'items' }]);
    await exec(`insert into public.items (title, qty, tags, meta, done) values ('typed', 3, '{a,b}', '{"k": [1, 2]}', true)`);
    await until(() => l.heard[0]!.length === 1, 3000, 'the insert');
    const row = l.heard[0]![0]!.new;
    expect(row).toMatchObject({ title: 'typed', qty: 3, tags: ['a', 'b'], meta: { k: [1, 2] }, done: true, owner: null });
    expect(typeof row.id).toBe('number');
    expect(Number.isNaN(Date.parse(row.created_at as string))).toBe(false);
  });

  it('calls each binding of a channel for its own events only, and `*` for all of them', async () => {
    const l = await listen(realtimeClient(lb), [
      { event: '*', schema: 'public', table: 'plain' },
      { event: 'INSERT', schema: 'public', table: 'plain' },
      { event: 'UPDATE', schema: 'public', table: 'plain' },
      { event: 'DELETE', schema: 'public', table: 'plain' },
      { event: '*', schema: 'public' },
    ]);
    expect(l.status).toBe('SUBSCRIBED');
    await exec(`insert into public.plain values (3, 'three', 30, null)`);
    await exec(`update public.plain set n = 31 where id = 3`);
    await exec(`delete from public.plain where id = 3`);
    await until(() => l.heard[0]!.length === 3 && l.heard[4]!.length === 3, 3000, 'the changes');
    await sleep(200);
    expect(l.heard.map((h) => h.map((c) => c.eventType))).toEqual([
      ['INSERT', 'UPDATE', 'DELETE'],
      ['INSERT'],
      ['UPDATE'],
      ['DELETE'],
      ['INSERT', 'UPDATE', 'DELETE'],
    ]);
  });
});

describe('realtime: postgres changes filters', () => {
  it('applies eq, neq, lt, lte, gt, gte, in, not. and AND, compared as the column type', async () => {
    const filters = [
      'n=eq.20',
      'n=neq.20',
      'n=lt.20',
      'n=lte.20',
      'n=gt.20',
      'n=gte.20',
      'body=in.(ten,"twenty, or so")',
      'n=not.in.(10,30)',
      'n=gt.5,n=lt.25',
      'body=eq."twenty, or so"',
    ];
    const l = await listen(
      realtimeClient(lb),
      filters.map((filter) => ({ event: 'INSERT', schema: 'public', table: 'plain', filter })),
    );
    expect(l.status).toBe('SUBSCRIBED');
    await exec(`insert into public.plain (id, body, n) values (10, 'ten', 10), (20, 'twenty, or so', 20), (30, 'thirty', 30)`);
    // 9 < 10 as numbers, not as text: a text comparison would put "9" after "20".
    await exec(`insert into public.plain (id, body, n) values (9, 'nine', 9)`);
    await until(() => l.heard[1]!.length === 3, 3000, 'the neq binding');
    await sleep(300);
    const ids = l.heard.map((h) => h.map((c) => c.new.id).sort((a, b) => Number(a) - Number(b)));
    expect(Object.fromEntries(filters.map((f, i) => [f, ids[i]]))).toEqual({
      'n=eq.20': [20],
      'n=neq.20': [9, 10, 30],
      'n=lt.20': [9, 10],
      'n=lte.20': [9, 10, 20],
      'n=gt.20': [30],
      'n=gte.20': [20, 30],
      'body=in.(ten,"twenty, or so")': [10, 20],
      'n=not.in.(10,30)': [9, 20],
      'n=gt.5,n=lt.25': [9, 10, 20],
      'body=eq."twenty, or so"': [20],
    });
    await exec('delete from public.plain where id in (9, 10, 20, 30)');
  });

  it('filters DELETE on the old row’s primary key', async () => {
    const l = await listen(realtimeClient(lb), [
      { event: 'DELETE', schema: 'public', table: 'plain', filter: 'id=eq.41' },
      { event: 'DELETE', schema: 'public', table: 'plain', filter: 'n=eq.41' },
    ]);
    await exec(`insert into public.plain (id, body, n) values (41, 'a', 41), (42, 'b', 42)`);
    await exec('delete from public.plain where id in (41, 42)');
    await until(() => l.heard[0]!.length === 1, 3000, 'the delete');
    await sleep(200);
    expect(l.heard[0]!.map((c) => c.old)).toEqual([{ id: 41 }]);
    // `n` is not in the replica identity: the filter cannot match a DELETE (as upstream).
    expect(l.heard[1]).toEqual([]);
  });
});

describe('realtime: postgres changes under RLS', () => {
  it('delivers a row only to the subscribers whose policies let them select it', async () => {
    const bindings: Binding[] = [{ event: '*', schema: 'public', table: 'items' }];
    const a = await listen(await userClient(alice), bindings);
    const b = await listen(await userClient(bob), bindings);
    const anon = await listen(realtimeClient(lb), bindings);
    const service = await listen(realtimeClient(lb, { key: lb.serviceRoleKey }), bindings);
    for (const l of [a, b, anon, service]) expect(l.status).toBe('SUBSCRIBED');

    const { rows } = await exec(`insert into public.items (owner, title) values ($1, 'alice secret') returning id`, [alice]);
    const aliceRow = Number(rows[0]!.id);
    await exec(`insert into public.items (owner, title) values ($1, 'bob secret')`, [bob]);
    await exec(`insert into public.items (owner, title) values (null, 'for everyone')`);
    await exec(`update public.items set title = 'alice secret, edited' where id = $1`, [aliceRow]);
    await until(() => service.heard[0]!.length === 4 && a.heard[0]!.length === 2, 3000, 'the changes');
    await sleep(300);
    const titles = (l: Listener) => l.heard[0]!.map((c) => `${c.eventType} ${String((c.new as { title?: string }).title)}`);
    expect(titles(a)).toEqual(['INSERT alice secret', 'UPDATE alice secret, edited']);
    expect(titles(b)).toEqual(['INSERT bob secret']);
    expect(titles(anon)).toEqual(['INSERT for everyone']);
    expect(titles(service)).toHaveLength(4);

    // A DELETE cannot be checked against a row that is gone: everyone subscribed hears it, with the primary key only.
    await exec('delete from public.items where id = $1', [aliceRow]);
    await until(() => b.heard[0]!.length === 2 && anon.heard[0]!.length === 2, 3000, 'the delete');
    expect(b.heard[0]![1]).toMatchObject({ eventType: 'DELETE', old: { id: aliceRow }, new: {} });
    expect(Object.keys(b.heard[0]![1]!.old)).toEqual(['id']);
    await exec('delete from public.items');
  });

  it('answers a role that may not select the primary key, and a table without one, with upstream’s errors', async () => {
    const l = await listen(realtimeClient(lb), [
      { event: 'INSERT', schema: 'public', table: 'hidden_key' },
      { event: 'INSERT', schema: 'public', table: 'nokey' },
    ]);
    expect(l.status).toBe('SUBSCRIBED');
    await exec(`insert into public.hidden_key values (1, 'x')`);
    await exec(`insert into public.nokey values ('y')`);
    await until(() => l.heard[0]!.length === 1 && l.heard[1]!.length === 1, 3000, 'the errors');
    expect(l.heard[0]![0]).toMatchObject({ table: 'hidden_key', eventType: 'INSERT', new: {}, errors: ['Error 401: Unauthorized'] });
    expect(l.heard[1]![0]).toMatchObject({ table: 'nokey', eventType: 'INSERT', new: {}, errors: ['Error 400: Bad Request, no primary key'] });
  });

  it('never delivers a change of a transaction that rolled back', async () => {
    const l = await listen(realtimeClient(lb), [{ event: '*', schema: 'public', table: 'plain' }]);
    await lb.db
      .transaction(async (tx) => {
        await tx.query(`insert into public.plain (id, body) values (50, 'rolled back')`);
        await tx.query(`update public.plain set body = 'still rolled back' where id = 50`);
        throw new Error('roll back');
      })
      .catch(() => {});
    await exec(`insert into public.plain (id, body) values (51, 'committed')`);
    await until(() => l.heard[0]!.length >= 1, 3000, 'the committed insert');
    await sleep(300);
    expect(l.heard[0]!.map((c) => c.new.body)).toEqual(['committed']);
    await exec('delete from public.plain where id = 51');
  });
});

describe('realtime: postgres changes and tokens', () => {
  it('re-checks RLS with a token refreshed on the open socket', async () => {
    const client = await userClient(alice);
    const l = await listen(client, [{ event: 'INSERT', schema: 'public', table: 'items' }]);
    await exec(`insert into public.items (owner, title) values ($1, 'for alice')`, [alice]);
    await until(() => l.heard[0]!.length === 1, 3000, 'alice’s row');
    // The socket now acts as bob: alice's rows stop, bob's arrive.
    await client.realtime.setAuth(await accessToken(lb, 3600, bob));
    await sleep(300);
    await exec(`insert into public.items (owner, title) values ($1, 'alice again')`, [alice]);
    await exec(`insert into public.items (owner, title) values ($1, 'for bob')`, [bob]);
    await until(() => l.heard[0]!.length === 2, 3000, 'bob’s row');
    await sleep(300);
    expect(l.heard[0]!.map((c) => c.new.title)).toEqual(['for alice', 'for bob']);
    await exec('delete from public.items');
  });

  it('stops delivering to a subscriber whose token expired', async () => {
    const client = realtimeClient(lb);
    await client.realtime.setAuth(await accessToken(lb, 2, alice));
    const l = await listen(client, [{ event: 'INSERT', schema: 'public', table: 'items' }]);
    expect(l.status).toBe('SUBSCRIBED');
    await exec(`insert into public.items (owner, title) values ($1, 'before expiry')`, [alice]);
    await until(() => l.heard[0]!.length === 1, 3000, 'the first row');
    await until(() => l.system.some((m) => m.extension === 'system'), 4000, 'the expiry');
    expect(l.system.at(-1)).toMatchObject({ extension: 'system', status: 'error', message: expect.stringMatching(/^Token has expired/) });
    await exec(`insert into public.items (owner, title) values ($1, 'after expiry')`, [alice]);
    await sleep(500);
    expect(l.heard[0]!.map((c) => c.new.title)).toEqual(['before expiry']);
    await exec('delete from public.items');
  });
});

describe('realtime: bad postgres changes bindings', () => {
  const unable = (binding: string) =>
    `Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: [${binding}]`;
  const exception = (binding: string, error: string) =>
    `Unable to subscribe to changes with given parameters. An exception happened so please check your connect parameters: [${binding}]. Exception: ${error}`;

  it.each([
    [{ event: 'INSERT', schema: 'public', table: 'nope' }, unable('event: INSERT, schema: public, table: nope, filters: [], select: nil')],
    [{ event: '*', schema: 'public', table: 'unpublished' }, unable('event: *, schema: public, table: unpublished, filters: [], select: nil')],
    [{ event: '*', schema: 'public', table: 'plain', filter: 'n=foo.1' }, 'Error parsing `filter` params: ["foo", "1"]'],
    [{ event: '*', schema: 'public', table: 'plain', filter: 'n=in.1,2' }, 'Error parsing `filter` params: `in` filter value must be wrapped by parentheses'],
    [
      { event: '*', schema: 'public', table: 'plain', filter: 'nope=eq.1' },
      exception('event: *, schema: public, table: plain, filters: [{"nope", "eq", "1", false}], select: nil', 'ERROR P0001 (raise_exception) invalid column for filter nope'),
    ],
    [
      // anon may not select `secret`: it cannot filter on it either.
      { event: '*', schema: 'public', table: 'plain', filter: 'secret=eq.x' },
      exception('event: *, schema: public, table: plain, filters: [{"secret", "eq", "x", false}], select: nil', 'ERROR P0001 (raise_exception) invalid column for filter secret'),
    ],
    [
      { event: '*', schema: 'public', table: 'plain', filter: 'n=eq.abc' },
      exception(
        'event: *, schema: public, table: plain, filters: [{"n", "eq", "abc", false}], select: nil',
        'ERROR 22P02 (invalid_text_representation) invalid input syntax for type integer: "abc"',
      ),
    ],
    // A NUL in a table or schema name failed the lookup of the publication's tables: the socket was closed with 1011
    // (the client reconnected and joined again, round after round).
    [
      { event: '*', schema: 'public', table: 'pl\u0000ain' },
      exception('event: *, schema: public, table: pl\u0000ain, filters: [], select: nil', 'ERROR 22021 invalid byte sequence for encoding "UTF8": 0x00'),
    ],
    [
      { event: 'INSERT', schema: 'pub\u0000lic' },
      exception('event: INSERT, schema: pub\u0000lic, table: *, filters: [], select: nil', 'ERROR 22021 invalid byte sequence for encoding "UTF8": 0x00'),
    ],
  ])('joins, then sends a system error: %j', async (binding, message) => {
    const l = await listen(realtimeClient(lb), [binding as Binding]);
    expect(l.status).toBe('SUBSCRIBED');
    await until(() => l.system.length > 0, 2000, 'the system message');
    expect(l.system[0]).toEqual({ extension: 'postgres_changes', status: 'error', message, channel: l.channel.subTopic });
  });
});

describe('realtime: postgres changes and the PGlite worker', () => {
  it.skipIf(testDatabaseUrl !== undefined)('keeps delivering after a statement timeout reopened the database in a new worker', async () => {
    const l = await listen(realtimeClient(lb), [{ event: 'INSERT', schema: 'public', table: 'plain' }]);
    const db = lb.db as typeof lb.db & { queryWithTimeout(sql: string, params: unknown[], ms: number): Promise<unknown>; restarts: number };
    const restarts = db.restarts;
    await expect(db.queryWithTimeout('select pg_sleep(5)', [], 200)).rejects.toMatchObject({ code: '57014' });
    expect(db.restarts).toBe(restarts + 1);
    // The new worker LISTENs again: a write after the reopen reaches the subscriber.
    await exec(`insert into public.plain (id, body) values (70, 'after the reopen')`);
    await until(() => l.heard[0]!.length === 1, 5000, 'the insert after the reopen');
    expect(l.heard[0]![0]!.new).toMatchObject({ id: 70, body: 'after the reopen' });
    await exec('delete from public.plain where id = 70');
  });
});

describe('realtime: the publication', () => {
  it('follows tables added to (and dropped from) the publication while the server runs', async () => {
    await exec('create table public.late (id int primary key, body text)');
    await exec('alter publication supabase_realtime add table public.late');
    const l = await listen(realtimeClient(lb), [{ event: '*', schema: 'public', table: 'late' }]);
    expect(l.status).toBe('SUBSCRIBED');
    await until(() => l.system.length > 0, 2000, 'the subscription status');
    expect(l.system[0]).toMatchObject({ status: 'ok' });
    await exec(`insert into public.late values (1, 'late')`);
    await until(() => l.heard[0]!.length === 1, 3000, 'the insert');
    expect(l.heard[0]![0]!.new).toEqual({ id: 1, body: 'late' });

    await exec('alter publication supabase_realtime drop table public.late');
    await exec(`insert into public.late values (2, 'not published')`);
    await sleep(400);
    expect(l.heard[0]).toHaveLength(1);
    const { rows } = await exec(`select count(*)::int as n from pg_trigger where tgrelid = 'public.late'::regclass and tgname = 'localbase_realtime'`);
    expect(rows[0]!.n).toBe(0);
  });

  it('exists after the bootstrap, and `db reset` puts the capture triggers back for the migrations’ tables', async () => {
    await lb.resetDatabase();
    const { rows } = await exec(
      `select c.relname from pg_trigger t join pg_class c on c.oid = t.tgrelid where t.tgname = 'localbase_realtime' order by 1`,
    );
    expect(rows.map((r) => r.relname)).toEqual(['hidden_key', 'items', 'nokey', 'plain']);
    const l = await listen(realtimeClient(lb), [{ event: 'INSERT', schema: 'public', table: 'plain' }]);
    await exec(`insert into public.plain (id, body) values (60, 'after reset')`);
    await until(() => l.heard[0]!.length === 1, 3000, 'the insert after the reset');
  });
});
