// The HTTP/1.1 connection (decision 020), driven over raw TCP: clients that give up mid-body, bodies answered before
// they were read (413 and early 4xx), slow bodies on keep-alive connections, and malformed pipelined requests.
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { captureConsole, PASSWORD, raw, startTestServer, type Localbase } from './helpers.ts';

let lb: Localbase;
let port: number;

beforeAll(async () => {
  // Not quiet: the request log is part of what is tested.
  lb = await startTestServer({ quiet: false });
  port = Number(new URL(lb.url).port);
});

afterAll(async () => {
  await lb?.stop();
});

afterEach(() => {
  vi.restoreAllMocks();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A raw TCP connection that records everything the server sends and how the connection ended. */
class RawConn {
  readonly socket: net.Socket;
  received = Buffer.alloc(0);
  closed = false;
  error: string | undefined;

  constructor() {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (d: Buffer) => (this.received = Buffer.concat([this.received, d])));
    this.socket.on('error', (e: NodeJS.ErrnoException) => (this.error ??= e.code ?? e.message));
    this.socket.on('close', () => (this.closed = true));
  }

  ready(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
  }

  /** Writes and waits until the data is handed to the kernel; false when the connection broke (EPIPE, reset). */
  write(data: string | Buffer): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.socket.destroyed) return resolve(false);
      this.socket.write(data, (err) => resolve(!err));
    });
  }

  /** The status lines received so far, in order. */
  statuses(): number[] {
    return [...this.received.toString('latin1').matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
  }

  text(): string {
    return this.received.toString('utf8');
  }
}

function head(method: string, path: string, headers: Record<string, string | number> = {}): string {
  const all: Record<string, string | number> = { Host: `127.0.0.1:${port}`, apikey: lb.anonKey, ...headers };
  return `${method} ${path} HTTP/1.1\r\n${Object.entries(all)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n`;
}

describe('a client that gives up mid-body', () => {
  it('is logged as 499 "client closed request" on one line, without a 500 or a stack, and the server keeps serving', async () => {
    const lines = captureConsole();
    {
      for (const path of ['/auth/v1/signup', '/auth/v1/token?grant_type=password', '/auth/v1/otp']) {
        const conn = new RawConn();
        await conn.ready();
        const body = JSON.stringify({ email: 'gone@example.com', password: PASSWORD, data: { pad: 'x'.repeat(400) } });
        await conn.write(head('POST', path, { 'Content-Type': 'application/json', 'Content-Length': body.length }));
        await conn.write(body.slice(0, body.length / 2));
        await sleep(30);
        conn.socket.destroy();
        const logged = path.split('?')[0]!;
        await until(() => lines.some((l) => l.startsWith(`POST ${logged} `)), `the log line of ${logged}`);
      }
    }
    const requestLines = lines.filter((l) => /^POST \/auth\/v1\//.test(l));
    expect(requestLines, lines.join('\n')).toHaveLength(3);
    for (const line of requestLines) expect(line).toMatch(/^POST \/auth\/v1\/\w+ 499 \(client closed the connection\) [\d.]+ms$/);
    expect(lines.filter((l) => / 5\d\d /.test(l) || l.includes('failed:') || /\n\s+at /.test(l)), lines.join('\n')).toEqual([]);
    expect((await raw(lb, '/auth/v1/health')).status).toBe(200);
  });
});

describe('a request body the server answers before reading it', () => {
  const BODY = Buffer.from(`{"email":"big@example.com","data":"${'x'.repeat(3_000_000)}"}`);

  /** Sends the whole body first, in 64 KB writes as a network would deliver them, and reads only afterwards. */
  async function uploadThenRead(path: string, extra: Record<string, string> = {}): Promise<{ status: number | undefined; code: unknown; writeFailed: boolean; error?: string }> {
    const conn = new RawConn();
    await conn.ready();
    let writeFailed = !(await conn.write(head('POST', path, { 'Content-Type': 'application/json', 'Content-Length': BODY.length, ...extra })));
    for (let off = 0; off < BODY.length && !writeFailed; off += 65536) {
      writeFailed = !(await conn.write(BODY.subarray(off, off + 65536)));
      await new Promise((r) => setImmediate(r));
    }
    await until(() => conn.closed || /\r\n\r\n[\s\S]*\}/.test(conn.text()), 'the answer').catch(() => {});
    const text = conn.text();
    const json = text.slice(text.indexOf('\r\n\r\n') + 4);
    let code: unknown;
    try {
      code = (JSON.parse(json) as { code?: unknown }).code;
    } catch {
      code = undefined;
    }
    conn.socket.destroy();
    return { status: conn.statuses()[0], code, writeFailed, error: conn.error };
  }

  it('20 uploads of 3 MB (whole body written before reading) all get 413 request_too_large, not a broken pipe', async () => {
    const results = [];
    for (let i = 0; i < 20; i++) results.push(await uploadThenRead(i % 2 ? '/auth/v1/signup' : '/rest/v1/anything'));
    expect(results.filter((r) => r.status !== 413 || r.code !== 'request_too_large' || r.writeFailed)).toEqual([]);
  });

  it('also when the client asked to close the connection after the answer (Connection: close)', async () => {
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await uploadThenRead('/auth/v1/signup', { Connection: 'close' }));
    expect(results.filter((r) => r.status !== 413 || r.code !== 'request_too_large' || r.writeFailed)).toEqual([]);
  });

  it('the connection stays usable after the 413: the next request on it is answered', async () => {
    const conn = new RawConn();
    await conn.ready();
    const body = Buffer.alloc(1_500_000, 'y');
    await conn.write(head('POST', '/auth/v1/signup', { 'Content-Type': 'application/json', 'Content-Length': body.length }));
    await conn.write(body);
    await conn.write(head('GET', '/auth/v1/health'));
    await until(() => conn.statuses().length === 2, 'two answers');
    expect(conn.statuses()).toEqual([413, 200]);
    expect(conn.closed).toBe(false);
    conn.socket.destroy();
  });

  it('a body far over the drain bound is still cut off, and the server keeps serving', async () => {
    const conn = new RawConn();
    await conn.ready();
    await conn.write(head('POST', '/auth/v1/signup', { 'Content-Type': 'application/json', 'Content-Length': 1_000_000_000 }));
    const chunk = Buffer.alloc(256 * 1024, 'z');
    let sent = 0;
    // The drain reads at most 8 MiB; a client still sending at 64 MiB has been cut off long before.
    while (sent < 64 * 1024 * 1024 && (await conn.write(chunk))) sent += chunk.length;
    await until(() => conn.closed, 'the server to close the connection', 10_000);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
    expect(conn.statuses()[0] ?? 413).toBe(413); // the answer may be lost in the reset; nothing else may come
    expect((await raw(lb, '/auth/v1/health')).status).toBe(200);
  });

  it('a keep-alive client whose body arrives after the early answer keeps its connection: the next request is answered', async () => {
    // A wrong apikey is answered (401) before the body is read; the body's second half comes 800 ms later, followed by
    // another request on the same connection.
    const conn = new RawConn();
    await conn.ready();
    const body = JSON.stringify({ email: 'slow@example.com', password: PASSWORD });
    await conn.write(head('POST', '/auth/v1/signup', { apikey: 'wrong', 'Content-Type': 'application/json', 'Content-Length': body.length }));
    await conn.write(body.slice(0, 10));
    await until(() => conn.statuses().length === 1, 'the early answer');
    await sleep(800);
    await conn.write(body.slice(10) + head('GET', '/auth/v1/health'));
    await until(() => conn.statuses().length === 2 || conn.closed, 'the second answer');
    expect(conn.statuses()).toEqual([401, 200]);
    expect(conn.closed).toBe(false);
    conn.socket.destroy();
  });
});

