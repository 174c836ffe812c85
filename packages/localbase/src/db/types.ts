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
