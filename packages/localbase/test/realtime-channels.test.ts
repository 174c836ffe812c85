// Realtime over a real WebSocket with supabase-js's channel(): the handshake, join and leave, refused joins, the
// user's token at join and refreshed on an open socket, and a channel whose token expires.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { signedInClient, sleep, startTestServer, type Localbase } from './helpers.ts';
import { accessToken, closeRealtimeClients, realtimeClient, subscribe, until } from './realtime-helpers.ts';

let lb: Localbase;

beforeAll(async () => {
  lb = await startTestServer();
});

afterAll(async () => {
  await closeRealtimeClients();
  await lb?.stop();
});

/** The HTTP answer to a WebSocket upgrade that is refused (status and JSON body), or 101. */
function upgrade(path: string): Promise<{ status: number; body?: unknown }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(lb.url.replace(/^http/, 'ws') + path);
    ws.on('open', () => {
      ws.close();
      resolve({ status: 101 });
    });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.on('error', (err) => reject(err));
  });
}

describe('realtime: the socket', () => {
  it('is served on the API port at /realtime/v1/websocket, and the banner names it', async () => {
    expect(lb.realtimeUrl).toBe(`${lb.url.replace(/^http/, 'ws')}/realtime/v1`);
    expect(await upgrade(`/realtime/v1/websocket?apikey=${lb.anonKey}&vsn=2.0.0`)).toEqual({ status: 101 });
    expect(await upgrade(`/realtime/v1/websocket?apikey=sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH&vsn=1.0.0`)).toEqual({ status: 101 });
  });

  it('refuses an upgrade without a valid apikey with the Realtime server’s 401 answers', async () => {
    expect(await upgrade('/realtime/v1/websocket?vsn=2.0.0')).toEqual({ status: 401, body: { error: 'API key is missing' } });
    expect(await upgrade('/realtime/v1/websocket?apikey=nope&vsn=2.0.0')).toEqual({
      status: 401,
      body: { error: 'The token provided is not a valid JWT' },
    });
    // A user's token is not an API key.
    const user = await accessToken(lb, 3600);
    expect((await upgrade(`/realtime/v1/websocket?apikey=${user}&vsn=2.0.0`)).status).toBe(401);
    expect((await upgrade(`/realtime/v1/websocket?apikey=${lb.anonKey}&vsn=3.0.0`)).status).toBe(400);
    expect((await upgrade(`/realtime/v1/elsewhere?apikey=${lb.anonKey}`)).status).toBe(404);
  });
});

describe('realtime: joining and leaving', () => {
  it('joins with the anon key, reports SUBSCRIBED, and leaves with CLOSED', async () => {
    const client = realtimeClient(lb);
    const statuses: string[] = [];
    const channel = client.channel('lobby');
    const joined = new Promise<void>((resolve) =>
      channel.subscribe((status) => {
        statuses.push(status);
        if (status === 'SUBSCRIBED') resolve();
      }),
    );
    await joined;
    expect(channel.state).toBe('joined');
    expect(await client.removeChannel(channel)).toBe('ok');
    await until(() => statuses.includes('CLOSED'), 2000, 'CLOSED');
    expect(statuses).toEqual(['SUBSCRIBED', 'CLOSED']);
  });

  it('joins over vsn 1.0.0 as well', async () => {
    const channel = realtimeClient(lb, { vsn: '1.0.0' }).channel('lobby-v1');
    expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
  });

  it('joins with a signed-in user’s session token (the ES256 signing key)', async () => {
    const { client } = await signedInClient(lb);
    const channel = client.channel('signed-in');
    expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
    await client.removeAllChannels();
    client.realtime.disconnect();
  });

  it('refuses an expired access token with InvalidJWTToken', async () => {
    const client = realtimeClient(lb);
    await client.realtime.setAuth(await accessToken(lb, -120));
    const channel = client.channel('expired');
    const result = await subscribe(channel);
    await client.removeChannel(channel); // the client would retry the join with backoff
    expect(result.status).toBe('CHANNEL_ERROR');
    expect(result.error?.message).toMatch(/^InvalidJWTToken: Token has expired 12\d seconds ago$/);
  });

  it('refuses a token that is not a JWT, or signed with another key', async () => {
    const client = realtimeClient(lb);
    await client.realtime.setAuth('not-a-jwt');
    const channel = client.channel('bad-token');
    const result = await subscribe(channel);
    await client.removeChannel(channel);
    expect(result.error?.message).toBe('MalformedJWT: The token provided is not a valid JWT');

    const other = realtimeClient(lb);
    const forged = await accessToken({ ...lb, jwtSecret: 'another-secret-of-at-least-32-characters' }, 3600);
    await other.realtime.setAuth(forged);
    const ch2 = other.channel('forged');
    const r2 = await subscribe(ch2);
    await other.removeChannel(ch2);
    expect(r2.error?.message).toBe('JwtSignatureError: Failed to validate JWT signature');
  });

  it('refuses a private channel when no policy on realtime.messages lets the user read it', async () => {
    const { client } = await signedInClient(lb);
    const channel = client.channel('private-room', { config: { private: true } });
    const result = await subscribe(channel);
    await client.removeAllChannels();
    client.realtime.disconnect();
    expect(result.status).toBe('CHANNEL_ERROR');
    expect(result.error?.message).toBe('Unauthorized: You do not have permissions to read from this Channel topic: private-room');
  });

  it('refuses an empty topic', async () => {
    const channel = realtimeClient(lb).channel('');
    const result = await subscribe(channel);
    await channel.unsubscribe();
    expect(result.error?.message).toBe('TopicNameRequired: You must provide a topic name');
  });
});

