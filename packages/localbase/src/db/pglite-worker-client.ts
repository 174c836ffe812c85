// PGlite in a worker thread, seen from the main thread as an ordinary Database.
//
// Why: PGlite 0.5 runs PostgreSQL as synchronous WASM, and its statement_timeout never fires (no timer signal
// inside WASM). On the main thread a runaway query would freeze every HTTP request and could not be stopped. In a
// worker it blocks only the worker; the main thread arms a deadline per statement and, when it passes, answers
// the statement with PostgreSQL's own error (SQLSTATE 57014), terminates the worker and reopens the database from
// the same data folder in a new one. Like a cancel on a server, the statement's transaction is lost; everything
// committed stays (PostgreSQL's crash recovery replays the WAL on reopen).
//
// One statement is in flight at a time (the mutex), so requests queue and no request's statements can run inside
// another request's transaction. One postMessage per statement each way.
import fs from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Database, Notifications, Queryable, QueryResult, Row } from './types.ts';
import { Mutex } from './mutex.ts';
import { makeThrowawayFolder } from '../throwaway-folders.ts';
import { pgliteWasmFile } from './pglite.ts';

/** Operations understood by pglite-worker.ts. */
const Op = { query: 0, exec: 1, beginQuery: 2, beginExec: 3, listen: 5, close: 9, crash: 99 } as const;

export interface OpenPGliteWorkerOptions {
  /** Folder of a file-backed database. Required unless `memory`. */
  dataDir?: string;
  /**
   * A throwaway database: a new folder under the OS temp dir, deleted on close (and, if the process dies, by the
   * next memory-mode start). Kept on disk rather than in WASM memory so that it survives a worker restart.
   */
  memory?: boolean;
  /** A data-dir snapshot (gzip tar) to initialise a new folder from instead of running initdb. */
  templateFile?: string;
  /** Statement timeout in ms applied to every statement (0 = none, the default); see also queryWithTimeout. */
  statementTimeoutMs?: number;
  /** Told when the worker is restarted (after a timeout or a crash). */
  onRestart?: (reason: string) => void;
}

/** An error shaped like PGlite's / node-postgres' DatabaseError (code = SQLSTATE, detail, hint, …). */
export class WorkerDatabaseError extends Error {
  code?: string;
  severity?: string;
  detail?: string;
  hint?: string;
  [field: string]: unknown;

  constructor(fields: Record<string, unknown>) {
    super(typeof fields.message === 'string' ? fields.message : 'database error');
    for (const [k, v] of Object.entries(fields)) if (k !== 'message' && k !== 'stack') (this as Record<string, unknown>)[k] = v;
    if (typeof fields.name === 'string') this.name = fields.name;
  }
}

/**
 * The error of a statement whose answer could not be received from the worker (its rows nest too deeply to be
 * deserialised here): SQLSTATE 54001, PostgreSQL's own code for a value nested beyond its stack.
 */
export function resultNotReceivedError(cause: Error): WorkerDatabaseError {
  return new WorkerDatabaseError({
    name: 'error',
    severity: 'ERROR',
    code: '54001',
    message: 'the statement’s result is too deeply nested to be received',
    detail: `The database worker's answer could not be read (${cause.message}).`,
  });
}

/** PostgreSQL's answer to a statement cancelled by statement_timeout. */
export function statementTimeoutError(ms: number): WorkerDatabaseError {
  return new WorkerDatabaseError({
    name: 'error',
    severity: 'ERROR',
    code: '57014',
    message: 'canceling statement due to statement timeout',
    detail: `The statement ran longer than ${ms} ms; it was cancelled and its transaction rolled back.`,
  });
}

/** The statement's connection was lost (the worker crashed or was restarted): 08006 connection_failure. */
function connectionLostError(reason: string): WorkerDatabaseError {
  return new WorkerDatabaseError({
    name: 'error',
    severity: 'FATAL',
    code: '08006',
    message: `the database stopped unexpectedly (${reason}); it was reopened and the statement's transaction rolled back`,
  });
}

