// sendFile on a real Node HTTP server: whole files and ranges byte for byte (its two buffers are reused, so a slow
// reader must still get every byte as stored), an empty file, a client that goes away, a file cut short.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileBodyOf, fileResponse, sendFile, type FileBody } from './node-body.ts';

const dir = mkdtempSync(join(tmpdir(), 'node-body-'));
const bigPath = join(dir, 'big.bin');
const big = randomBytes(24 * 1024 * 1024 + 12_345); // more than the socket buffers hold
writeFileSync(bigPath, big);
const emptyPath = join(dir, 'empty.bin');
writeFileSync(emptyPath, '');

let server: http.Server;
let port: number;
/** What the server does for the next request, and how each sendFile ended. */
let next: { file: FileBody; beforeSend?: () => void } = { file: { path: bigPath, start: 0, end: big.length - 1 } };
const outcomes: ('sent' | Error)[] = [];

beforeAll(async () => {
  server = http.createServer((_req, res) => {
    const { file, beforeSend } = next;
    res.writeHead(200, { 'content-length': String(Math.max(0, file.end - file.start + 1)) });
    beforeSend?.();
    sendFile(file, res).then(
      () => outcomes.push('sent'),
      (err: unknown) => outcomes.push(err as Error),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => {
  server.closeAllConnections();
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

/** A raw request whose reader stops for `pauseMs` after the first bytes (the server's writes then wait). */
function download(pauseMs = 0): Promise<{ body: Buffer; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let paused = false;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (pauseMs > 0 && !paused) {
        paused = true;
        socket.pause();
        setTimeout(() => socket.resume(), pauseMs);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const headEnd = all.indexOf('\r\n\r\n');
      resolve({ body: all.subarray(headEnd + 4), closed: true });
    });
    socket.write(`GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  });
}

const settled = async () => {
  for (let i = 0; i < 100 && outcomes.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  return outcomes.splice(0);
};

describe('sendFile', () => {
  it('sends a whole file byte for byte to a reader that stops for a while', async () => {
    next = { file: { path: bigPath, start: 0, end: big.length - 1 } };
    const { body } = await download(300);
    expect(body.length).toBe(big.length);
    expect(md5(body)).toBe(md5(big));
    expect(await settled()).toEqual(['sent']);
  });

  it('sends a range across chunk boundaries', async () => {
    const start = 1024 * 1024 - 7;
    const end = 2 * 1024 * 1024 + 99;
    next = { file: { path: bigPath, start, end } };
    const { body } = await download(100);
    expect(md5(body)).toBe(md5(big.subarray(start, end + 1)));
    expect(await settled()).toEqual(['sent']);
  });

  it('sends an empty file without opening it', async () => {
    next = { file: { path: join(dir, 'never-made.bin'), start: 0, end: -1 } };
    const { body } = await download();
    expect(body.length).toBe(0);
    expect(await settled()).toEqual(['sent']);
  });

  it('stops quietly when the client goes away mid-file', async () => {
    next = { file: { path: bigPath, start: 0, end: big.length - 1 } };
    await new Promise<void>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET / HTTP/1.1\r\nHost: x\r\n\r\n`));
      socket.once('data', () => {
        socket.destroy();
        resolve();
      });
    });
    expect(await settled()).toEqual(['sent']);
  });

  it('closes the connection when the file turns out shorter than its range (a short body, never a wrong one)', async () => {
    const cutPath = join(dir, 'cut.bin');
    writeFileSync(cutPath, big);
    next = { file: { path: cutPath, start: 0, end: big.length - 1 }, beforeSend: () => truncateSync(cutPath, 2 * 1024 * 1024) };
    const { body } = await download();
    expect(body.length).toBe(2 * 1024 * 1024);
    expect(md5(body)).toBe(md5(big.subarray(0, 2 * 1024 * 1024)));
    const [outcome] = await settled();
    expect(outcome).toBeInstanceOf(Error);
  });
});

describe('fileResponse', () => {
  it('reads as an ordinary Response where no Node server sends it (the file opened only then)', async () => {
    const response = fileResponse({ path: bigPath, start: 10, end: 2 * 1024 * 1024 }, { status: 206 });
    expect(fileBodyOf(response)).toEqual({ path: bigPath, start: 10, end: 2 * 1024 * 1024 });
    const body = Buffer.from(await response.arrayBuffer());
    expect(md5(body)).toBe(md5(big.subarray(10, 2 * 1024 * 1024 + 1)));
    expect(fileBodyOf(response)).toBeUndefined();
  });

  it('is empty for an empty file', async () => {
    const response = fileResponse({ path: emptyPath, start: 0, end: -1 }, { status: 200 });
    expect((await response.arrayBuffer()).byteLength).toBe(0);
  });
});