describe('realtime: the token of an open socket', () => {
  it('closes a channel when its token expires: a system error, CLOSED, and no more broadcasts', async () => {
    const client = realtimeClient(lb);
    await client.realtime.setAuth(await accessToken(lb, 2));
    const system: { status: string; message: string }[] = [];
    const heard: unknown[] = [];
    const statuses: string[] = [];
    const channel = client
      .channel('expiring')
      .on('system', {}, (p: { status: string; message: string }) => system.push(p))
      .on('broadcast', { event: 'tick' }, (m) => heard.push(m.payload));
    channel.subscribe((s) => statuses.push(s));
    await until(() => statuses.includes('SUBSCRIBED'), 5000, 'SUBSCRIBED');
    const sender = realtimeClient(lb).channel('expiring');
    expect((await subscribe(sender)).status).toBe('SUBSCRIBED');
    await sender.send({ type: 'broadcast', event: 'tick', payload: { n: 1 } });
    await until(() => heard.length === 1, 2000, 'the first broadcast');

    await until(() => statuses.includes('CLOSED'), 5000, 'CLOSED');
    expect(system).toEqual([{ extension: 'system', status: 'error', message: expect.stringMatching(/^Token has expired [01] seconds ago$/), channel: 'expiring' }]);
    await sender.send({ type: 'broadcast', event: 'tick', payload: { n: 2 } });
    await sleep(300);
    expect(heard).toEqual([{ n: 1 }]);
  });

  it('keeps a channel whose token is refreshed before it expires (access_token on the open socket)', async () => {
    const client = realtimeClient(lb);
    await client.realtime.setAuth(await accessToken(lb, 2));
    const system: unknown[] = [];
    const heard: unknown[] = [];
    const channel = client
      .channel('refreshed')
      .on('system', {}, (p) => system.push(p))
      .on('broadcast', { event: 'tick' }, (m) => heard.push(m.payload));
    expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
    await client.realtime.setAuth(await accessToken(lb, 3600)); // pushes access_token to the joined channel
    await sleep(3000);
    expect(channel.state).toBe('joined');
    const sender = realtimeClient(lb).channel('refreshed');
    expect((await subscribe(sender)).status).toBe('SUBSCRIBED');
    await sender.send({ type: 'broadcast', event: 'tick', payload: { n: 1 } });
    await until(() => heard.length === 1, 2000, 'the broadcast after the refresh');
    expect(system).toEqual([]);
  });

  it('closes a channel refreshed with a token it refuses', async () => {
    const client = realtimeClient(lb);
    await client.realtime.setAuth(await accessToken(lb, 3600));
    const system: { message: string }[] = [];
    const statuses: string[] = [];
    client
      .channel('bad-refresh')
      .on('system', {}, (p: { message: string }) => system.push(p))
      .subscribe((s) => statuses.push(s));
    await until(() => statuses.includes('SUBSCRIBED'), 5000, 'SUBSCRIBED');
    await client.realtime.setAuth(await accessToken(lb, -5));
    await until(() => statuses.includes('CLOSED'), 5000, 'CLOSED');
    expect(system.map((s) => s.message)).toEqual([expect.stringMatching(/^Token has expired [56] seconds ago$/)]);
  });
});

