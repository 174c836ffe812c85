// discardRest's bounds on a real Node HTTP server: a body that ends, one that is too big, one that stalls.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discardRest } from './connection.ts';

let server: http.Server;
let port: number;
const outcomes: boolean[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    // Answer at once, then read the rest as localbase does after an early answer (small bounds for the test).
    res.end('early');
    void discardRest(req, { maxBytes: 100_000, maxMs: 300 }).then((ok) => {
      outcomes.push(ok);
      if (!ok) req.socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
});

async function send(parts: (string | Buffer | number)[]): Promise<{ closedByServer: boolean }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise((r) => socket.once('connect', r));
  let closed = false;
  socket.on('close', () => (closed = true));
  socket.on('data', () => {}); // read, or the server's close goes unnoticed
  for (const part of parts) {
    if (typeof part === 'number') await new Promise((r) => setTimeout(r, part));
    else if (!socket.destroyed) socket.write(part);
  }
  await new Promise((r) => setTimeout(r, 100));
  const closedByServer = closed;
  socket.destroy();
  return { closedByServer };
}

describe('discardRest', () => {
  it('a body that arrives (even after the answer) is read to its end and the connection stays open', async () => {
    outcomes.length = 0;
    const r = await send(['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n01234', 100, '56789']);
    expect(outcomes).toEqual([true]);
    expect(r.closedByServer).toBe(false);
  });

  it('a body over the byte bound is cut off', async () => {
    outcomes.length = 0;
    const r = await send(['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n', Buffer.alloc(300_000, 'x')]);
    expect(outcomes).toEqual([false]);
    expect(r.closedByServer).toBe(true);
  });

  it('a body that stalls past the time bound is cut off', async () => {
    outcomes.length = 0;
    const r = await send(['POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123', 500]);
    expect(outcomes).toEqual([false]);
    expect(r.closedByServer).toBe(true);
  });
});
