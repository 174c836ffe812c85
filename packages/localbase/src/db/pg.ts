import pg from 'pg';
import { isConnectionFailure } from './types.ts';
import type { Database, Notifications, Queryable, QueryResult, Row } from './types.ts';

// int8 and numeric as JS numbers would lose precision; keep pg's string default for them.
// Timestamps come back as Date and json/jsonb parsed, like PGlite.

function clientQueryable(client: pg.PoolClient): Queryable {
  return {
    async query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      const r = await client.query(sql, params as unknown[] | undefined);
      return { rows: r.rows as T[], affectedRows: r.rowCount ?? 0 };
    },
    async exec(sql: string): Promise<void> {
      await client.query(sql);
    },
  };
}

/**
 * Whether the server was reachable at the last try, so that an outage is told once when it starts and once when it
 * ends (every request failing meanwhile would otherwise print a stack of its own).
 */
class Reachability {
  #downSince: number | undefined;
  readonly #report: (message: string) => void;
  constructor(report: (message: string) => void) {
    this.#report = report;
  }
  async track<T>(work: Promise<T>): Promise<T> {
    try {
      const result = await work;
      this.up();
      return result;
    } catch (err) {
      if (isConnectionFailure(err)) this.down(err as Error);
      else this.up(); // the server answered (with an error of the statement's own)
      throw err;
    }
  }
  up(): void {
    if (this.#downSince === undefined) return;
    const seconds = Math.round((Date.now() - this.#downSince) / 1000);
    this.#downSince = undefined;
    this.#report(`the database is reachable again (after ${seconds} s)`);
  }
  down(err: Error): void {
    if (this.#downSince !== undefined) return;
    this.#downSince = Date.now();
    this.#report(`the database is unreachable (${err.message}): requests that need it fail until it is back (retrying)`);
  }
}

class PgDatabase implements Database, Notifications {
  readonly kind = 'pg' as const;
  readonly pool: pg.Pool;
  readonly #reach: Reachability;

  constructor(pool: pg.Pool, report: (message: string) => void) {
    this.pool = pool;
    this.#reach = new Reachability(report);
  }

  async query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
    const r = await this.#reach.track(this.pool.query(sql, params as unknown[] | undefined));
    return { rows: r.rows as T[], affectedRows: r.rowCount ?? 0 };
  }

  async exec(sql: string): Promise<void> {
    await this.#reach.track(this.pool.query(sql));
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.#reach.track(this.pool.connect());
    // The pool listens for errors of idle clients only: a connection lost while fn awaits something else (a hash, a
    // file) would emit 'error' with no listener and end the process. Keep it; the next statement fails instead.
    let broken: Error | undefined;
    const onError = (err: Error) => {
      broken = err;
    };
    client.on('error', onError);
    try {
      await client.query('BEGIN');
      const result = await fn(clientQueryable(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      if (isConnectionFailure(err)) broken ??= err;
      try {
        if (!broken) await client.query('ROLLBACK');
      } catch (rollbackErr) {
        broken = rollbackErr as Error;
      }
      throw err;
    } finally {
      client.off('error', onError);
      client.release(broken); // a broken connection is discarded rather than handed to the next request
    }
  }

  readonly #listeners = new Set<() => Promise<void>>();

  /**
   * LISTEN on a dedicated connection (pooled ones come and go). A lost connection is re-opened after a second, and
   * onNotify runs then too: notifications sent while it was down are gone.
   */
  async listen(channel: string, onNotify: () => void): Promise<() => Promise<void>> {
    let stopped = false;
    let client: pg.Client | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    const connect = async (): Promise<void> => {
      const c = new pg.Client(this.pool.options);
      c.on('notification', (n) => {
        if (n.channel === channel) onNotify();
      });
      const lost = () => {
        if (stopped || client !== c) return;
        client = undefined;
        c.end().catch(() => {});
        retry = setTimeout(() => void connect().then(onNotify, lost), 1000);
        (retry as { unref?: () => void }).unref?.(); // DOM timer types in the web app's type check
      };
      c.on('error', lost);
      c.on('end', lost);
      client = c;
      await this.#reach.track(c.connect());
      await c.query(`listen "${channel.replaceAll('"', '""')}"`);
    };
    await connect();
    const stop = async () => {
      stopped = true;
      clearTimeout(retry);
      this.#listeners.delete(stop);
      await client?.end().catch(() => {});
    };
    this.#listeners.add(stop);
    return stop;
  }

  async close(): Promise<void> {
    for (const stop of [...this.#listeners]) await stop();
    await this.pool.end();
  }
}

/**
 * `report` hears, once each, that the database became unreachable and that it is reachable again.
 * `statementTimeoutMs` (> 0) is every connection's statement_timeout: a request's statement waiting on a lock
 * another client holds fails with 57014 instead of waiting (and holding a pooled connection) for ever. Migrations,
 * bootstrap and reset lift it for their own transactions (`set local statement_timeout = 0`).
 */
export async function openPg(
  connectionString: string,
  max = 10,
  report: (message: string) => void = () => {},
  statementTimeoutMs = 0,
): Promise<Database> {
  const open = async (url: string): Promise<pg.Pool> => {
    const pool = new pg.Pool({
      connectionString: url,
      max,
      connectionTimeoutMillis: connectTimeoutMs(url),
      ...(statementTimeoutMs > 0 ? { statement_timeout: Math.floor(statementTimeoutMs) } : {}),
    });
    // Errors on idle clients (server restart) must not crash the process.
    pool.on('error', () => {});
    try {
      const client = await pool.connect();
      client.release();
      return pool;
    } catch (err) {
      await pool.end().catch(() => {});
      throw err;
    }
  };
  const url = libpqSslUrl(connectionString);
  try {
    try {
      return new PgDatabase(await open(url), report);
    } catch (err) {
      // libpq's prefer and allow: TLS when the server offers it, a plain connection when it does not.
      const mode = sslMode(url);
      if ((mode !== 'prefer' && mode !== 'allow') || !/does not support SSL/i.test((err as Error).message)) throw err;
      const plain = new URL(url);
      plain.searchParams.set('sslmode', 'disable');
      return new PgDatabase(await open(plain.toString()), report);
    }
  } catch (err) {
    // The driver's words alone ("connect ECONNREFUSED 127.0.0.1:1") do not say it was the database.
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`cannot connect to the database ${redactDatabaseUrl(connectionString)}: ${why}`, { cause: err });
  }
}

function sslMode(url: string): string | null {
  try {
    return new URL(url).searchParams.get('sslmode');
  } catch {
    return null;
  }
}

/**
 * sslmode read as libpq (and every other PostgreSQL client) reads it: node-postgres takes prefer, require and
 * verify-ca for verify-full unless uselibpqcompat=true, so a URL with sslmode=require (hosted Supabase's) failed on
 * the server's certificate, and sslmode=prefer refused a server without TLS. An explicit uselibpqcompat is kept.
 */
export function libpqSslUrl(connectionString: string): string {
  try {
    const u = new URL(connectionString);
    const mode = u.searchParams.get('sslmode');
    if (mode === null || u.searchParams.has('uselibpqcompat') || mode === 'no-verify') return connectionString;
    if (mode === 'allow') u.searchParams.set('sslmode', 'prefer'); // node-postgres knows no allow: try TLS first
    u.searchParams.set('uselibpqcompat', 'true');
    return u.toString();
  } catch {
    return connectionString;
  }
}

/** Default bound on opening a connection, and on waiting for a free one of the pool. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * How long to wait for a connection: the URL's `connect_timeout` (seconds, as libpq; 0 = no limit), else 10 s. A host
 * that drops packets would otherwise hold a start, or every request, for minutes without a word.
 */
export function connectTimeoutMs(connectionString: string): number {
  try {
    const v = new URL(connectionString).searchParams.get('connect_timeout');
    if (v !== null && /^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  } catch {
    /* node-postgres reports the URL */
  }
  return DEFAULT_CONNECT_TIMEOUT_MS;
}

/** A postgres:// or postgresql:// URL (what node-postgres reads; anything else it would take for a host name). */
export function isPostgresUrl(url: string): boolean {
  try {
    return ['postgres:', 'postgresql:', 'socket:'].includes(new URL(url).protocol);
  } catch {
    return false;
  }
}

/** postgres://user:secret@host/db → postgres://user:***@host/db */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparseable url)';
  }
}