/** A raw Phoenix client: frames sent and received as they are on the wire. */
async function rawSocket(vsn: '1.0.0' | '2.0.0' = '2.0.0') {
  const ws = new WebSocket(`${lb.url.replace(/^http/, 'ws')}/realtime/v1/websocket?apikey=${lb.anonKey}&vsn=${vsn}`);
  const frames: unknown[] = [];
  let closed: { code: number; reason: string } | undefined;
  ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString())));
  ws.on('close', (code, reason) => (closed = { code, reason: reason.toString() }));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  return {
    ws,
    frames,
    closed: () => closed,
    send: (frame: unknown) => ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame)),
    async next(count = 1): Promise<unknown[]> {
      await until(() => frames.length >= count, 3000, `${count} frame(s)`);
      return frames.splice(0, count);
    },
  };
}

describe('realtime: the wire', () => {
  it('answers heartbeats, pushes to topics not joined, and leaves of them as the Phoenix server does', async () => {
    const s = await rawSocket();
    s.send([null, '1', 'phoenix', 'heartbeat', {}]);
    expect(await s.next()).toEqual([[null, '1', 'phoenix', 'phx_reply', { status: 'ok', response: {} }]]);
    s.send(['9', '2', 'realtime:nowhere', 'broadcast', { type: 'broadcast', event: 'x', payload: {} }]);
    expect(await s.next()).toEqual([['9', '2', 'realtime:nowhere', 'phx_reply', { status: 'error', response: { reason: 'unmatched topic' } }]]);
    s.send(['9', '3', 'realtime:nowhere', 'phx_leave', {}]);
    expect(await s.next()).toEqual([['9', '3', 'realtime:nowhere', 'phx_reply', { status: 'ok', response: {} }]]);
    s.ws.close();
  });

  it('delivers a large broadcast to many members once each, before the room’s next message (ADR 163)', async () => {
    const topic = `realtime:fanout-${Date.now().toString(36)}`;
    const join = async (ref: string) => {
      const s = await rawSocket();
      s.send([ref, ref, topic, 'phx_join', { config: { broadcast: { self: false } } }]);
      expect(await s.next()).toEqual([[ref, ref, topic, 'phx_reply', expect.objectContaining({ status: 'ok' })]]);
      return s;
    };
    const [first, second] = [await join('a'), await join('b')];
    const members: Awaited<ReturnType<typeof join>>[] = [];
    for (let i = 0; i < 40; i++) members.push(await join(`m${i}`));
    // 40 × 0.9 MB: written over several event-loop turns (4 MiB each); the small message another member sends
    // meanwhile is written behind it, to every member.
    first.send([null, null, topic, 'broadcast', { type: 'broadcast', event: 'big', payload: { blob: 'x'.repeat(900_000) } }]);
    await until(() => members[0]!.frames.length > 0, 5000, 'the first member has the large message');
    second.send([null, null, topic, 'broadcast', { type: 'broadcast', event: 'small', payload: { n: 1 } }]);
    for (const m of members) {
      const frames = (await m.next(2)) as [null, null, string, string, { event: string; payload: { blob?: string } }][];
      expect(frames.map((f) => f[4].event)).toEqual(['big', 'small']);
      expect(frames[0]![4].payload.blob).toHaveLength(900_000);
    }
    expect((await first.next(1)).map((f) => (f as unknown[])[4])).toEqual([expect.objectContaining({ event: 'small' })]);
    expect((await second.next(1)).map((f) => (f as unknown[])[4])).toEqual([expect.objectContaining({ event: 'big' })]);
    await sleep(100);
    for (const s of [first, second, ...members]) {
      expect(s.frames).toEqual([]); // nothing twice
      s.ws.close();
    }
  });

  it('answers anything but a heartbeat on the phoenix topic as Phoenix does: "unmatched topic", a leave ok', async () => {
    const s = await rawSocket();
    s.send([null, '1', 'phoenix', 'broadcast', { type: 'broadcast', event: 'x', payload: {} }]);
    expect(await s.next()).toEqual([[null, '1', 'phoenix', 'phx_reply', { status: 'error', response: { reason: 'unmatched topic' } }]]);
    s.send(['2', '2', 'phoenix', 'phx_join', {}]);
    expect(await s.next()).toEqual([['2', '2', 'phoenix', 'phx_reply', { status: 'error', response: { reason: 'unmatched topic' } }]]);
    s.send([null, '3', 'phoenix', 'phx_leave', {}]);
    expect(await s.next()).toEqual([[null, '3', 'phoenix', 'phx_reply', { status: 'ok', response: {} }]]);
    s.send([null, '4', 'phoenix', 'heartbeat', {}]);
    expect(await s.next()).toEqual([[null, '4', 'phoenix', 'phx_reply', { status: 'ok', response: {} }]]);
    s.ws.close();
  });

  it('echoes postgres_changes bindings in order with ids, and says in a system message when it cannot subscribe', async () => {
    const s = await rawSocket();
    const bindings = [
      { event: 'INSERT', schema: 'public', table: 'rt_no_such_table', filter: 'id=eq.1' },
      { event: '*', schema: 'public' },
    ];
    s.send(['1', '1', 'realtime:pg', 'phx_join', { config: { postgres_changes: bindings }, access_token: null }]);
    const [reply, system] = (await s.next(2)) as [unknown[], unknown[]];
    expect(reply).toEqual(['1', '1', 'realtime:pg', 'phx_reply', { status: 'ok', response: { postgres_changes: [{ ...bindings[0], id: 1 }, { ...bindings[1], id: 2 }] } }]);
    const message =
      'Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given connect parameters: ' +
      '[event: INSERT, schema: public, table: rt_no_such_table, filters: [{"id", "eq", "1", false}], select: nil]';
    expect(system).toEqual(['1', null, 'realtime:pg', 'system', { extension: 'postgres_changes', status: 'error', message, channel: 'pg' }]);
    // leave: ok, then phx_close with ref = join_ref
    s.send(['1', '2', 'realtime:pg', 'phx_leave', {}]);
    expect(await s.next(2)).toEqual([
      ['1', '2', 'realtime:pg', 'phx_reply', { status: 'ok', response: {} }],
      ['1', '1', 'realtime:pg', 'phx_close', {}],
    ]);
    s.ws.close();
  });

  it('sends 1.0.0 frames as objects without join_ref', async () => {
    const s = await rawSocket('1.0.0');
    s.send({ topic: 'realtime:v1', event: 'phx_join', payload: { config: {} }, ref: '1', join_ref: '1' });
    expect(await s.next()).toEqual([{ topic: 'realtime:v1', event: 'phx_reply', payload: { status: 'ok', response: { postgres_changes: [] } }, ref: '1' }]);
    s.ws.close();
  });

  it('carries messages nested 20 000 levels deep as Realtime does (its JSON has no depth limit): no 1011, no crash', async () => {
    // JSON.stringify recursed past the stack on such a payload: the sender was closed with 1011 after part of the
    // room had it, a REST send was a 500, and a socket leaving with such a presence threw in its close handler,
    // which ended the whole server (an uncaught exception).
    const levels = 20_000;
    const deepText = '['.repeat(levels) + ']'.repeat(levels);
    const depthOf = (v: unknown): number => {
      let n = 0;
      for (let x = v; Array.isArray(x); x = x[0]) n++;
      return n;
    };
    type Frame = [string | null, string | null, string, string, Record<string, unknown>];
    const find = (s: Awaited<ReturnType<typeof rawSocket>>, event: string, what = event) =>
      until(() => s.frames.some((f) => Array.isArray(f) && f[3] === event), 3000, what).then(() => {
        const i = s.frames.findIndex((f) => Array.isArray(f) && f[3] === event);
        return s.frames.splice(i, 1)[0] as Frame;
      });
    const topic = 'realtime:deep';
    const config = { broadcast: { ack: true }, presence: { enabled: true } };
    const sender = await rawSocket();
    const member = await rawSocket();
    const old = await rawSocket('1.0.0');
    sender.send(['1', '1', topic, 'phx_join', { config }]);
    member.send(['1', '1', topic, 'phx_join', { config }]);
    old.send({ topic, event: 'phx_join', payload: { config }, ref: '1', join_ref: '1' });
    await until(() => [sender, member, old].every((s) => s.frames.length >= 2), 3000, 'the joins');
    for (const s of [sender, member, old]) s.frames.length = 0;

    sender.send(`["1","2","${topic}","broadcast",{"type":"broadcast","event":"deep","payload":{"n":${deepText}}}]`);
    expect(await find(sender, 'phx_reply', 'the ack')).toEqual(['1', '2', topic, 'phx_reply', { status: 'ok', response: {} }]);
    expect(depthOf(((await find(member, 'broadcast'))[4].payload as { n: unknown }).n)).toBe(levels);
    await until(() => old.frames.length > 0, 3000, 'the 1.0.0 member');
    expect(depthOf(((old.frames.pop() as { payload: { payload: { n: unknown } } }).payload.payload.n))).toBe(levels);

    const rest = await fetch(`${lb.url}/realtime/v1/api/broadcast`, {
      method: 'POST',
      headers: { apikey: lb.anonKey, 'content-type': 'application/json' },
      body: `{"messages":[{"topic":"deep","event":"deep","payload":{"n":${deepText}}}]}`,
    });
    expect(rest.status).toBe(202);
    expect(depthOf(((await find(member, 'broadcast', 'the REST broadcast'))[4].payload as { n: unknown }).n)).toBe(levels);

    sender.send(`["1","3","${topic}","presence",{"type":"presence","event":"track","payload":{"n":${deepText}}}]`);
    expect(await find(sender, 'phx_reply', 'the track reply')).toEqual(['1', '3', topic, 'phx_reply', { status: 'ok', response: {} }]);
    const joined = (await find(member, 'presence_diff'))[4] as { joins: Record<string, { metas: { n: unknown }[] }> };
    const [key] = Object.keys(joined.joins);
    expect(depthOf(joined.joins[key!]!.metas[0]!.n)).toBe(levels);
    sender.ws.close();
    const left = (await find(member, 'presence_diff', 'the leave'))[4] as { leaves: Record<string, unknown> };
    expect(Object.keys(left.leaves)).toEqual([key]);
    const late = await rawSocket();
    late.send(`["1","1","realtime:deep-join","phx_join",{"config":{"postgres_changes":[{"event":"*","schema":"public","n":${deepText}}]}}]`);
    const [reply] = (await late.next()) as Frame[];
    expect(reply![4].status).toBe('ok');
    for (const s of [member, old, late]) expect(s.closed()).toBeUndefined();
    for (const s of [member, old, late]) s.ws.close();
  });

  it('ignores a frame it cannot read, as Realtime does: the socket and its channels stay', async () => {
    // Each of these closed the socket with 1003: every channel on it errored and was joined again. Realtime logs
    // such a frame (MalformedWebSocketMessage) and goes on.
    for (const vsn of ['2.0.0', '1.0.0'] as const) {
      const s = await rawSocket(vsn);
      const join = { topic: 'realtime:garbage', event: 'phx_join', payload: { config: { broadcast: { self: true } } }, ref: '1', join_ref: '1' };
      s.send(vsn === '2.0.0' ? ['1', '1', join.topic, join.event, join.payload] : join);
      await s.next();
      for (const frame of ['not json', '', '{"not":"an array"}', '["1","2","realtime:garbage"]', '[null,null,5,"e",{}]', '"text"'])
        s.send(vsn === '2.0.0' ? frame : frame.replace('{"not":"an array"}', '["an array"]'));
      s.ws.send(Buffer.from([3, 9, 0, 0, 0, 0, 1])); // binary: shorter than its header says (and none at all on 1.0.0)
      s.ws.send(Buffer.from([7, 0, 0, 0, 0, 0, 1]));
      const tail = Buffer.from('realtime:garbagee{x');
      s.ws.send(Buffer.concat([Buffer.from([3, 1, 1, 16, 1, 0, 1]), Buffer.from('12'), tail])); // payload not JSON
      if (vsn === '2.0.0') s.send(['1', '3', 'realtime:garbage', 'broadcast', { type: 'broadcast', event: 'e', payload: { still: 'here' } }]);
      else s.send({ topic: 'realtime:garbage', event: 'broadcast', payload: { type: 'broadcast', event: 'e', payload: { still: 'here' } }, ref: '3', join_ref: '1' });
      await until(() => s.frames.length > 0 || s.closed() !== undefined, 3000, `the broadcast back (${vsn})`);
      expect(s.closed()).toBeUndefined();
      expect(JSON.stringify(s.frames.shift())).toContain('"still":"here"');
      s.send(vsn === '2.0.0' ? [null, '4', 'phoenix', 'heartbeat', {}] : { topic: 'phoenix', event: 'heartbeat', payload: {}, ref: '4' });
      expect(JSON.stringify(await s.next())).toContain('"status":"ok"');
      expect(s.closed()).toBeUndefined();
      s.ws.close();
    }
  });

  it('closes the socket on too many joins per second (1001)', async () => {

    const eager = await rawSocket();
    for (let i = 1; i <= 101; i++) eager.send([String(i), String(i), `realtime:j${i}`, 'phx_join', { config: {} }]);
    await until(() => eager.closed() !== undefined, 5000, 'the close');
    expect(eager.closed()).toEqual({ code: 1001, reason: 'Too many joins per second' });
    expect(eager.frames.at(-1)).toEqual(['101', '101', 'realtime:j101', 'phx_reply', { status: 'error', response: { reason: 'ClientJoinRateLimitReached: Too many joins per second' } }]);
  });
});

