// localbase on a PostgreSQL server that goes away while it runs (a restart, a network cut): what clients get meanwhile
// and that it serves again by itself afterwards. The database is reached through a TCP relay the test can cut
// (every open connection dropped, new ones refused) and restore, so the shared test server is never stopped.
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { anonClient, captureConsole, ownDatabase, PASSWORD, serviceClient, startTestServer, testDatabaseUrl, uniqueEmail, type Localbase } from './helpers.ts';
import { accessToken, closeRealtimeClients, realtimeClient, subscribe, until } from './realtime-helpers.ts';

/** A TCP relay to host:port on a loopback port of its own; cut() drops every connection and refuses new ones. */
async function startRelay(
  target: URL,
): Promise<{ url: string; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void>; loseCommitAnswer(marker: string): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  // loseCommitAnswer: on the connection that sends `marker`, its next COMMIT reaches the server and the answer is lost
  let commitCut: { marker: string; done: () => void } | undefined;
  let server: net.Server | undefined;
  let port = 0;
  const listen = async () => {
    if (server) return;
    const s = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      let marked = false;
      let committing = false;
      client.on('data', (chunk: Buffer) => {
        if (!commitCut) return;
        if (chunk.includes(commitCut.marker)) marked = true;
        else if (marked && chunk.includes('COMMIT')) committing = true;
      });
      upstream.on('data', () => {
        if (!committing || !commitCut) return;
        // the server answered the COMMIT (so it is done): the answer never reaches localbase
        client.unpipe();
        upstream.unpipe();
        client.destroy();
        upstream.destroy();
        commitCut.done();
        commitCut = undefined;
      });
      for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
        sockets.add(a);
        a.on('error', () => b.destroy());
        a.on('close', () => {
          sockets.delete(a);
          b.destroy();
        });
        a.pipe(b);
      }
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', resolve);
    });
    port = (s.address() as net.AddressInfo).port;
    server = s;
  };
  const cut = async () => {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => (s ? s.close(() => resolve()) : resolve()));
  };
  await listen();
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const loseCommitAnswer = (marker: string) => new Promise<void>((done) => (commitCut = { marker, done }));
  return { url: url.toString(), cut, restore: listen, close: cut, loseCommitAnswer };
}

