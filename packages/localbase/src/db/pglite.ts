import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { PGlite } from '@electric-sql/pglite';
import type { Transaction } from '@electric-sql/pglite';
import { pgcrypto } from '@electric-sql/pglite/contrib/pgcrypto';
import { citext } from '@electric-sql/pglite/contrib/citext';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { uuid_ossp } from '@electric-sql/pglite/contrib/uuid_ossp';
import type { Database, Notifications, Queryable, QueryResult, Row } from './types.ts';
import { Mutex } from './mutex.ts';

export const SHARED_BUFFERS = '32MB';

const extensions = { pgcrypto, citext, pg_trgm, uuid_ossp };

function readPgliteVersion(): string {
  // The package does not export ./package.json: find it from the resolved entry point.
  let dir = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (let i = 0; i < 5; i++) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === '@electric-sql/pglite' && pkg.version) return pkg.version;
    }
    dir = path.dirname(dir);
  }
  return 'unknown';
}
export const PGLITE_VERSION: string = readPgliteVersion();

function wrapTx(tx: Transaction): Queryable {
  return {
    async query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      const r = await tx.query<T>(sql, params);
      return { rows: r.rows, affectedRows: r.affectedRows ?? 0 };
    },
    async exec(sql: string): Promise<void> {
      await tx.exec(sql);
    },
  };
}

class PGliteDatabase implements Database, Notifications {
  readonly kind = 'pglite' as const;
  readonly pg: PGlite;
  readonly #mutex = new Mutex();
  #closed = false;

  constructor(pg: PGlite) {
    this.pg = pg;
  }

  query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
    return this.#mutex.run(async () => {
      const r = await this.pg.query<T>(sql, params);
      return { rows: r.rows, affectedRows: r.affectedRows ?? 0 };
    });
  }

  exec(sql: string): Promise<void> {
    return this.#mutex.run(async () => {
      await this.pg.exec(sql);
    });
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    return this.#mutex.run(() => this.pg.transaction((tx) => fn(wrapTx(tx))));
  }

  async listen(channel: string, onNotify: () => void): Promise<() => Promise<void>> {
    const unlisten = await this.#mutex.run(() => this.pg.listen(channel, () => onNotify()));
    return () => this.#mutex.run(() => unlisten());
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#mutex.run(() => this.pg.close());
  }
}

export interface OpenPGliteOptions {
  /** Folder for a file-backed database; undefined = in memory. */
  dataDir?: string;
  /** A data-dir snapshot (tar, optionally gzip) to start from instead of running initdb. */
  loadDataDir?: Blob;
  /** PGlite's WebAssembly compiled once for the process (pgliteWasmModule), shared by the worker threads. */
  wasmModule?: WebAssembly.Module;
}

/** PGlite's WebAssembly file, beside its entry point (where PGlite itself reads it). */
export function pgliteWasmFile(): string {
  return path.join(path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), 'pglite.wasm');
}