interface Pending {
  id: number;
  resolve: (r: QueryResult<Row>) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

const WORKER_URL = new URL('./pglite-worker.ts', import.meta.url);
/**
 * The worker inherits Node's flags, except those that only make sense for the main entry point: `node
 * --input-type=module -e "…"` would otherwise make the worker refuse its file (ERR_INPUT_TYPE_NOT_ALLOWED).
 */
export const WORKER_EXEC_ARGV = process.execArgv.filter((a, i, all) => !a.startsWith('--input-type') && !(a === '--eval' || a === '-e' || all[i - 1] === '--eval' || all[i - 1] === '-e'));

export class PGliteWorkerDatabase implements Database, Notifications {
  readonly kind = 'pglite' as const;
  /** The data folder (for memory mode the throwaway one). */
  readonly dataDir: string;
  /** How many times the worker was restarted after a timeout or a crash. */
  restarts = 0;
  readonly #opts: OpenPGliteWorkerOptions;
  readonly #memory: boolean;
  readonly #mutex = new Mutex();
  readonly #defaultTimeoutMs: number;
  #worker: Worker | undefined;
  #ready: Promise<void>;
  /** Bumped on every restart: a transaction begun in an older generation is gone. */
  #gen = 0;
  #nextId = 1;
  #pending: Pending | undefined;
  #closed = false;
  #cleanupOnExit: (() => void) | undefined;
  /** LISTEN channels and their callbacks (a restarted worker listens again, and the callbacks run once). */
  readonly #listeners = new Map<string, Set<() => void>>();

  readonly #wasmModule: WebAssembly.Module;