describe('a malformed request pipelined behind valid ones', () => {
  it('the valid requests before it are answered, then a JSON 400 with a code, then the connection closes', async () => {
    const conn = new RawConn();
    await conn.ready();
    await conn.write(head('GET', '/auth/v1/settings') + head('GET', '/mailbox/api/messages') + 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => conn.closed, 'the connection to close');
    expect(conn.statuses()).toEqual([200, 200, 400]);
    const last = conn.text().slice(conn.text().lastIndexOf('HTTP/1.1 400'));
    expect(last).toMatch(/x-sb-error-code: bad_request/);
    expect(JSON.parse(last.slice(last.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'bad_request' });
  });
});

describe('request heads and idle connections', () => {
  it('accepts a 40 kB request head (a large session cookie) and refuses one over 64 KiB with 431', async () => {
    const ok = await fetch(`${lb.url}/`, { headers: { cookie: `sb-127-auth-token.0=${'a'.repeat(40_000)}` } });
    expect(ok.status).toBe(200);
    const conn = new RawConn();
    conn.socket.write(`GET / HTTP/1.1\r\nHost: x\r\nCookie: ${'a'.repeat(70_000)}\r\n\r\n`);
    await until(() => conn.closed, 'the connection to end');
    expect(conn.received.toString('latin1')).toMatch(/^HTTP\/1\.1 431 /);
  });

  it('keeps an idle keep-alive connection open past 6 s, so a client reusing it is answered, not reset', async () => {
    const conn = new RawConn();
    conn.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => conn.received.includes('localbase'), 'the first answer');
    await sleep(6_000);
    expect(conn.closed).toBe(false);
    const before = conn.received.length;
    conn.socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    await until(() => conn.closed, 'the second answer');
    expect(conn.received.subarray(before).toString('latin1')).toMatch(/^HTTP\/1\.1 200 /);
  }, 15_000);
});
