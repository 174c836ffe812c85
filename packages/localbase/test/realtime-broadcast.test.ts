// Realtime broadcast and presence between supabase-js clients over real WebSockets: self and ack, vsn 2.0.0's binary
// frames and 1.0.0's JSON side by side, the REST endpoints (httpSend and the batch one), and presence
// track/untrack with presence_state and presence_diff.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { raw, sleep, startTestServer, type Localbase } from './helpers.ts';
import { closeRealtimeClients, realtimeClient, subscribe, until } from './realtime-helpers.ts';

let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer();
});

afterAll(async () => {
  await closeRealtimeClients();
  await lb?.stop();
});

let n = 0;
const room = (name: string) => `${name}-${++n}-${Date.now().toString(36)}`;

describe('realtime: broadcast', () => {
  it('reaches the other members; the sender hears itself only with self, and ack answers the send', async () => {
    const name = room('bc');
    const aHeard: unknown[] = [];
    const bHeard: unknown[] = [];
    const a = realtimeClient(lb)
      .channel(name, { config: { broadcast: { self: true, ack: true } } })
      .on('broadcast', { event: 'cursor' }, (m) => aHeard.push(m));
    const b = realtimeClient(lb)
      .channel(name)
      .on('broadcast', { event: '*' }, (m) => bHeard.push(m));
    expect((await subscribe(a)).status).toBe('SUBSCRIBED');
    expect((await subscribe(b)).status).toBe('SUBSCRIBED');

    expect(await a.send({ type: 'broadcast', event: 'cursor', payload: { x: 1, y: 2 } })).toBe('ok');
    await until(() => aHeard.length === 1 && bHeard.length === 1, 2000, 'both members');
    expect(bHeard).toEqual([{ type: 'broadcast', event: 'cursor', payload: { x: 1, y: 2 } }]);
    expect(aHeard).toEqual(bHeard);

    // b joined without self: its own message reaches a only.
    expect(await b.send({ type: 'broadcast', event: 'cursor', payload: { x: 3 } })).toBe('ok');
    await until(() => aHeard.length === 2, 2000, 'a hears b');
    await sleep(200);
    expect(bHeard).toHaveLength(1);
  });

  it('never crosses channels, and public and private channels of one name are apart', async () => {
    const name = room('apart');
    const heard: unknown[] = [];
    const listener = realtimeClient(lb)
      .channel(name)
      .on('broadcast', { event: '*' }, (m) => heard.push(m));
    expect((await subscribe(listener)).status).toBe('SUBSCRIBED');
    const other = realtimeClient(lb).channel(room('elsewhere'));
    expect((await subscribe(other)).status).toBe('SUBSCRIBED');
    await other.send({ type: 'broadcast', event: 'x', payload: {} });
    // The service role may join a private channel of the same name: still not the public one.
    const priv = realtimeClient(lb, { key: lb.serviceRoleKey }).channel(name, { config: { private: true } });
    expect((await subscribe(priv)).status).toBe('SUBSCRIBED');
    await priv.send({ type: 'broadcast', event: 'x', payload: {} });
    await sleep(300);
    expect(heard).toEqual([]);
  });

  it('carries vsn 2.0.0 binary frames (JSON and raw bytes) and 1.0.0 JSON between clients of both versions', async () => {
    const name = room('vsn');
    const v1Heard: unknown[] = [];
    const v2Heard: { payload: unknown }[] = [];
    const v1 = realtimeClient(lb, { vsn: '1.0.0' })
      .channel(name)
      .on('broadcast', { event: '*' }, (m) => v1Heard.push(m));
    const v2 = realtimeClient(lb, { vsn: '2.0.0' })
      .channel(name)
      .on('broadcast', { event: '*' }, (m) => v2Heard.push(m as unknown as { payload: unknown }));
    const sender = realtimeClient(lb, { vsn: '2.0.0' }).channel(name);
    for (const ch of [v1, v2, sender]) expect((await subscribe(ch)).status).toBe('SUBSCRIBED');

    await sender.send({ type: 'broadcast', event: 'note', payload: { text: 'héllo ✓' } });
    await until(() => v1Heard.length === 1 && v2Heard.length === 1, 2000, 'the JSON broadcast');
    expect(v1Heard).toEqual([{ type: 'broadcast', event: 'note', payload: { text: 'héllo ✓' } }]);
    expect(v2Heard).toEqual(v1Heard);

    // Raw bytes travel to 2.0.0 clients only (1.0.0 has no binary frames).
    await sender.send({ type: 'broadcast', event: 'blob', payload: new Uint8Array([1, 2, 255]).buffer });
    await until(() => v2Heard.length === 2, 2000, 'the binary broadcast');
    expect([...new Uint8Array(v2Heard[1]!.payload as ArrayBuffer)]).toEqual([1, 2, 255]);

    await realtimeClient(lb, { vsn: '1.0.0' }).channel(name).subscribe();
    const v1Sender = realtimeClient(lb, { vsn: '1.0.0' }).channel(name);
    expect((await subscribe(v1Sender)).status).toBe('SUBSCRIBED');
    await v1Sender.send({ type: 'broadcast', event: 'from-v1', payload: { ok: true } });
    await until(() => v2Heard.length === 3 && v1Heard.length === 2, 2000, 'the 1.0.0 broadcast');
    expect(v2Heard[2]).toEqual({ type: 'broadcast', event: 'from-v1', payload: { ok: true } });
    expect(v1Heard).toHaveLength(2);
  });

  it('delivers httpSend (POST /realtime/v1/api/broadcast/:topic/events/:event) with 202', async () => {
    const name = room('http');
    const heard: unknown[] = [];
    const listener = realtimeClient(lb)
      .channel(name)
      .on('broadcast', { event: 'ping' }, (m) => heard.push(m));
    expect((await subscribe(listener)).status).toBe('SUBSCRIBED');
    const sender = realtimeClient(lb).channel(name);
    expect(await sender.httpSend('ping', { at: 1 })).toEqual({ success: true });
    await until(() => heard.length === 1, 2000, 'the REST broadcast');
    expect(heard).toEqual([{ type: 'broadcast', event: 'ping', payload: { at: 1 } }]);
  });

  it('httpSend\'s endpoint takes any JSON body as Realtime does: a non-object under "_json", an empty body as {}', async () => {
    // Phoenix's JSON parser hands the controller a non-object body as {"_json": value} and an empty one as {}; the
    // endpoint sends that map. localbase refused a null body 422 and sent an array or a string as the payload itself.
    const name = room('wrapped');
    const heard: unknown[] = [];
    const listener = realtimeClient(lb)
      .channel(name)
      .on('broadcast', { event: '*' }, (m) => heard.push(m.payload));
    expect((await subscribe(listener)).status).toBe('SUBSCRIBED');
    const path = `/realtime/v1/api/broadcast/${name}/events/raw`;
    for (const body of ['null', '[1,2]', '"hi"', '7', 'false', '']) {
      const res = await raw(lb, path, { body, method: 'POST' });
      expect([res.status, res.text], body).toEqual([202, '']);
    }
    await until(() => heard.length === 6, 2000, 'the six messages');
    expect(heard).toEqual([{ _json: null }, { _json: [1, 2] }, { _json: 'hi' }, { _json: 7 }, { _json: false }, {}]);
  });

  it('delivers the batch endpoint send() falls back to before a channel is joined', async () => {
    const name = room('batch');
    const heard: unknown[] = [];
    const listener = realtimeClient(lb)
      .channel(name)
      .on('broadcast', { event: 'hello' }, (m) => heard.push(m));
    expect((await subscribe(listener)).status).toBe('SUBSCRIBED');
    const res = await raw(lb, `/realtime/v1/api/broadcast?apikey=${lb.anonKey}&vsn=2.0.0`, {
      headers: { apikey: lb.anonKey },
      body: { messages: [{ topic: name, event: 'hello', payload: { n: 1 }, private: false }] },
    });
    expect(res.status).toBe(202);
    await until(() => heard.length === 1, 2000, 'the batch broadcast');
    expect(heard).toEqual([{ type: 'broadcast', event: 'hello', payload: { n: 1 } }]);
  });

  it('answers a REST broadcast with a bad token 401, a bad body 422, and without apikey 401 no_api_key', async () => {
    const path = '/realtime/v1/api/broadcast';
    const body = { messages: [{ topic: 'x', event: 'y', payload: {} }] };
    const bad = await raw(lb, path, { headers: { apikey: lb.anonKey, authorization: 'Bearer nope' }, body });
    expect(bad.status).toBe(401);
    expect(bad.json).toEqual({ message: 'Unauthorized' });
    const invalid = await raw(lb, path, { headers: { apikey: lb.anonKey }, body: { messages: 'no' } });
    expect(invalid.status).toBe(422);
    const noKey = await raw(lb, path, { body, apikey: null });
    expect(noKey.status).toBe(401);
    expect(noKey.json).toMatchObject({ code: 'no_api_key' });
  });

  it("answers a batch Realtime would not take 422 with its changeset errors; send() without a payload before joining says 'error'", async () => {
    // A message without payload was sent with {} (202, send() said 'ok'); errors came as {"messages[0]": [...]}.
    const path = '/realtime/v1/api/broadcast';
    const post = (body: unknown) => raw(lb, path, { headers: { apikey: lb.anonKey }, body: body as Record<string, unknown> });
    const cases: [unknown, unknown][] = [
      [{}, { messages: ["can't be blank"] }],
      [{ messages: [] }, { messages: ["can't be blank"] }],
      [{ messages: 'no' }, { messages: ['is invalid'] }],
      [{ messages: ['no'] }, { messages: ['is invalid'] }],
      [
        { messages: [{ topic: 'a', event: 'e', payload: {} }, { topic: 'a', event: 'e' }, { topic: 1, event: '', payload: [1], private: 'yes' }] },
        { messages: [{}, { payload: ["can't be blank"] }, { topic: ['is invalid'], event: ["can't be blank"], payload: ['is invalid'], private: ['is invalid'] }] },
      ],
    ];
    for (const [body, errors] of cases) {
      const res = await post(body);
      expect([res.status, res.json], JSON.stringify(body)).toEqual([422, { errors }]);
    }
    const heard: unknown[] = [];
    const name = room('no-payload');
    const listener = realtimeClient(lb)
      .channel(name)
      .on('broadcast', { event: '*' }, (m) => heard.push(m));
    expect((await subscribe(listener)).status).toBe('SUBSCRIBED');
    const sender = realtimeClient(lb).channel(name); // never joined: send() posts the batch
    expect(await sender.send({ type: 'broadcast', event: 'e' })).toBe('error');
    expect(await sender.send({ type: 'broadcast', event: 'e', payload: { n: 1 } })).toBe('ok');
    await until(() => heard.length === 1, 2000, 'the message with a payload');
    expect(heard).toEqual([{ type: 'broadcast', event: 'e', payload: { n: 1 } }]);
  });

  it('sends a private REST message only for a caller allowed to write it (the service role)', async () => {
    const name = room('private-rest');
    const heard: unknown[] = [];
    const priv = realtimeClient(lb, { key: lb.serviceRoleKey })
      .channel(name, { config: { private: true } })
      .on('broadcast', { event: '*' }, (m) => heard.push(m));
    expect((await subscribe(priv)).status).toBe('SUBSCRIBED');
    const msg = (n: number) => ({ messages: [{ topic: name, event: 'secret', payload: { n }, private: true }] });
    // anon: skipped silently (still 202), as upstream does for a caller without write permission.
    expect((await raw(lb, '/realtime/v1/api/broadcast', { body: msg(1) })).status).toBe(202);
    expect((await raw(lb, '/realtime/v1/api/broadcast', { apikey: lb.serviceRoleKey, body: msg(2) })).status).toBe(202);
    await until(() => heard.length === 1, 2000, 'the service role message');
    await sleep(200);
    expect(heard).toEqual([{ type: 'broadcast', event: 'secret', payload: { n: 2 } }]);
  });

  it('limits REST messages to 100 per second per client address (429)', async () => {
    const batch = (n: number) => ({ messages: Array.from({ length: n }, (_, i) => ({ topic: 'flood', event: 'e', payload: { i } })) });
    // A fresh one-second window (it starts at a window's first message), so that earlier tests' messages do not count.
    await sleep(1100);
    expect((await raw(lb, '/realtime/v1/api/broadcast', { body: batch(60) })).status).toBe(202);
    // Realtime's messages (batch_broadcast.ex / single_broadcast.ex check_rate_limit); a refused batch counts nothing
    const over = await raw(lb, '/realtime/v1/api/broadcast', { body: batch(60) });
    expect(over.status).toBe(429);
    expect(over.json).toEqual({ message: 'Too many messages to broadcast, please reduce the batch size' });
    expect(over.headers.get('retry-after')).toBe('1');
    expect((await raw(lb, '/realtime/v1/api/broadcast', { body: batch(40) })).status).toBe(202);
    const full = await raw(lb, '/realtime/v1/api/broadcast', { body: batch(1) });
    expect([full.status, full.json]).toEqual([429, { message: 'You have exceeded your rate limit' }]);
    const sender = realtimeClient(lb).channel('flood');
    await expect(sender.httpSend('e', { n: 1 })).rejects.toThrow(/^You have exceeded your rate limit$/);
    await sleep(1100);
    expect((await raw(lb, '/realtime/v1/api/broadcast', { body: batch(1) })).status).toBe(202);
  });
});