describe('realtime: a client that stops reading', () => {
  it('is not a member that reads along and is handed one frame over 16 MiB (a presence state of many big metas)', { timeout: 120_000 }, async () => {
    // The far-behind rule counted the frame just queued: once a room's presence state passed 16 MiB, every socket that
    // joined it with presence (or tracked in it) was cut at once, and realtime-js reconnected into the same cut.
    const topic = `realtime:crowd-${Date.now().toString(36)}`;
    const open = async () => {
      const ws = new WebSocket(`${lb.url.replace(/^http/, 'ws')}/realtime/v1/websocket?apikey=${lb.anonKey}&vsn=2.0.0`);
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
      let closed: number | undefined;
      const sizes: { event: string; bytes: number }[] = [];
      ws.on('close', (code) => (closed = code));
      ws.on('message', (data: Buffer) => sizes.push({ event: /^\[[^,]*,[^,]*,"[^"]*","([^"]*)"/.exec(data.toString('latin1', 0, 200))?.[1] ?? '', bytes: data.length }));
      return { ws, sizes, closed: () => closed };
    };
    const meta = 'm'.repeat(1_000_000);
    const members: Awaited<ReturnType<typeof open>>[] = [];
    for (let i = 0; i < 20; i++) {
      const m = await open();
      m.ws.send(JSON.stringify(['1', '1', topic, 'phx_join', { config: {} }]));
      m.ws.send(JSON.stringify(['1', '2', topic, 'presence', { type: 'presence', event: 'track', payload: { i, meta } }]));
      await until(() => m.sizes.some((f) => f.event === 'phx_reply' && f.bytes < 100) && m.sizes.length >= 3, 10_000, `member ${i}'s track`);
      members.push(m);
    }
    const late = await open();
    late.ws.send(JSON.stringify(['1', '1', topic, 'phx_join', { config: { presence: { enabled: true } } }]));
    await until(() => late.sizes.some((f) => f.event === 'presence_state') || late.closed() !== undefined, 20_000, 'the presence state');
    expect(late.closed()).toBeUndefined();
    expect(late.sizes.find((f) => f.event === 'presence_state')!.bytes).toBeGreaterThan(20_000_000);
    expect(members.map((m) => m.closed())).toEqual(members.map(() => undefined));
    for (const m of [...members, late]) m.ws.terminate();
  });

  it('is disconnected once far behind, instead of the server queueing without bound; the others keep hearing', { timeout: 120_000 }, async () => {
    // A member whose socket is never read (a hostile client, or a stuck one) made the server queue every broadcast
    // for it: N such sockets in one room multiplied each 1 MiB message by N in the server's memory.
    const topic = `realtime:slow-${Date.now().toString(36)}`;
    const join = (s: Awaited<ReturnType<typeof rawSocket>>, ref: string) =>
      s.send([ref, ref, topic, 'phx_join', { config: { broadcast: { self: false } }, access_token: null }]);
    const stuck = await rawSocket();
    const reader = await rawSocket();
    const sender = await rawSocket();
    for (const [s, ref] of [[stuck, '1'], [reader, '2'], [sender, '3']] as const) {
      join(s, ref);
      await s.next();
    }
    stuck.ws.pause(); // reads nothing more from the network
    const payload = 'x'.repeat(1_000_000);
    const messages = 120; // 120 MB: more than the kernel's socket buffers on loopback hold for the stuck member
    for (let i = 0; i < messages; i++) {
      sender.send(['3', String(100 + i), topic, 'broadcast', { type: 'broadcast', event: 'big', payload: { i, payload } }]);
      await sleep(15); // under 100 events a second
      reader.frames.length = 0;
    }
    stuck.ws.resume();
    await until(() => stuck.closed() !== undefined, 30_000, 'the stuck member to be disconnected');
    expect(sender.closed()).toBeUndefined();
    expect(reader.closed()).toBeUndefined();
    sender.send(['3', '999', topic, 'broadcast', { type: 'broadcast', event: 'small', payload: { ok: true } }]);
    await until(() => reader.frames.some((f) => Array.isArray(f) && f[3] === 'broadcast' && (f[4] as { event?: string }).event === 'small'), 5000, 'the reader');
    for (const s of [stuck, reader, sender]) s.ws.terminate();
  });
});