  private constructor(opts: OpenPGliteWorkerOptions, dataDir: string, wasmModule: WebAssembly.Module) {
    this.#opts = opts;
    this.#wasmModule = wasmModule;
    this.#memory = opts.memory === true;
    this.dataDir = dataDir;
    this.#defaultTimeoutMs = Math.max(0, Math.floor(opts.statementTimeoutMs ?? 0));
    if (this.#memory) {
      this.#cleanupOnExit = () => fs.rmSync(dataDir, { recursive: true, force: true });
      process.once('exit', this.#cleanupOnExit);
    }
    this.#ready = this.#spawn(opts.templateFile);
  }

  /**
   * PGlite's WebAssembly compiled once for the process and handed to every worker. A worker that compiled its own
   * ran its first statements on V8's baseline code; after a statement timeout the reopened worker's first statement
   * (a REST request's, with cold catalog caches) could itself pass the deadline and restart the worker again.
   */
  static #compiled: Promise<WebAssembly.Module> | undefined;

  static async open(opts: OpenPGliteWorkerOptions): Promise<PGliteWorkerDatabase> {
    let dataDir = opts.dataDir;
    if (opts.memory) {
      dataDir = makeThrowawayFolder('pglite');
    }
    if (!dataDir) throw new Error('openPGliteWorker: dataDir or memory is required');
    PGliteWorkerDatabase.#compiled ??= fs.promises.readFile(pgliteWasmFile()).then((bytes) => WebAssembly.compile(bytes));
    const db = new PGliteWorkerDatabase(opts, dataDir, await PGliteWorkerDatabase.#compiled);
    try {
      await db.#ready;
    } catch (err) {
      await db.close().catch(() => {});
      throw err;
    }
    return db;
  }

  /** Starts a worker on the data folder and resolves once PGlite is open in it. */
  #spawn(templateFile?: string): Promise<void> {
    const listen = [...this.#listeners.keys()];
    const worker = new Worker(WORKER_URL, { workerData: { dataDir: this.dataDir, templateFile, listen, wasmModule: this.#wasmModule }, execArgv: WORKER_EXEC_ARGV });
    this.#worker = worker;
    let lastError: Error | undefined;
    return new Promise<void>((resolve, reject) => {
      let opened = false;
      worker.on('message', (msg: unknown[]) => {
        const id = msg[0] as number;
        if (id === 0) {
          if (msg[1] === 4) {
            for (const fn of this.#listeners.get(msg[2] as string) ?? []) fn();
            return;
          }
          if (msg[1] === 2) {
            opened = true;
            worker.unref();
            resolve();
            // A reopened database: notifications sent to the old worker may be lost, tell the listeners.
            if (listen.length > 0) for (const fns of this.#listeners.values()) for (const fn of fns) queueMicrotask(fn);
          } else {
            reject(new WorkerDatabaseError(msg[2] as Record<string, unknown>));
            void worker.terminate(); // PGlite did not open: this worker is of no use
          }
          return;
        }
        const p = this.#pending;
        if (!p || p.id !== id) return; // the answer to a statement that already timed out
        this.#settle(p);
        if (msg[1] === 0) p.resolve({ rows: msg[2] as Row[], affectedRows: msg[3] as number });
        else p.reject(new WorkerDatabaseError(msg[2] as Record<string, unknown>));
      });
      // An answer this thread could not rebuild (rows nested deeper than a structured clone can be deserialised on
      // this stack, e.g. a jsonb value thousands of levels deep): the message is lost, so the statement in flight
      // fails now — without this, a statement with no deadline waited forever and every request queued behind it.
      worker.on('messageerror', (err) => {
        const p = this.#pending;
        if (!p) return;
        this.#settle(p);
        p.reject(resultNotReceivedError(err));
      });
      worker.on('error', (err) => {
        lastError = err;
      });
      worker.on('exit', (code) => {
        if (!opened) {
          reject(lastError ?? new Error(`the database worker exited with code ${code} while opening`));
          return;
        }
        if (this.#worker !== worker) return; // terminated on purpose (timeout, close)
        // A crash: answer the statement in flight, then reopen the database in a new worker.
        const reason = lastError ? `worker error: ${lastError.message}` : `worker exited with code ${code}`;
        this.#worker = undefined;
        this.#gen += 1;
        this.restarts += 1;
        const p = this.#pending;
        if (p) {
          this.#settle(p);
          p.reject(connectionLostError(reason));
        }
        if (this.#closed) return;
        this.#opts.onRestart?.(reason);
        this.#ready = this.#spawn();
        this.#ready.catch(() => {}); // reported to the next statement
      });
    });
  }

  #settle(p: Pending): void {
    this.#pending = undefined;
    if (p.timer) clearTimeout(p.timer);
    this.#worker?.unref();
  }

  /** The deadline passed: answer 57014 now, stop the worker, reopen the database in a new one. */
  #timeout(p: Pending, ms: number): void {
    if (this.#pending !== p) return;
    this.#settle(p);
    p.reject(statementTimeoutError(ms));
    const old = this.#worker;
    this.#worker = undefined;
    this.#gen += 1;
    this.restarts += 1;
    this.#opts.onRestart?.(`statement timeout (${ms} ms)`);
    // terminate() stops the WASM mid-statement; the new worker opens the folder only after the old one is gone.
    this.#ready = (old ? old.terminate() : Promise.resolve(0)).then(() => (this.#closed ? undefined : this.#spawn()));
    this.#ready.catch(() => {});
  }

  async #send(op: number, sql: string, params: unknown[] | undefined, timeoutMs: number, gen?: number): Promise<QueryResult<Row>> {
    if (this.#closed) throw new Error('the database is closed');
    try {
      await this.#ready;
    } catch {
      // The last reopen failed: try once more, and report its error if it fails again.
      this.#ready = this.#spawn();
      await this.#ready;
    }
    if (gen !== undefined && gen !== this.#gen) throw connectionLostError('restarted during the transaction');
    const worker = this.#worker;
    if (!worker) throw connectionLostError('no database worker');
    return new Promise<QueryResult<Row>>((resolve, reject) => {
      const id = this.#nextId++;
      const p: Pending = { id, resolve, reject, timer: undefined };
      if (timeoutMs > 0) p.timer = setTimeout(() => this.#timeout(p, timeoutMs), timeoutMs);
      this.#pending = p;
      worker.ref();
      worker.postMessage([id, op, sql, params]);
    });
  }

  query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
    return this.queryWithTimeout<T>(sql, params, this.#defaultTimeoutMs);
  }

  /** query() with its own statement timeout in ms (0 = none). */
  queryWithTimeout<T extends Row = Row>(sql: string, params: unknown[] | undefined, timeoutMs: number): Promise<QueryResult<T>> {
    return this.#mutex.run(() => this.#send(Op.query, sql, params, timeoutMs)) as Promise<QueryResult<T>>;
  }

  exec(sql: string): Promise<void> {
    return this.#mutex.run(async () => {
      await this.#send(Op.exec, sql, undefined, this.#defaultTimeoutMs);
    });
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#mutex.run(async () => {
      // BEGIN travels with the first statement (one message fewer); a transaction without statements sends nothing.
      let gen: number | undefined;
      let done = false;
      const timeout = this.#defaultTimeoutMs;
      const run = async (query: boolean, sql: string, params?: unknown[]): Promise<QueryResult<Row>> => {
        if (done) throw new Error('the transaction is already closed');
        if (gen === undefined) {
          await this.#ready.catch(() => {});
          gen = this.#gen;
          return this.#send(query ? Op.beginQuery : Op.beginExec, sql, params, timeout, gen);
        }
        return this.#send(query ? Op.query : Op.exec, sql, params, timeout, gen);
      };
      const tx: Queryable = {
        query: <R extends Row = Row>(sql: string, params?: unknown[]) => run(true, sql, params) as Promise<QueryResult<R>>,
        exec: async (sql: string) => {
          await run(false, sql);
        },
      };
      let result: T;
      try {
        result = await fn(tx);
      } catch (err) {
        done = true;
        if (gen !== undefined && gen === this.#gen) await this.#send(Op.exec, 'ROLLBACK', undefined, 0, gen).catch(() => {});
        throw err;
      }
      done = true;
      if (gen !== undefined) await this.#send(Op.exec, 'COMMIT', undefined, timeout, gen);
      return result;
    });
  }

  async listen(channel: string, onNotify: () => void): Promise<() => Promise<void>> {
    let fns = this.#listeners.get(channel);
    if (!fns) {
      this.#listeners.set(channel, (fns = new Set()));
      await this.#mutex.run(() => this.#send(Op.listen, channel, undefined, 0));
    }
    fns.add(onNotify);
    // The channel stays LISTENed to (a no-op without callbacks) until the database closes.
    return async () => {
      fns.delete(onNotify);
    };
  }

  /**
   * Tests of the recovery: the worker dies with an uncaught error when the next statement arrives, as if PostgreSQL
   * crashed while running it. That statement is answered with 08006 and the database reopened.
   */
  crashWorkerForTesting(message = 'fatal error requested by a test'): void {
    this.#worker?.postMessage([0, Op.crash, message, undefined]);
  }

  /**
   * Closes PGlite cleanly (after the statements queued before) and ends the worker. If the queue does not drain
   * within 5 s (a long statement without a deadline, a transaction left open), the worker is terminated anyway.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    const graceful = this.#mutex.run(async () => {
      if (this.#closed) return;
      const open = await this.#ready.then(
        () => true,
        () => false,
      );
      // PGlite's close() checkpoints: the next open needs no recovery. Terminated below either way.
      if (open && this.#worker) await this.#send(Op.close, '', undefined, 5000).catch(() => {});
      this.#closed = true;
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([graceful, new Promise<void>((resolve) => (timer = setTimeout(resolve, 5000)))]);
    clearTimeout(timer);
    this.#closed = true;
    const p = this.#pending;
    if (p) {
      this.#settle(p);
      p.reject(connectionLostError('the database was closed'));
    }
    const w = this.#worker;
    this.#worker = undefined;
    await w?.terminate();
    if (this.#memory) {
      fs.rmSync(this.dataDir, { recursive: true, force: true });
      if (this.#cleanupOnExit) process.removeListener('exit', this.#cleanupOnExit);
    }
  }
}

export function openPGliteWorker(opts: OpenPGliteWorkerOptions): Promise<PGliteWorkerDatabase> {
  return PGliteWorkerDatabase.open(opts);
}