describe('realtime: heartbeat', () => {
  it('answers every heartbeat, so the client keeps its socket', async () => {
    const statuses: string[] = [];
    const client = realtimeClient(lb);
    client.realtime.onHeartbeat((status) => statuses.push(status));
    const ch = client.channel(room('hb'));
    expect((await subscribe(ch)).status).toBe('SUBSCRIBED');
    // heartbeatIntervalMs is read at construction: drive heartbeats by hand, as the timer would.
    for (let i = 0; i < 3; i++) {
      client.realtime.sendHeartbeat();
      await until(() => statuses.filter((s) => s === 'ok').length === i + 1, 2000, `heartbeat ${i + 1}`);
    }
    expect(statuses).not.toContain('timeout');
    expect(client.realtime.isConnected()).toBe(true);
  });
});

describe('realtime: presence', () => {
  it('sends presence_state on join and presence_diff on track, re-track, untrack and leave', async () => {
    const name = room('presence');
    const seen: { event: string; key: string; metas: Record<string, unknown>[] }[] = [];
    const watcher = realtimeClient(lb).channel(name, { config: { presence: { key: 'watcher' } } });
    watcher
      .on('presence', { event: 'join' }, ({ key, newPresences }) => seen.push({ event: 'join', key, metas: newPresences }))
      .on('presence', { event: 'leave' }, ({ key, leftPresences }) => seen.push({ event: 'leave', key, metas: leftPresences }));
    expect((await subscribe(watcher)).status).toBe('SUBSCRIBED');

    const ann = realtimeClient(lb).channel(name, { config: { presence: { key: 'ann' } } });
    ann.on('presence', { event: 'sync' }, () => {});
    expect((await subscribe(ann)).status).toBe('SUBSCRIBED');
    expect(await ann.track({ name: 'Ann', page: 1 })).toBe('ok');
    await until(() => seen.length === 1, 2000, 'the join');
    expect(seen[0]).toMatchObject({ event: 'join', key: 'ann', metas: [{ name: 'Ann', page: 1, presence_ref: expect.any(String) }] });
    expect(watcher.presenceState()).toEqual({ ann: [expect.objectContaining({ name: 'Ann', page: 1 })] });
    await until(() => Object.keys(ann.presenceState()).length === 1, 2000, 'the tracker sees itself');

    // A late joiner gets the whole state at once.
    const late = realtimeClient(lb).channel(name);
    late.on('presence', { event: 'sync' }, () => {});
    expect((await subscribe(late)).status).toBe('SUBSCRIBED');
    await until(() => Object.keys(late.presenceState()).length === 1, 2000, 'presence_state');
    expect(late.presenceState()).toEqual({ ann: [expect.objectContaining({ name: 'Ann', page: 1 })] });

    // Re-tracking the same state changes nothing; a new state replaces the old meta.
    expect(await ann.track({ name: 'Ann', page: 1 })).toBe('ok');
    expect(await ann.track({ name: 'Ann', page: 2 })).toBe('ok');
    await until(() => seen.length === 3, 2000, 'the update');
    expect(seen.slice(1).map((s) => s.event).sort()).toEqual(['join', 'leave']);
    expect(watcher.presenceState()).toEqual({ ann: [expect.objectContaining({ page: 2 })] });

    expect(await ann.untrack()).toBe('ok');
    await until(() => Object.keys(watcher.presenceState()).length === 0, 2000, 'the untrack');

    // Leaving the channel (or losing the socket) takes its presence away too.
    expect(await ann.track({ name: 'Ann', page: 3 })).toBe('ok');
    await until(() => Object.keys(watcher.presenceState()).length === 1, 2000, 'the new track');
    await ann.unsubscribe();
    await until(() => Object.keys(watcher.presenceState()).length === 0, 2000, 'the leave');
    expect(late.presenceState()).toEqual({});
  });

  it('refuses a track payload that is not an object', async () => {
    const ch = realtimeClient(lb).channel(room('bad-track'));
    expect((await subscribe(ch)).status).toBe('SUBSCRIBED');
    expect(await ch.track([1, 2] as unknown as Record<string, unknown>)).toBe('error');
  });

  it('keeps several connections under one key as several metas', async () => {
    const name = room('multi');
    const watcher = realtimeClient(lb).channel(name);
    watcher.on('presence', { event: 'sync' }, () => {});
    expect((await subscribe(watcher)).status).toBe('SUBSCRIBED');
    const tabs = [1, 2].map(() => realtimeClient(lb).channel(name, { config: { presence: { key: 'same-user' } } }));
    for (const [i, tab] of tabs.entries()) {
      expect((await subscribe(tab)).status).toBe('SUBSCRIBED');
      expect(await tab.track({ tab: i })).toBe('ok');
    }
    await until(() => (watcher.presenceState()['same-user']?.length ?? 0) === 2, 2000, 'two metas');
    const socketGone = tabs[0]!;
    await socketGone.unsubscribe();
    await until(() => (watcher.presenceState()['same-user']?.length ?? 0) === 1, 2000, 'one meta left');
  });
});
