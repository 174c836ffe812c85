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
