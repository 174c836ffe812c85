// Private channels (decision 041): read and write permissions from the app's RLS policies on realtime.messages, as
// Supabase Realtime evaluates them. Each check runs in a transaction that is rolled back: probe rows are inserted by
// the server, then selected (read) or inserted (write) as the caller's role with the caller's claims and
// realtime.topic() set to the channel's name.
import { isConnectionFailure, type Database, type Queryable } from '../db/types.ts';
import type { Claims } from './tokens.ts';

export type Extension = 'broadcast' | 'presence';

/**
 * The answer of a write check: allowed, denied by the policies, or the policies failed (upstream's RlsPolicyError;
 * 'query_canceled' when the check ran past the statement timeout, upstream's QueryCanceled).
 */
export type WriteVerdict = 'allowed' | 'denied' | 'policy_error' | 'query_canceled';

export interface ReadPolicies {
  broadcast: boolean;
  presence: boolean;
}

/** The roles a check may switch to: anything else (a token naming another role) is allowed nothing. */
const API_ROLES = new Set(['anon', 'authenticated']);

class Rollback extends Error {
  readonly value: unknown;
  constructor(value: unknown) {
    super('rollback');
    this.value = value;
  }
}

/** Runs fn in a transaction and always rolls it back, returning fn's result. */
export async function rolledBack<T>(db: Database, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    await db.transaction(async (tx) => {
      throw new Rollback(await fn(tx));
    });
  } catch (err) {
    if (err instanceof Rollback) return err.value as T;
    throw err;
  }
  throw new Error('unreachable');
}

async function actAs(tx: Queryable, claims: Claims, topic: string): Promise<void> {
  await tx.query(
    `select set_config('role', $1, true), set_config('request.jwt.claims', $2, true), set_config('realtime.topic', $3, true),
            set_config('request.jwt.claim.role', $1, true), set_config('request.jwt.claim.sub', $4, true)`,
    [claims.role, JSON.stringify(claims), topic, typeof claims.sub === 'string' ? claims.sub : ''],
  );
}

/** An error PostgreSQL raised (it has a SQLSTATE), as opposed to the database being unreachable or closed. */
const isDatabaseError = (err: unknown): boolean => /^[0-9A-Z]{5}$/.test(String((err as { code?: unknown } | null)?.code));

export class ChannelAuthorization {
  readonly #db: Database;
  readonly #quiet: boolean;
  constructor(db: Database, opts: { quiet?: boolean } = {}) {
    this.#db = db;
    this.#quiet = opts.quiet ?? false;
  }

  /**
   * A policy that fails (a topic it cannot cast, say) allows nothing, as upstream's RlsPolicyError: the join is
   * refused as unauthorized, a send dropped, a track answered error. Logged, as upstream logs it.
   */
  #denied<T>(err: unknown, topic: string, nothing: T): T {
    if (!isDatabaseError(err) || isConnectionFailure(err)) throw err;
    if (!this.#quiet)
      console.warn(`[localbase] realtime: the policies on realtime.messages failed for topic ${JSON.stringify(topic)} (RlsPolicyError): ${(err as Error).message}`);
    return nothing;
  }

  /** Which extensions of a private channel the caller may read (service_role: all; other roles: none). */
  async read(claims: Claims, topic: string, withPresence: boolean): Promise<ReadPolicies> {
    if (claims.role === 'service_role') return { broadcast: true, presence: true };
    if (!API_ROLES.has(claims.role)) return { broadcast: false, presence: false };
    return this.#read(claims, topic, withPresence).catch((err: unknown) => this.#denied(err, topic, { broadcast: false, presence: false }));
  }

  #read(claims: Claims, topic: string, withPresence: boolean): Promise<ReadPolicies> {
    return rolledBack(this.#db, async (tx) => {
      const extensions: Extension[] = withPresence ? ['broadcast', 'presence'] : ['broadcast'];
      const probes = await tx.query<{ id: string; extension: Extension }>(
        `insert into realtime.messages (topic, extension, private) select $1, unnest($2::text[]), true returning id::text, extension`,
        [topic, extensions],
      );
      await actAs(tx, claims, topic);
      const seen = await tx.query<{ extension: Extension }>(
        'select extension from realtime.messages where id = any($1::uuid[])',
        [probes.rows.map((r) => r.id)],
      );
      const visible = new Set(seen.rows.map((r) => r.extension));
      return { broadcast: visible.has('broadcast'), presence: visible.has('presence') };
    });
  }

  /** Whether the caller may send (broadcast) or track (presence) on a private channel. */
  async write(claims: Claims, topic: string, extension: Extension): Promise<boolean> {
    return (await this.writeVerdict(claims, topic, extension)) === 'allowed';
  }

  /**
   * The write check with the reason of a refusal, for the REST endpoint that tells it (decision 173). Rejects when
   * the database cannot be reached, also for the service role: its policies always pass, but Realtime still needs the
   * database to run them (decision 185).
   */
  async writeVerdict(claims: Claims, topic: string, extension: Extension): Promise<WriteVerdict> {
    if (claims.role === 'service_role') {
      await this.#db.query('select 1');
      return 'allowed';
    }
    if (!API_ROLES.has(claims.role)) return 'denied';
    return rolledBack(this.#db, async (tx): Promise<WriteVerdict> => {
      await actAs(tx, claims, topic);
      try {
        await tx.query('insert into realtime.messages (topic, extension, private) values ($1, $2, true)', [topic, extension]);
        return 'allowed';
      } catch (err) {
        if ((err as { code?: unknown }).code === '42501') return 'denied'; // RLS (or a missing grant) refused the row
        throw err;
      }
    }).catch((err: unknown) =>
      this.#denied<WriteVerdict>(err, topic, (err as { code?: unknown }).code === '57014' ? 'query_canceled' : 'policy_error'),
    );
  }
}