describe.skipIf(!testDatabaseUrl)('the database goes away while localbase runs', () => {
  let lb: Localbase;
  let relay: Awaited<ReturnType<typeof startRelay>>;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const own = await ownDatabase();
    drop = own.drop;
    relay = await startRelay(new URL(own.options.databaseUrl!));
    lb = await startTestServer({ databaseUrl: relay.url, quiet: false });
    await lb.db.exec(`
      create table public.outage_items (id int primary key, name text);
      alter table public.outage_items enable row level security;
      create policy "read" on public.outage_items for select using (true);
      grant select on public.outage_items to anon;
      insert into public.outage_items values (1, 'one');
      alter publication supabase_realtime add table public.outage_items;
      create policy "outage read" on realtime.messages for select to authenticated using (realtime.topic() like 'outage-%');
      create policy "outage write" on realtime.messages for insert to authenticated with check (realtime.topic() like 'outage-%');`);
    await lb.reloadSchema();
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    await closeRealtimeClients();
    await lb?.stop();
    await relay?.close();
    await drop?.();
  });

  it('/rest/v1 answers 503 PGRST000 as PostgREST while the database is unreachable, and serves again after', async () => {
    const client = anonClient(lb);
    await relay.cut();
    const down = await client.from('outage_items').select('id, name').retry(false);
    expect(down.status).toBe(503);
    expect(down.error).toMatchObject({ code: 'PGRST000', message: 'Database connection error. Retrying the connection.' });
    expect(down.error?.details).toMatch(/ECONNREFUSED|terminated|closed/i);

    await relay.restore();
    const up = await client.from('outage_items').select('id, name');
    expect(up.status).toBe(200);
    expect(up.data).toEqual([{ id: 1, name: 'one' }]);
  });

  it('/storage/v1 answers 500 InternalError as the storage server while the database is unreachable, and serves again after', async () => {
    const admin = serviceClient(lb);
    expect((await admin.storage.createBucket('outage-files')).error).toBeNull();
    await relay.cut();
    const down = await admin.storage.from('outage-files').list();
    expect(down.error).toMatchObject({ name: 'StorageApiError', status: 500, statusCode: '500', message: 'Internal Server Error' });
    const raw = await fetch(`${lb.url}/storage/v1/bucket/outage-files`, { headers: { apikey: lb.serviceRoleKey, authorization: `Bearer ${lb.serviceRoleKey}` } });
    expect([raw.status, await raw.json()]).toEqual([500, { statusCode: '500', code: 'InternalError', error: 'Internal', message: 'Internal Server Error' }]);

    await relay.restore();
    const up = await admin.storage.from('outage-files').list();
    expect(up.error).toBeNull();
  });

  it('an upload whose COMMIT reached the database but whose answer was lost leaves no row without its bytes', async () => {
    const admin = serviceClient(lb);
    await admin.storage.createBucket('outage-commit');
    const files = admin.storage.from('outage-commit');
    expect((await files.upload('note.txt', 'first version', { contentType: 'text/plain' })).error).toBeNull();
    const lost = relay.loseCommitAnswer('pg_advisory_xact_lock');
    const upload = await files.upload('note.txt', 'second version', { contentType: 'text/plain', upsert: true });
    await lost;
    expect(upload.error).not.toBeNull(); // never acknowledged
    // The row committed: it must name bytes that exist (before, the file was deleted as if the commit had failed).
    const { data, error } = await files.download('note.txt');
    expect(error).toBeNull();
    expect(await data?.text()).toBe('second version');
  });

  it("auth answers GoTrue's 500 with the message of the step that met the outage, and serves again after", async () => {
    const email = uniqueEmail('outage-auth');
    await serviceClient(lb).auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    const signedIn = anonClient(lb);
    const { data } = await signedIn.auth.signInWithPassword({ email, password: PASSWORD });
    const token = data.session?.access_token ?? '';
    await relay.cut();
    const client = anonClient(lb);
    const signIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
    // auth-js reads any 5xx as retryable and keeps the body's message
    expect(signIn.error).toMatchObject({ name: 'AuthRetryableFetchError', status: 500, message: 'Database error querying schema' });
    const signUp = await client.auth.signUp({ email: uniqueEmail('outage-new'), password: PASSWORD });
    expect(signUp.error).toMatchObject({ name: 'AuthRetryableFetchError', status: 500, message: 'Database error finding user' });
    const magicLink = await client.auth.signInWithOtp({ email });
    expect(magicLink.error).toMatchObject({ name: 'AuthRetryableFetchError', status: 500, message: 'Database error finding user' });
    const recovery = await client.auth.resetPasswordForEmail(email);
    expect(recovery.error).toMatchObject({ name: 'AuthRetryableFetchError', status: 500, message: 'Unable to process request' });
    // the admin API (service role), as GoTrue's admin handlers name their lookups
    const admin = serviceClient(lb).auth.admin;
    const list = await admin.listUsers();
    expect(list.error).toMatchObject({ name: 'AuthRetryableFetchError', status: 500, message: 'Database error finding users' });
    const one = await admin.getUserById(data.user?.id ?? '');
    expect(one.error).toMatchObject({ name: 'AuthRetryableFetchError', status: 500, message: 'Database error loading user' });
    const user = await client.auth.getUser(token);
    expect(user.error).toMatchObject({ name: 'AuthRetryableFetchError', status: 500, message: 'Unexpected failure, please check server logs for more information' });

    await relay.restore();
    expect((await client.auth.getUser(token)).data.user?.email).toBe(email);
  });

  it('a postgres_changes join while the database is unreachable is refused as Realtime does; the socket and its other channels stay', async () => {
    const client = realtimeClient(lb);
    const chat = client.channel('outage-chat');
    expect((await subscribe(chat)).status).toBe('SUBSCRIBED');
    await relay.cut();
    const changes = client.channel('outage-changes').on('postgres_changes', { event: '*', schema: 'public', table: 'outage_items' }, () => {});
    const refused = await subscribe(changes);
    expect(refused.status).toBe('CHANNEL_ERROR');
    expect(refused.error?.message).toContain('UnableToConnectToProject: Realtime was unable to connect to the project database');
    expect(chat.state).toBe('joined');

    await relay.restore();
    await until(() => changes.state === 'joined', 20_000, 'the channel to rejoin by itself'); // realtime-js retries a refused join
  });

  it('a broadcast or presence on a private channel while the database is unreachable is refused as Realtime does; the socket and its channels stay', async () => {
    const client = realtimeClient(lb);
    await client.realtime.setAuth(await accessToken(lb, 3600));
    const received: unknown[] = [];
    const room = client
      .channel('outage-room', { config: { private: true, broadcast: { self: true }, presence: { key: 'me' } } })
      .on('broadcast', { event: 'hi' }, (m) => received.push(m.payload));
    const chat = client.channel('outage-chat-2');
    expect((await subscribe(room)).status).toBe('SUBSCRIBED');
    expect((await subscribe(chat)).status).toBe('SUBSCRIBED');
    const lines = captureConsole();
    await relay.cut();
    // Realtime cannot check the channel's write policy: the broadcast is dropped and the presence refused
    expect(await room.send({ type: 'broadcast', event: 'hi', payload: { n: 1 } })).toBe('ok');
    expect(await room.track({ online: true })).toBe('error');
    await new Promise((r) => setTimeout(r, 300));
    expect([client.realtime.isConnected(), room.state, chat.state]).toEqual([true, 'joined', 'joined']);
    expect(received).toEqual([]);
    expect(lines.filter((l) => /\n\s+at /.test(l))).toEqual([]);

    await relay.restore();
    await room.send({ type: 'broadcast', event: 'hi', payload: { n: 2 } });
    await until(() => received.length > 0, 5000, 'the broadcast sent after the outage');
    expect(received).toEqual([{ n: 2 }]);
    expect(await room.track({ online: true })).toBe('ok');
  });

  it('a REST broadcast to a private topic while the database is unreachable: the batch is accepted and the message dropped, httpSend answers 422 as Realtime does', async () => {
    // Both answered 500 with GoTrue's unexpected_failure body; send()'s fallback said 'error', httpSend() rejected
    // with "Unexpected failure, please check server logs…".
    const client = realtimeClient(lb);
    await client.realtime.setAuth(await accessToken(lb, 3600));
    const room = client.channel('outage-rest', { config: { private: true } });
    const lines = captureConsole();
    await relay.cut();
    try {
      expect(await room.send({ type: 'broadcast', event: 'hi', payload: { n: 1 } })).toBe('ok'); // the REST batch (not joined)
      await expect(room.httpSend('hi', { n: 2 })).rejects.toThrow(/^Tenant database unavailable$/);
      const batch = await fetch(`${lb.url}/realtime/v1/api/broadcast`, {
        method: 'POST',
        headers: { apikey: lb.anonKey, 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ topic: 'outage-rest', event: 'hi', payload: {}, private: true }] }),
      });
      expect([batch.status, await batch.text()]).toEqual([202, '']);
      const single = await fetch(`${lb.url}/realtime/v1/api/broadcast/outage-rest/events/hi?private=true`, {
        method: 'POST',
        headers: { apikey: lb.anonKey, 'content-type': 'application/json' },
        body: '{}',
      });
      expect([single.status, await single.json()]).toEqual([422, { message: 'Tenant database unavailable' }]);
      expect(lines.filter((l) => /\n\s+at /.test(l))).toEqual([]);
    } finally {
      await relay.restore();
    }
    expect(await room.httpSend('hi', { n: 3 })).toEqual({ success: true });
  });

  it('the service role\'s REST broadcast to a private topic while the database is unreachable: httpSend answers 422, the batch drops it, as Realtime does', async () => {
    // Realtime checks a private message against the database also for the service role (its policies pass, the
    // connection is still needed): localbase skipped the check for it, so the message was delivered (202).
    const heard: unknown[] = [];
    const listener = realtimeClient(lb, { key: lb.serviceRoleKey })
      .channel('outage-service', { config: { private: true } })
      .on('broadcast', { event: '*' }, (m) => heard.push(m.payload));
    expect((await subscribe(listener)).status).toBe('SUBSCRIBED');
    const sender = realtimeClient(lb, { key: lb.serviceRoleKey }).channel('outage-service', { config: { private: true } });
    await relay.cut();
    try {
      await expect(sender.httpSend('hi', { n: 1 })).rejects.toThrow(/^Tenant database unavailable$/);
      const batch = await fetch(`${lb.url}/realtime/v1/api/broadcast`, {
        method: 'POST',
        headers: { apikey: lb.serviceRoleKey, 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ topic: 'outage-service', event: 'hi', payload: { n: 2 }, private: true }] }),
      });
      expect([batch.status, await batch.text()]).toEqual([202, '']);
    } finally {
      await relay.restore();
    }
    expect(await sender.httpSend('hi', { n: 3 })).toEqual({ success: true });
    await until(() => heard.length > 0, 5000, 'the message sent after the outage');
    expect(heard).toEqual([{ n: 3 }]);
  });

  it("a token refresh while the database is unreachable shuts the private channel down with Realtime's message; the socket and its other channels stay", async () => {
    const client = realtimeClient(lb);
    const sub = crypto.randomUUID();
    await client.realtime.setAuth(await accessToken(lb, 3600, sub));
    const system: unknown[] = [];
    const room = client
      .channel('outage-refresh', { config: { private: true } })
      .on('system', {}, (m: Record<string, unknown>) => system.push(m));
    const chat = client.channel('outage-chat-3');
    expect((await subscribe(room)).status).toBe('SUBSCRIBED');
    expect((await subscribe(chat)).status).toBe('SUBSCRIBED');
    const lines = captureConsole();
    await relay.cut();
    await client.realtime.setAuth(await accessToken(lb, 7200, sub)); // realtime-js sends access_token to each channel
    await until(() => system.length > 0, 5000, 'the system message');
    expect(system).toEqual([
      { extension: 'system', status: 'error', message: 'Realtime was unable to connect to the project database', channel: 'outage-refresh' },
    ]);
    await until(() => room.state === 'closed', 5000, 'the private channel to close');
    await new Promise((r) => setTimeout(r, 200));
    expect([client.realtime.isConnected(), chat.state]).toEqual([true, 'joined']);
    expect(lines.filter((l) => /\n\s+at /.test(l))).toEqual([]);
    await relay.restore();
  });

  // Through lb.db: over HTTP the gap between two statements of a request (a token signed, a file renamed) is too short
  // to cut the connection in deterministically; before the fix the lost connection's 'error' event had no listener.
  it('a connection lost while a transaction is open between two statements fails that transaction, not the process', async () => {
    const outcome = await lb.db
      .transaction(async (tx) => {
        await tx.query('select 1');
        await relay.cut(); // the connection drops while no statement of it runs
        await new Promise((r) => setTimeout(r, 100));
        await tx.query('select 2');
      })
      .then(
        () => 'committed',
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
    expect(outcome).toMatch(/terminated|not queryable|connection/i);
    await relay.restore();
    const up = await anonClient(lb).from('outage_items').select('id');
    expect(up.status).toBe(200);
  });

  it('the operator reads one line when the database goes away and one when it is back, never a stack per request', async () => {
    const email = uniqueEmail('outage');
    await serviceClient(lb).auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    const lines = captureConsole();
    await relay.cut();
    for (let i = 0; i < 3; i++) {
      const { error } = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
      expect(error?.status).toBe(500); // GoTrue's status; auth-js keeps the session and retries a refresh on it
    }
    const storage = await serviceClient(lb).storage.listBuckets();
    expect(storage.error).not.toBeNull();

    await relay.restore();
    const { error } = await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD });
    expect(error).toBeNull();
    expect(lines.filter((l) => /\n\s+at /.test(l))).toEqual([]);
    expect(lines.filter((l) => /database is unreachable/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /database is reachable again/.test(l))).toHaveLength(1);
  });
});

