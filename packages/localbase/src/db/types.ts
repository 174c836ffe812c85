/** A row as returned by the database driver (timestamps as Date, json/jsonb parsed). */
export type Row = Record<string, unknown>;

export interface QueryResult<T extends Row = Row> {
  rows: T[];
  /** Rows changed by INSERT/UPDATE/DELETE when the driver reports it. */
  affectedRows: number;
}

/** Anything statements can be sent to: the database itself or an open transaction. */
export interface Queryable {
  query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
  /** Runs one or more statements without parameters (simple query protocol). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  /** 'pglite' (embedded, file or memory) or 'pg' (a PostgreSQL server). */
  readonly kind: 'pglite' | 'pg';
  /**
   * Runs fn inside BEGIN … COMMIT on one connection; rolls back if fn throws.
   * Inside fn use tx only: with PGlite, calling db.query from inside a transaction waits forever.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Optionally implemented by a Database that enforces a per-statement deadline itself (PGlite in a worker thread):
 * past timeoutMs the statement fails with SQLSTATE 57014, as PostgreSQL's statement_timeout would make it.
 */
export interface DeadlineQueryable {
  queryWithTimeout<T extends Row = Row>(sql: string, params: unknown[] | undefined, timeoutMs: number): Promise<QueryResult<T>>;
}

export function hasDeadlines(db: Database): db is Database & DeadlineQueryable {
  return typeof (db as Partial<DeadlineQueryable>).queryWithTimeout === 'function';
}

/**
 * Optionally implemented by a Database that can wait for NOTIFY (LISTEN): onNotify runs after each notification on
 * the channel, and also after the listening connection was lost and re-established (notifications may have been
 * missed meanwhile). Resolves to a function that stops listening.
 */
export interface Notifications {
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
}

export function hasNotifications(db: Database): db is Database & Notifications {
  return typeof (db as Partial<Notifications>).listen === 'function';
}

const NETWORK_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/**
 * True for an error that says the database could not be reached or the connection broke, rather than a statement
 * failing: a refused or reset connection, node-postgres' "Connection terminated…", SQLSTATE class 08, or the server
 * shutting down (57P01–57P03).
 */
export function isConnectionFailure(e: unknown): e is Error {
  if (!(e instanceof Error)) return false;
  const code = (e as Error & { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_ERRNOS.has(code) || code.startsWith('08') || /^57P0[123]$/.test(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code)) return false;
  }
  return /^Connection terminated|connection error and is not queryable/i.test(e.message);
}

/** node-postgres' pool: every connection stayed busy for the whole connect timeout (the server is reachable). */
export function isPoolTimeout(e: unknown): boolean {
  return e instanceof Error && e.message === 'timeout exceeded when trying to connect';
}

/** The database cannot be used just now: its connection failed, or no pooled connection came free in time. */
export function isDatabaseOutOfReach(e: unknown): boolean {
  return isConnectionFailure(e) || isPoolTimeout(e);
}
