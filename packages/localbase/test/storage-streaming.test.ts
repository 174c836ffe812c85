// Large uploads and downloads through /storage/v1 (decision 045): bodies arriving in irregular pieces and pauses are
// stored byte for byte (the writer queues chunks and writes them in batches while the body keeps flowing, with
// background fdatasyncs), the ETag stays the quoted MD5 of the bytes, ranges across the download's 1 MiB read chunks
// are exact, and a body that crosses the limit while batches are in flight is refused with nothing left on disk.
// The MD5 is computed by a worker thread from what is written (decision 054); its own tests are src/storage/hasher.test.ts.
// Runs on PGlite (memory) and on PostgreSQL (LOCALBASE_TEST_DATABASE_URL).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { serviceClient, sleep, startTestServer, type Localbase } from './helpers.ts';

const MiB = 1024 * 1024;
let lb: Localbase;
let admin: SupabaseClient;
const sfx = randomBytes(4).toString('hex');
const B = `stream-${sfx}`;
const SMALL = `stream-small-${sfx}`;

beforeAll(async () => {
  lb = await startTestServer();
  admin = serviceClient(lb);
  expect((await admin.storage.createBucket(B)).error).toBeNull();
  expect((await admin.storage.createBucket(SMALL, { public: false, fileSizeLimit: 6 * MiB })).error).toBeNull();
});

afterAll(async () => {
  await lb?.stop();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * Sends `pieces` one after another as the body of a POST (chunked: no Content-Length, so the server learns the size
 * only while reading), pausing `pauseMs` after every few pieces; resolves with the whole answer.
 */
function send(urlPath: string, pieces: Buffer[], headers: Record<string, string>, pauseMs = 2): Promise<Answer> {
  const url = new URL(lb.url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, method: 'POST', path: urlPath, headers: { authorization: `Bearer ${lb.serviceRoleKey}`, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      },
    );
    // a refused body: the server answers before reading it all, the rest of the writes may fail — the answer counts
    req.on('error', (err) => reject(err));
    void (async () => {
      for (let i = 0; i < pieces.length; i++) {
        if (req.destroyed) return;
        if (!req.write(pieces[i]!)) await new Promise((r) => req.once('drain', r));
        if (i % 5 === 4) await sleep(pauseMs);
      }
      req.end();
    })();
  });
}