describe.skipIf(!testDatabaseUrl)('waits for a connection are bounded', () => {
  it("a database host that never answers stops the start after the URL's connect_timeout, naming the database", async () => {
    const silent = net.createServer(() => {}); // accepts and says nothing, as a host behind a firewall that drops packets
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      await expect(
        startTestServer({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/postgres?connect_timeout=1` }),
      ).rejects.toThrow(/cannot connect to the database postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres.*timeout/);
    } finally {
      silent.close();
    }
  });

  it('with every pooled connection busy, /rest/v1 answers 504 PGRST003, auth 504 request_timeout and storage 544 DatabaseTimeout after the connect timeout', async () => {
    const own = await ownDatabase();
    const url = new URL(own.options.databaseUrl!);
    url.searchParams.set('connect_timeout', '1');
    const lb = await startTestServer({ databaseUrl: url.toString() });
    try {
      await lb.db.exec(`create function public.hold(s float) returns int language sql as 'select 1 from pg_sleep(s)';
        grant execute on function public.hold to anon;`);
      await lb.reloadSchema();
      const client = anonClient(lb);
      // the pool has 10 connections (a builder sends its request when then() is called)
      const busy = Array.from({ length: 10 }, () => client.rpc('hold', { s: 6 }).then((r) => r));
      await new Promise((r) => setTimeout(r, 500));
      const rest = await client.rpc('hold', { s: 0 });
      expect(rest.status).toBe(504);
      expect(rest.error).toMatchObject({ code: 'PGRST003', message: 'Timed out acquiring connection from connection pool.' });
      const auth = await client.auth.signInWithPassword({ email: uniqueEmail('busy'), password: PASSWORD });
      expect(auth.error?.status).toBe(504);
      // the storage server's DatabaseTimeout: HTTP 544, which storage-js reports as any other error status
      const storage = await serviceClient(lb).storage.listBuckets();
      expect(storage.error).toMatchObject({
        name: 'StorageApiError',
        status: 544,
        statusCode: '544',
        code: 'DatabaseTimeout',
        message: 'The connection to the database timed out',
      });
      expect((await Promise.all(busy)).map((r) => r.status)).toEqual(Array<number>(10).fill(200));
    } finally {
      await lb.stop();
      await own.drop();
    }
  });
});