/** Creates a PGlite instance with localbase's extensions and settings (used in-process and in the worker). */
export function createPGliteInstance(opts: OpenPGliteOptions): Promise<PGlite> {
  return PGlite.create({
    dataDir: opts.dataDir,
    loadDataDir: opts.loadDataDir,
    pgliteWasmModule: opts.wasmModule,
    extensions,
    // PostgreSQL's default 128 MB of shared buffers is most of PGlite's resident memory; 32 MB is ample
    // for a local development database and cuts the process's RSS by ~150 MB.
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`],
  });
}

/**
 * PGlite on the calling thread. A running statement blocks the thread (PGlite is synchronous WASM) and cannot be
 * cancelled: the server uses openPGliteWorker (pglite-worker-client.ts); this one serves template builds and tests.
 */
export async function openPGlite(opts: OpenPGliteOptions): Promise<Database & { pg: PGlite }> {
  return new PGliteDatabase(await createPGliteInstance(opts));
}

/** True when the folder already holds a PostgreSQL cluster. */
export function isInitialisedDataDir(dataDir: string): boolean {
  return fs.existsSync(path.join(dataDir, 'PG_VERSION'));
}

/** A --data-dir localbase will not use: a file, someone's own files, a database it cannot open. Exit code 1. */
export class DataFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataFolderError';
  }
}

/** What PostgreSQL (PGlite too) keeps in a data folder: part of a cluster, e.g. from a first start killed half-way. */
const CLUSTER_ENTRY = /^(?:PG_VERSION|base|global|pg_[a-z_]+|postgresql(?:\.auto)?\.conf|postmaster\.(?:pid|opts)|current_logfiles|lost\+found)$/;

/**
 * Before a new database is written into a data folder that holds none yet (start) or the folder is replaced (db
 * reset): refuses a path that is not a folder and a folder holding anything but (part of) a PostgreSQL cluster, so
 * that a mistyped --data-dir never gets a database written among its files, nor deleted with them. A missing or
 * empty folder is fine.
 */
export function checkNewDataFolder(dataDir: string): void {
  let entries: string[];
  try {
    entries = fs.readdirSync(dataDir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') throw new DataFolderError(`the data folder ${dataDir} is not a folder. Pass --data-dir a folder (a new one is created).`);
    throw new DataFolderError(`the data folder ${dataDir} cannot be read (${(err as Error).message}).`);
  }
  const foreign = entries.filter((name) => !CLUSTER_ENTRY.test(name)).sort();
  if (foreign.length > 0) {
    const shown = foreign.slice(0, 3).join(', ') + (foreign.length > 3 ? `, … (${foreign.length} in all)` : '');
    throw new DataFolderError(
      `the data folder ${dataDir} holds files that are not a localbase database (${shown}); localbase writes nothing ` +
        'there and deletes nothing. Pass --data-dir a new or empty folder, or the data folder of a localbase database.',
    );
  }
}

/** The error of a data folder PGlite could not open, saying which folder and what the operator can do. */
export function dataFolderOpenError(dataDir: string, err: unknown): DataFolderError {
  let access = '';
  try {
    fs.accessSync(dataDir, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK);
  } catch {
    access = ' It is not readable and writable by this user.';
  }
  const reason = err instanceof Error ? err.message : String(err);
  return new DataFolderError(
    `the data folder ${dataDir} could not be opened.${access} If the database in it is damaged, move the folder away ` +
      `(or delete it) to start a new database, or put back a copy. (PGlite: ${reason})`,
  );
}

/**
 * Returns a gzip tar snapshot of a freshly bootstrapped database, building and caching it on first use.
 * The cache file name carries a hash of the bootstrap SQL and the PGlite version, so any change rebuilds it.
 */
export async function loadOrBuildTemplate(
  cacheDir: string,
  bootstrapSql: string,
  log: (msg: string) => void = () => {},
): Promise<{ blob: Blob; file: string; built: boolean; ms: number }> {
  const started = performance.now();
  const hash = crypto
    .createHash('sha256')
    .update(PGLITE_VERSION)
    .update('\0')
    .update(bootstrapSql)
    .digest('hex')
    .slice(0, 16);
  const file = path.join(cacheDir, `template-${hash}.tgz`);
  if (fs.existsSync(file)) {
    const buf = fs.readFileSync(file);
    return { blob: new Blob([buf]), file, built: false, ms: performance.now() - started };
  }
  log(`Building the database template (first run only): ${file}`);
  const db = await openPGlite({});
  try {
    await db.exec(bootstrapSql);
    const dump = await db.pg.dumpDataDir('gzip');
    const buf = Buffer.from(await dump.arrayBuffer());
    fs.mkdirSync(cacheDir, { recursive: true });
    // Write then rename so that concurrent builders (parallel test workers) never see a partial file.
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    fs.writeFileSync(tmp, buf);
    fs.renameSync(tmp, file);
    // Snapshots of older bootstrap versions are never used again.
    for (const f of fs.readdirSync(cacheDir))
      if (/^template-[0-9a-f]{16}\.tgz$/.test(f) && path.join(cacheDir, f) !== file)
        fs.rmSync(path.join(cacheDir, f), { force: true });
    return { blob: new Blob([buf]), file, built: true, ms: performance.now() - started };
  } finally {
    await db.close();
  }
}
