// Private Realtime channels authorized by the app's RLS policies on realtime.messages (fixtures/realtime-migrations):
// who may join, whose broadcasts are sent or dropped, presence writes, REST messages, and a token refresh that takes
// the permission away.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptySeedFile, ownDatabase, raw, sleep, startTestServer, type Localbase } from './helpers.ts';
import { accessToken, closeRealtimeClients, realtimeClient, subscribe, until } from './realtime-helpers.ts';

const migrationsDir = fileURLToPath(new URL('./fixtures/realtime-migrations/', import.meta.url));
let lb: Localbase;
let dropScratch: (() => Promise<void>) | undefined;
const alice = crypto.randomUUID();
const bob = crypto.randomUUID();

beforeAll(async () => {
  // Its own database on PostgreSQL: the policies must not reach the other files' realtime.messages.
  const own = await ownDatabase();
  dropScratch = own.drop;
  lb = await startTestServer({ migrationsDir, seedFile: emptySeedFile, ...own.options });
});

afterAll(async () => {
  await closeRealtimeClients();
  await lb?.stop();
  await dropScratch?.();
});

async function userClient(sub: string) {
  const client = realtimeClient(lb);
  await client.realtime.setAuth(await accessToken(lb, 3600, sub));
  return client;
}

describe('realtime: private channels', () => {
  it('lets in only callers whose policies allow reading the topic', async () => {
    const own = (await userClient(alice)).channel(`room:${alice}`, { config: { private: true } });
    expect((await subscribe(own)).status).toBe('SUBSCRIBED');

    const intruder = (await userClient(bob)).channel(`room:${alice}`, { config: { private: true } });
    const refused = await subscribe(intruder);
    await intruder.unsubscribe();
    expect(refused.status).toBe('CHANNEL_ERROR');
    expect(refused.error?.message).toBe(`Unauthorized: You do not have permissions to read from this Channel topic: room:${alice}`);

    const anon = realtimeClient(lb).channel('announcements', { config: { private: true } });
    const anonResult = await subscribe(anon);
    await anon.unsubscribe();
    expect(anonResult.error?.message).toBe('Unauthorized: You do not have permissions to read from this Channel topic: announcements');

    const service = realtimeClient(lb, { key: lb.serviceRoleKey }).channel(`room:${alice}`, { config: { private: true } });
    expect((await subscribe(service)).status).toBe('SUBSCRIBED');
  });

  it('sends broadcasts of a caller allowed to write; drops the others silently (no ack)', async () => {
    const heard: unknown[] = [];
    const listener = realtimeClient(lb, { key: lb.serviceRoleKey })
      .channel('announcements', { config: { private: true } })
      .on('broadcast', { event: '*' }, (m) => heard.push(m.payload));
    expect((await subscribe(listener)).status).toBe('SUBSCRIBED');
    const reader = (await userClient(alice)).channel('announcements', { config: { private: true, broadcast: { ack: true } } });
    const readerHeard: unknown[] = [];
    reader.on('broadcast', { event: '*' }, (m) => readerHeard.push(m.payload));
    expect((await subscribe(reader)).status).toBe('SUBSCRIBED');

    // alice may read announcements but not send to them: no delivery, and no ack.
    expect(await reader.send({ type: 'broadcast', event: 'x', payload: { from: 'alice' } }, { timeout: 700 })).toBe('timed out');
    // The service role sends; alice hears it.
    const sender = realtimeClient(lb, { key: lb.serviceRoleKey }).channel('announcements', { config: { private: true } });
    expect((await subscribe(sender)).status).toBe('SUBSCRIBED');
    await sender.send({ type: 'broadcast', event: 'x', payload: { from: 'service' } });
    await until(() => readerHeard.length === 1 && heard.length === 1, 2000, 'the service role broadcast');
    expect(readerHeard).toEqual([{ from: 'service' }]);
    expect(heard).toEqual([{ from: 'service' }]);

    // In her own room alice may send: her second tab hears her.
    const tab1 = (await userClient(alice)).channel(`room:${alice}`, { config: { private: true, broadcast: { ack: true } } });
    const tab2Heard: unknown[] = [];
    const tab2 = (await userClient(alice))
      .channel(`room:${alice}`, { config: { private: true } })
      .on('broadcast', { event: '*' }, (m) => tab2Heard.push(m.payload));
    expect((await subscribe(tab1)).status).toBe('SUBSCRIBED');
    expect((await subscribe(tab2)).status).toBe('SUBSCRIBED');
    expect(await tab1.send({ type: 'broadcast', event: 'note', payload: { n: 1 } })).toBe('ok');
    await until(() => tab2Heard.length === 1, 2000, 'the second tab');
    // The public channel of the same name hears none of it.
    const publicHeard: unknown[] = [];
    const pub = realtimeClient(lb)
      .channel(`room:${alice}`)
      .on('broadcast', { event: '*' }, (m) => publicHeard.push(m.payload));
    expect((await subscribe(pub)).status).toBe('SUBSCRIBED');
    expect(await tab1.send({ type: 'broadcast', event: 'note', payload: { n: 2 } })).toBe('ok');
    await until(() => tab2Heard.length === 2, 2000, 'the second message');
    expect(publicHeard).toEqual([]);
  });

  it('sends private REST messages only for callers allowed to write', async () => {
    const heard: unknown[] = [];
    const ch = (await userClient(alice))
      .channel(`room:${alice}`, { config: { private: true } })
      .on('broadcast', { event: '*' }, (m) => heard.push(m.payload));
    expect((await subscribe(ch)).status).toBe('SUBSCRIBED');
    const msg = (from: string) => ({ messages: [{ topic: `room:${alice}`, event: 'e', payload: { from }, private: true }] });
    expect((await raw(lb, '/realtime/v1/api/broadcast', { bearer: await accessToken(lb, 3600, bob), body: msg('bob') })).status).toBe(202);
    expect((await raw(lb, '/realtime/v1/api/broadcast', { bearer: await accessToken(lb, 3600, alice), body: msg('alice') })).status).toBe(202);
    await until(() => heard.length === 1, 2000, "alice's REST message");
    await sleep(200);
    expect(heard).toEqual([{ from: 'alice' }]);
  });

  it('answers httpSend to a private topic as Realtime does: 403 without write permission, 422 for a failing policy', async () => {
    // Both were 202: httpSend() resolved {success: true} for a message nobody received.
    const heard: unknown[] = [];
    const ch = (await userClient(alice))
      .channel(`room:${alice}`, { config: { private: true } })
      .on('broadcast', { event: '*' }, (m) => heard.push(m.payload));
    expect((await subscribe(ch)).status).toBe('SUBSCRIBED');

    const intruder = (await userClient(bob)).channel(`room:${alice}`, { config: { private: true } });
    await expect(intruder.httpSend('e', { from: 'bob' })).rejects.toThrow(/^Unauthorized$/);
    const path = `/realtime/v1/api/broadcast/${encodeURIComponent(`room:${alice}`)}/events/e?private=true`;
    const anon = await raw(lb, path, { body: { from: 'anon' } });
    expect([anon.status, anon.json]).toEqual([403, { message: 'Unauthorized' }]);

    // A policy that fails (doc:board cannot be cast to a uuid): upstream's RlsPolicyError.
    const board = (await userClient(alice)).channel('doc:board', { config: { private: true } });
    await expect(board.httpSend('e', { n: 1 })).rejects.toThrow(/^RLS policy error$/);
    const failed = await raw(lb, `/realtime/v1/api/broadcast/doc%3Aboard/events/e?private=true`, {
      bearer: await accessToken(lb, 3600, alice),
      body: { n: 1 },
    });
    expect([failed.status, failed.json]).toEqual([422, { message: 'RLS policy error' }]);

    // (a channel never subscribed: after a join, supabase-js's token callback puts the anon key back on the socket)
    const sender = (await userClient(alice)).channel(`room:${alice}`, { config: { private: true } });
    expect(await sender.httpSend('e', { from: 'alice' })).toEqual({ success: true });
    await until(() => heard.length === 1, 2000, "alice's httpSend");
    await sleep(200);
    expect(heard).toEqual([{ from: 'alice' }]);
  });

  it('answers track with an error where presence may not be written, ok where it may', async () => {
    const room = (await userClient(alice)).channel(`room:${alice}`, { config: { private: true } });
    expect((await subscribe(room)).status).toBe('SUBSCRIBED');
    expect(await room.track({ online: true })).toBe('error');

    const watcher = realtimeClient(lb, { key: lb.serviceRoleKey }).channel('announcements', { config: { private: true } });
    watcher.on('presence', { event: 'sync' }, () => {});
    expect((await subscribe(watcher)).status).toBe('SUBSCRIBED');
    const ann = (await userClient(alice)).channel('announcements', { config: { private: true, presence: { key: alice } } });
    ann.on('presence', { event: 'sync' }, () => {});
    expect((await subscribe(ann)).status).toBe('SUBSCRIBED');
    expect(await ann.track({ online: true })).toBe('ok');
    await until(() => Object.keys(watcher.presenceState()).includes(alice), 2000, "alice's presence");
  });

  it('takes a policy that fails (a topic it cannot cast) for a refusal, as Realtime does, and keeps the socket', async () => {
    // The failing policy closed the whole socket with 1011: every channel on it errored, and realtime-js reconnected
    // and joined again into the same failure.
    const client = await userClient(alice);
    const bad = client.channel('doc:not-a-uuid', { config: { private: true } });
    const lobby = client.channel('lobby-of-doc-tests');
    const [refused, joined] = await Promise.all([subscribe(bad), subscribe(lobby)]);
    await client.removeChannel(bad);
    expect(refused.error?.message).toBe('Unauthorized: You do not have permissions to read from this Channel topic: doc:not-a-uuid');
    expect(joined.status).toBe('SUBSCRIBED');
    expect((await subscribe((await userClient(alice)).channel(`doc:${alice}`, { config: { private: true } }))).status).toBe('SUBSCRIBED');

    // Writing fails in the policy too: the broadcast is dropped (no ack), the track answered error.
    const board = (await userClient(alice)).channel('doc:board', { config: { private: true, broadcast: { ack: true }, presence: { key: alice } } });
    board.on('presence', { event: 'sync' }, () => {});
    expect((await subscribe(board)).status).toBe('SUBSCRIBED');
    expect(await board.send({ type: 'broadcast', event: 'x', payload: {} }, { timeout: 700 })).toBe('timed out');
    expect(await board.track({ here: true })).toBe('error');
    expect(lobby.state).toBe('joined');
    expect(board.state).toBe('joined');
  });

  it('closes the channel when a refreshed token may no longer read it', async () => {
    const client = await userClient(alice);
    const system: { message: string }[] = [];
    const statuses: string[] = [];
    client
      .channel(`room:${alice}`, { config: { private: true } })
      .on('system', {}, (p: { message: string }) => system.push(p))
      .subscribe((s) => statuses.push(s));
    await until(() => statuses.includes('SUBSCRIBED'), 5000, 'SUBSCRIBED');
    await client.realtime.setAuth(await accessToken(lb, 3600, bob));
    await until(() => statuses.includes('CLOSED'), 5000, 'CLOSED');
    expect(system.map((s) => s.message)).toEqual([`You no longer have permission to read from this Channel topic: room:${alice}`]);
  });
});
