// The uploads' MD5 off the request thread (decision 054): the worker's digest is the MD5 of what was written, in
// every order the writer reports it, with several uploads at once; a worker that dies mid-upload, an abandoned upload
// and a stopped hasher never give a wrong ETag or leave a job behind.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { md5OfFile, UploadHasher, type HashJob } from './hasher.ts';

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hasher-test-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
let n = 0;

/**
 * Writes `bytes` to a new file in pieces as an upload does (append, then report the running total), telling `job`;
 * `endAt` says when `end` is sent: before the first piece, before the last one, or after all of them.
 */
async function upload(hasher: UploadHasher, bytes: Buffer, pieces: number, endAt: 'first' | 'last' | 'after', during?: (i: number) => Promise<void>) {
  const file = path.join(dir, `f${++n}`);
  const fh = await fs.open(file, 'wx');
  const job: HashJob = hasher.begin(file);
  const size = Math.ceil(bytes.length / pieces);
  let written = 0;
  let digest: Promise<string> | undefined;
  for (let i = 0; i < pieces; i++) {
    if ((endAt === 'first' && i === 0) || (endAt === 'last' && i === pieces - 1)) digest = job.end(bytes.length);
    const piece = bytes.subarray(i * size, (i + 1) * size);
    await fh.write(piece, 0, piece.length, written);
    written += piece.length;
    job.written(written);
    await during?.(i);
  }
  digest ??= job.end(bytes.length);
  await fh.close();
  return { digest: await digest, file };
}

describe('the upload hasher', () => {
  it('gives the MD5 of what was written, whenever `end` comes, for empty, small and multi-MiB files', async () => {
    const hasher = new UploadHasher();
    try {
      for (const [length, pieces] of [
        [0, 1],
        [1, 1],
        [65_537, 3],
        [5 * 1024 * 1024 + 3, 7],
      ] as const) {
        const bytes = randomBytes(length);
        for (const endAt of ['first', 'last', 'after'] as const) {
          const { digest } = await upload(hasher, bytes, pieces, endAt);
          expect(digest, `${length} bytes, end ${endAt}`).toBe(md5(bytes));
        }
      }
      expect(hasher.fallbacks).toBe(0); // the worker did all the hashing
      expect(hasher.waiting).toBe(0);
    } finally {
      await hasher.close();
    }
  });

  it('hashes several uploads at once on one worker', async () => {
    const hasher = new UploadHasher();
    try {
      const bodies = Array.from({ length: 8 }, (_, i) => randomBytes(200_000 * i + 17));
      const digests = await Promise.all(bodies.map((bytes, i) => upload(hasher, bytes, 1 + (i % 4), i % 2 ? 'first' : 'after')));
      expect(digests.map((d) => d.digest)).toEqual(bodies.map(md5));
      expect(hasher.fallbacks).toBe(0);
      expect(hasher.waiting).toBe(0);
    } finally {
      await hasher.close();
    }
  });

  it('still gives the right MD5 when the worker dies mid-upload (the file is hashed once written), then starts a new one', async () => {
    const hasher = new UploadHasher();
    try {
      const bytes = randomBytes(3 * 1024 * 1024);
      await upload(hasher, randomBytes(10), 1, 'after'); // the worker runs
      const first = hasher.workerThreadId;
      expect(first).not.toBeNull();
      const { digest } = await upload(hasher, bytes, 6, 'first', async (i) => {
        if (i === 2) await hasher.crashForTest();
      });
      expect(digest).toBe(md5(bytes));
      expect(hasher.fallbacks).toBe(1); // that upload, hashed from its file
      expect(hasher.waiting).toBe(0);
      const again = randomBytes(100_000);
      expect((await upload(hasher, again, 2, 'last')).digest).toBe(md5(again));
      expect(hasher.workerThreadId).not.toBeNull();
      expect(hasher.workerThreadId).not.toBe(first);
      expect(hasher.fallbacks).toBe(1);
    } finally {
      await hasher.close();
    }
  });

  it('after three failures in a row, hashes every file on the calling thread instead (always right)', async () => {
    const hasher = new UploadHasher();
    try {
      for (let i = 0; i < 3; i++) {
        const bytes = randomBytes(50_000);
        expect((await upload(hasher, bytes, 2, 'after', () => hasher.crashForTest())).digest).toBe(md5(bytes));
      }
      const bytes = randomBytes(70_000);
      expect((await upload(hasher, bytes, 3, 'first')).digest).toBe(md5(bytes));
      expect(hasher.workerThreadId).toBeNull();
      expect(hasher.fallbacks).toBe(4);
    } finally {
      await hasher.close();
    }
  });

  it('lets an abandoned upload go, before or after `end` (its digest is refused, nothing waits)', async () => {
    const hasher = new UploadHasher();
    try {
      const early = hasher.begin(path.join(dir, 'missing-early'));
      early.written(10);
      early.abort();
      const late = path.join(dir, `f${++n}`);
      await fs.writeFile(late, randomBytes(1000));
      const job = hasher.begin(late);
      job.written(500);
      const digest = job.end(1000); // the last 500 bytes never get reported
      job.abort();
      await expect(digest).rejects.toThrow(/abandoned/);
      expect(hasher.waiting).toBe(0);
      // the worker goes on with the next upload
      const bytes = randomBytes(4096);
      expect((await upload(hasher, bytes, 2, 'after')).digest).toBe(md5(bytes));
    } finally {
      await hasher.close();
    }
  });

  it('once closed (the server stops), hashes on the calling thread', async () => {
    const hasher = new UploadHasher();
    await upload(hasher, randomBytes(10), 1, 'after');
    await hasher.close();
    expect(hasher.workerThreadId).toBeNull();
    const bytes = randomBytes(123_456);
    const { digest, file } = await upload(hasher, bytes, 3, 'first');
    expect(digest).toBe(md5(bytes));
    expect(await md5OfFile(file)).toBe(md5(bytes));
  });
});
