/**
 * The upload hasher's thread (decision 054, see hasher.ts): computes the MD5 of files while they are being written,
 * by reading back from the page cache what the writer reports as written. Messages per job: `start` (open the file),
 * `written` (bytes on disk so far, a running total), `end` (the size the file will have: the digest is sent once that
 * much is hashed; it may come before the last `written`) or `abort`. Reads never go past what the writer reported,
 * so the bytes hashed are the bytes written.
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import { parentPort } from 'node:worker_threads';

export type HashRequest =
  | { id: number; kind: 'start'; file: string }
  | { id: number; kind: 'written' | 'end'; bytes: number }
  | { id: number; kind: 'abort' };

export type HashAnswer = { id: number; digest: string } | { id: number; error: string };

interface Job {
  fd: number;
  md5: Hash;
  hashed: number;
  written: number;
  /** The final size, once `end` came. */
  size: number | null;
}

const READ_BYTES = 1024 * 1024;
const buffer = Buffer.allocUnsafe(READ_BYTES);
const jobs = new Map<number, Job>();
const port = parentPort;
if (!port) throw new Error('hash-worker.ts runs as a worker thread');

function close(id: number, job: Job): void {
  jobs.delete(id);
  try {
    fs.closeSync(job.fd);
  } catch {
    // already closed
  }
}

function pump(id: number, job: Job): void {
  try {
    while (job.hashed < job.written) {
      const n = fs.readSync(job.fd, buffer, 0, Math.min(READ_BYTES, job.written - job.hashed), job.hashed);
      if (n === 0) throw new Error(`the file ends at ${job.hashed} bytes, ${job.written} were written`);
      job.md5.update(buffer.subarray(0, n));
      job.hashed += n;
    }
    if (job.size !== null && job.hashed >= job.size) {
      if (job.hashed !== job.size) throw new Error(`${job.hashed} bytes were written, ${job.size} were announced`);
      close(id, job);
      port!.postMessage({ id, digest: job.md5.digest('hex') } satisfies HashAnswer);
    }
  } catch (err) {
    close(id, job);
    port!.postMessage({ id, error: err instanceof Error ? err.message : String(err) } satisfies HashAnswer);
  }
}

port.on('message', (message: HashRequest) => {
  if (message.kind === 'start') {
    try {
      jobs.set(message.id, { fd: fs.openSync(message.file, 'r'), md5: createHash('md5'), hashed: 0, written: 0, size: null });
    } catch (err) {
      port.postMessage({ id: message.id, error: err instanceof Error ? err.message : String(err) } satisfies HashAnswer);
    }
    return;
  }
  const job = jobs.get(message.id);
  if (!job) return; // failed at start (answered then), or aborted
  if (message.kind === 'abort') {
    close(message.id, job);
    return;
  }
  if (message.kind === 'end') job.size = message.bytes;
  else job.written = Math.max(job.written, message.bytes);
  pump(message.id, job);
});