function get(urlPath: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(lb.url);
  return new Promise((resolve, reject) => {
    http
      .get({ host: url.hostname, port: url.port, path: urlPath, headers: { authorization: `Bearer ${lb.serviceRoleKey}`, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

/** `bytes` cut into pieces of irregular sizes: 1 byte, a few KiB, several MiB, odd sizes across MiB boundaries. */
function irregularPieces(bytes: Buffer): Buffer[] {
  const sizes = [1, 7 * 1024, 3 * MiB + 5, 13, 64 * 1024 - 1, MiB + 17, 300_000, 5 * MiB - 3, 2];
  const out: Buffer[] = [];
  let off = 0;
  for (let i = 0; off < bytes.length; i++) {
    const n = Math.min(sizes[i % sizes.length]!, bytes.length - off);
    out.push(bytes.subarray(off, off + n));
    off += n;
  }
  return out;
}

const md5 = (b: Buffer): string => `"${createHash('md5').update(b).digest('hex')}"`;

async function tmpFiles(): Promise<string[]> {
  return fs.readdir(path.join(lb.storageDir, 'tmp'));
}

describe('large objects, streamed both ways', () => {
  it('a 24 MiB body in irregular pieces and pauses is stored byte for byte; ETag = MD5; ranges across 1 MiB chunks are exact', async () => {
    const bytes = randomBytes(24 * MiB + 12345);
    const key = 'big/irregular.bin';
    const up = await send(`/storage/v1/object/${B}/${key}`, irregularPieces(bytes), { 'content-type': 'application/octet-stream' });
    expect(up.status, up.body.toString()).toBe(200);
    expect(JSON.parse(up.body.toString())).toMatchObject({ Key: `${B}/${key}` });

    const info = await admin.storage.from(B).info(key);
    expect(info.error).toBeNull();
    expect(info.data).toMatchObject({ size: bytes.length, etag: md5(bytes) });

    const down = await get(`/storage/v1/object/authenticated/${B}/${key}`);
    expect(down.status).toBe(200);
    expect(down.headers.etag).toBe(md5(bytes));
    expect(down.headers['content-length']).toBe(String(bytes.length));
    expect(down.body.length).toBe(bytes.length);
    expect(down.body.equals(bytes)).toBe(true);

    // a range that starts just before the first 1 MiB read chunk ends and spans three of them
    const start = MiB - 6;
    const end = 3 * MiB + 9;
    const part = await get(`/storage/v1/object/authenticated/${B}/${key}`, { range: `bytes=${start}-${end}` });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes ${start}-${end}/${bytes.length}`);
    expect(part.body.equals(bytes.subarray(start, end + 1))).toBe(true);
    // the last bytes
    const tail = await get(`/storage/v1/object/authenticated/${B}/${key}`, { range: 'bytes=-100' });
    expect(tail.status).toBe(206);
    expect(tail.body.equals(bytes.subarray(bytes.length - 100))).toBe(true);
    expect(await tmpFiles()).toEqual([]);
  });

  it('uploads sent at once (empty, one byte, across write batches) each get the MD5 of their own bytes as ETag (decision 054)', async () => {
    const bodies = [0, 1, 65_537, 4 * MiB + 1, 9 * MiB + 333, 2 * MiB].map((length) => randomBytes(length));
    const answers = await Promise.all(
      bodies.map((bytes, i) => send(`/storage/v1/object/${B}/many/${i}.bin`, bytes.length ? irregularPieces(bytes) : [bytes], { 'content-type': 'application/octet-stream' })),
    );
    expect(answers.map((a) => a.status)).toEqual(bodies.map(() => 200));
    for (const [i, bytes] of bodies.entries()) {
      expect((await admin.storage.from(B).info(`many/${i}.bin`)).data, `upload ${i}`).toMatchObject({ size: bytes.length, etag: md5(bytes) });
    }
    expect(await tmpFiles()).toEqual([]);
  });

  it('a multipart upload (what storage-js sends for a Blob/File) of 9 MiB is stored byte for byte', async () => {
    const bytes = randomBytes(9 * MiB + 1);
    const key = 'big/multipart.bin';
    const { error } = await admin.storage.from(B).upload(key, new Blob([bytes], { type: 'application/octet-stream' }));
    expect(error).toBeNull();
    const { data, error: dlError } = await admin.storage.from(B).download(key);
    expect(dlError).toBeNull();
    const got = Buffer.from(await data!.arrayBuffer());
    expect(got.length).toBe(bytes.length);
    expect(got.equals(bytes)).toBe(true);
    expect((await admin.storage.from(B).info(key)).data).toMatchObject({ etag: md5(bytes), size: bytes.length });
  });

  it('a body that crosses the bucket limit while earlier batches are being written is refused (413 EntityTooLarge); nothing is stored or left behind', async () => {
    const bytes = randomBytes(10 * MiB);
    const key = 'big/too-large.bin';
    const up = await send(`/storage/v1/object/${SMALL}/${key}`, irregularPieces(bytes), { 'content-type': 'application/octet-stream' }).catch(
      (err: unknown) => ({ status: -1, headers: {}, body: Buffer.from(String(err)) }) as Answer,
    );
    // HTTP 400 with the semantic code in the body, as the storage server's error handler answers every 4xx
    expect(up.status, up.body.toString()).toBe(400);
    expect(JSON.parse(up.body.toString())).toMatchObject({ statusCode: '413', error: 'Payload too large' });
    expect((await admin.storage.from(SMALL).exists(key)).data).toBe(false);
    // the writer's in-flight batch and background fdatasync are waited for, then the temporary file deleted
    for (let i = 0; i < 50 && (await tmpFiles()).length > 0; i++) await sleep(20);
    expect(await tmpFiles()).toEqual([]);

    // and the same bucket still takes an object under its limit, sent the same way
    const ok = randomBytes(5 * MiB);
    const again = await send(`/storage/v1/object/${SMALL}/big/fits.bin`, irregularPieces(ok), { 'content-type': 'application/octet-stream' });
    expect(again.status, again.body.toString()).toBe(200);
    const down = await get(`/storage/v1/object/authenticated/${SMALL}/big/fits.bin`);
    expect(down.body.equals(ok)).toBe(true);
  });
});

/**
 * Sends a whole upload on a raw connection, then closes the connection at once (what a browser does when the user
 * presses Cancel after the last byte left but before the answer came). Resolves when the server has closed it too.
 */
function sendThenLeave(method: string, urlPath: string, body: Buffer, headers: Record<string, string>): Promise<void> {
  const url = new URL(lb.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname, () => {
      const head = [`${method} ${urlPath} HTTP/1.1`, `host: ${url.host}`, `content-length: ${body.length}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      socket.end(body);
    });
    socket.on('error', reject);
    socket.resume();
    socket.on('close', () => resolve());
  });
}

describe('an upload whose client left before the answer (decision 051)', () => {
  it('is not kept, by a signed upload URL or a plain upload; the same upload on a connection that stays is', async () => {
    const bytes = randomBytes(2 * MiB);
    const signed = await admin.storage.from(B).createSignedUploadUrl('left/signed.bin');
    expect(signed.error).toBeNull();
    const signedPath = new URL(signed.data!.signedUrl).pathname + new URL(signed.data!.signedUrl).search;
    await sendThenLeave('PUT', signedPath, bytes, { 'content-type': 'application/octet-stream' });
    await sendThenLeave('POST', `/storage/v1/object/${B}/left/plain.bin`, bytes, {
      authorization: `Bearer ${lb.serviceRoleKey}`,
      'content-type': 'application/octet-stream',
    });
    // The server may still be finishing after the connection closed: give it time to store what it would store.
    await sleep(300);
    const listed = await admin.storage.from(B).list('left');
    expect(listed.error).toBeNull();
    expect(listed.data!.map((f) => f.name)).toEqual([]);
    expect(await tmpFiles()).toEqual([]);

    // The control: the same bytes through the same signed URL, the client waiting for the answer.
    const kept = await admin.storage.from(B).uploadToSignedUrl('left/signed.bin', signed.data!.token, bytes, { contentType: 'application/octet-stream' });
    expect(kept.error).toBeNull();
    const info = await admin.storage.from(B).info('left/signed.bin');
    expect(info.data).toMatchObject({ size: bytes.length, etag: md5(bytes) });
  });
});
