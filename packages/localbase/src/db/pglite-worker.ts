// The worker thread that owns PGlite (started by pglite-worker-client.ts). PGlite runs PostgreSQL as synchronous
// WASM: on the main thread a long statement would stop every HTTP request and could never be cancelled. Here it
// only blocks this thread; the main thread keeps answering and, past a statement's deadline, terminates this worker
// and starts a new one on the same data folder.
//
// Protocol (one message per statement each way, arrays to keep structured cloning small):
//   in:  [id, op, sql, params]   op: see Op in pglite-worker-client.ts (99: the next statement crashes the thread)
//   out: [id, 0, rows, affectedRows] | [id, 1, error fields] | [0, 2] ready | [0, 3, error fields] failed to open
//        | [0, 4, channel] a NOTIFY on a channel LISTENed to (op 5, or workerData.listen when reopened)
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { PGlite } from '@electric-sql/pglite';
import { createPGliteInstance } from './pglite.ts';

interface WorkerInit {
  dataDir?: string;
  /** A data-dir snapshot (gzip tar) to start a new data folder from. */
  templateFile?: string;
  /** Channels to LISTEN to once open (a worker restarted after a timeout keeps its predecessor's). */
  listen?: string[];
  /** PGlite's WebAssembly, compiled once by the main thread (a new worker neither compiles nor tiers it up again). */
  wasmModule?: WebAssembly.Module;
}

const port = parentPort;
if (!port) throw new Error('pglite-worker.ts must run in a worker thread');
const init = workerData as WorkerInit;

/** The fields of an error that survive postMessage (PGlite's DatabaseError: code, detail, hint, position, …). */
function errorFields(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const out: Record<string, unknown> = { message: err.message, name: err.name };
  for (const [k, v] of Object.entries(err)) {
    if (v === undefined || k === 'length') continue;
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}

const listening = new Set<string>();

async function listen(db: PGlite, channel: string): Promise<void> {
  if (listening.has(channel)) return;
  listening.add(channel);
  await db.listen(channel, () => port?.postMessage([0, 4, channel]));
}

async function open(): Promise<PGlite> {
  const loadDataDir = init.templateFile ? new Blob([fs.readFileSync(init.templateFile)]) : undefined;
  const db = await createPGliteInstance({ dataDir: init.dataDir, loadDataDir, wasmModule: init.wasmModule });
  for (const channel of init.listen ?? []) await listen(db, channel);
  return db;
}

type Message = [id: number, op: number, sql: string, params: unknown[] | undefined];

async function handle(db: PGlite, [id, op, sql, params]: Message): Promise<void> {
  try {
    if (op === 9) {
      await db.close();
      port?.postMessage([id, 0, [], 0]);
      return;
    }
    if (op === 5) {
      await listen(db, sql);
      port?.postMessage([id, 0, [], 0]);
      return;
    }
    if (op === 2 || op === 3) await db.exec('BEGIN');
    if (op === 1 || op === 3) {
      await db.exec(sql);
      port?.postMessage([id, 0, [], 0]);
    } else {
      const r = await db.query(sql, params);
      port?.postMessage([id, 0, r.rows, r.affectedRows ?? 0]);
    }
  } catch (err) {
    port?.postMessage([id, 1, errorFields(err)]);
    // PostgreSQL inside WASM aborted (not an SQL error): this instance is unusable, end the thread so the main
    // thread reopens the database.
    if (err instanceof WebAssembly.RuntimeError) setImmediate(() => process.exit(1));
  }
}

const opened = open();
// Statements run one after another (the main thread sends one at a time anyway), after the database is open.
let queue: Promise<unknown> = opened;
/** Set by op 99 (tests of the main thread's recovery): the next statement dies with this uncaught error. */
let crashWith: string | undefined;

port.on('message', (msg: Message) => {
  if (msg[1] === 99) {
    crashWith = msg[2] || 'pglite worker: fatal error requested';
    return;
  }
  if (crashWith !== undefined) throw new Error(crashWith); // uncaught: ends this thread, the statement unanswered
  queue = queue.then((db) => handle(db as PGlite, msg).then(() => db));
});

opened.then(
  () => port.postMessage([0, 2]),
  (err: unknown) => port.postMessage([0, 3, errorFields(err)]),
);
