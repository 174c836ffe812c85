/**
 * The MD5 of uploads (their ETag), computed off the request thread (decision 054). The upload's writer reports how
 * many bytes of its temporary file are written; a worker thread (hash-worker.ts) reads them back from the page cache
 * and hashes them meanwhile, so the request thread only receives and writes. No chunk is copied or transferred
 * between threads (an earlier trial that did so gained 10 % and held 41 MB more, decision 050): the worker reads
 * into one buffer of its own. The digest is the MD5 of the file as written — the same value as hashing the chunks.
 *
 * One worker for all uploads of a server, started with the first upload and kept alive (unref'd) only while a job
 * waits. If it cannot start, fails, or dies mid-upload, the uploads concerned hash their file on the request thread
 * once it is written (a streamed read: slower, never wrong); after MAX_FAILURES failures in a row every upload does.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { WORKER_EXEC_ARGV } from '../db/pglite-worker-client.ts';
import type { HashAnswer, HashRequest } from './hash-worker.ts';

const WORKER_URL = new URL('./hash-worker.ts', import.meta.url);
const MAX_FAILURES = 3;

export interface HashJob {
  /** The first `bytes` of the file are written (a running total). */
  written(bytes: number): void;
  /** The file will be `bytes` long: its MD5 (hex) once the worker has read that far. Call once. */
  end(bytes: number): Promise<string>;
  /** The upload is abandoned (before or after `end`): the worker lets the file go; `end`'s promise rejects. */
  abort(): void;
}

interface Waiter {
  resolve(digest: string): void;
  reject(err: Error): void;
}

export class UploadHasher {
  #worker: Worker | null = null;
  #next = 0;
  readonly #waiting = new Map<number, Waiter>();
  #failures = 0;
  #closed = false;
  #fallbacks = 0;

  begin(file: string): HashJob {
    const worker = this.#workerOrNull();
    if (!worker) {
      this.#fallbacks++;
      return fileJob(file);
    }
    const id = ++this.#next;
    const digest = new Promise<string>((resolve, reject) => this.#waiting.set(id, { resolve, reject }));
    digest.catch(() => {}); // a failure is handled in end(); an aborted job's promise is never awaited
    if (this.#waiting.size === 1) worker.ref();
    const send = (message: HashRequest) => worker.postMessage(message);
    send({ id, kind: 'start', file });
    const progress = new Progress();
    return {
      written: (bytes) => {
        progress.written(bytes);
        if (this.#waiting.has(id)) send({ id, kind: 'written', bytes });
      },
      end: async (bytes) => {
        if (this.#waiting.has(id)) send({ id, kind: 'end', bytes });
        try {
          return await digest;
        } catch (err) {
          if (progress.aborted) throw err;
          // the worker failed this upload: hash the file once it is written
          await progress.reached(bytes);
          this.#fallbacks++;
          return md5OfFile(file);
        }
      },
      abort: () => {
        if (progress.aborted) return;
        progress.abort();
        if (!this.#waiting.has(id)) return;
        send({ id, kind: 'abort' });
        this.#settle(id)?.reject(new Error('the upload was abandoned'));
      },
    };
  }

  /** Stops the worker (the server stops); later uploads hash on the request thread. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    this.#worker = null;
    await worker?.terminate();
  }

  #settle(id: number): Waiter | undefined {
    const waiter = this.#waiting.get(id);
    this.#waiting.delete(id);
    if (this.#waiting.size === 0) this.#worker?.unref();
    return waiter;
  }

  #workerOrNull(): Worker | null {
    if (this.#closed || this.#failures >= MAX_FAILURES) return null;
    if (this.#worker) return this.#worker;
    let worker: Worker;
    try {
      worker = new Worker(WORKER_URL, { execArgv: WORKER_EXEC_ARGV });
    } catch {
      this.#failures++;
      return null;
    }
    worker.unref();
    worker.on('message', (answer: HashAnswer) => {
      const waiter = this.#settle(answer.id);
      if (!waiter) return;
      if ('digest' in answer) {
        this.#failures = 0;
        waiter.resolve(answer.digest);
      } else waiter.reject(new Error(answer.error));
    });
    const lost = (err: Error) => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      if (!this.#closed) this.#failures++;
      const waiters = [...this.#waiting.values()];
      this.#waiting.clear();
      for (const waiter of waiters) waiter.reject(err);
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the hash worker exited (${code})`)));
    this.#worker = worker;
    return worker;
  }

  /** For tests: the worker's thread id, or null when none runs. */
  get workerThreadId(): number | null {
    return this.#worker?.threadId ?? null;
  }

  /** For tests: uploads hashed on the calling thread (no worker, or it failed them). */
  get fallbacks(): number {
    return this.#fallbacks;
  }

  /** For tests: jobs waiting for their digest. */
  get waiting(): number {
    return this.#waiting.size;
  }

  /** For tests: ends the worker as a crash would (the jobs in flight fall back to hashing their file). */
  async crashForTest(): Promise<void> {
    await this.#worker?.terminate();
  }
}

/** A job without the worker: the file is hashed on this thread once it is written. */
function fileJob(file: string): HashJob {
  const progress = new Progress();
  return {
    written: (bytes) => progress.written(bytes),
    end: async (bytes) => {
      await progress.reached(bytes);
      return md5OfFile(file);
    },
    abort: () => progress.abort(),
  };
}

/** How much of an upload's file is written: `reached(n)` waits for n bytes (rejects if the upload is abandoned). */
class Progress {
  #bytes = 0;
  aborted = false;
  #waiters: { bytes: number; resolve: () => void; reject: (err: Error) => void }[] = [];

  written(bytes: number): void {
    this.#bytes = Math.max(this.#bytes, bytes);
    this.#waiters = this.#waiters.filter((w) => (w.bytes <= this.#bytes ? (w.resolve(), false) : true));
  }

  reached(bytes: number): Promise<void> {
    if (this.aborted) return Promise.reject(new Error('the upload was abandoned'));
    if (bytes <= this.#bytes) return Promise.resolve();
    return new Promise((resolve, reject) => this.#waiters.push({ bytes, resolve, reject }));
  }

  abort(): void {
    this.aborted = true;
    for (const w of this.#waiters.splice(0)) w.reject(new Error('the upload was abandoned'));
  }
}

/** The MD5 (hex) of a file, read in 1 MiB chunks. */
export async function md5OfFile(file: string): Promise<string> {
  const md5 = createHash('md5');
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) md5.update(chunk as Buffer);
  return md5.digest('hex');
}
