/**
 * /rest/v1 wired to a localbase database: installs the envelope function, keeps the schema cache, verifies the
 * caller's JWT with the auth service's keys (one verifier for /auth/v1 and /rest/v1), and applies the statement
 * timeout (PostgreSQL server: SET LOCAL statement_timeout; PGlite in a worker: the worker's deadline).
 * `createApp` mounts `handle` at /rest/v1/*.
 */
import { unverifiedClaims } from '../auth/tokens.ts';
import { hasDeadlines } from '../db/types.ts';
import type { Database, Queryable as DbQueryable, QueryResult, Row } from '../db/types.ts';
import { loadDbConfig, planEnabledOf, txEndOf, type TxEnd } from './db-config.ts';
import { ENVELOPE_SQL } from './envelope.ts';
import { RestError } from './errors.ts';
import { handleRest, type RestAuth } from './handler.ts';
import { PLAN_SQL } from './plan.ts';
import { loadSchemaCache, type SchemaCache } from './schema-cache.ts';

export interface RestServiceOptions {
  db: Database;
  /** Exposed schemas; the first is the default profile (PostgREST's db-schemas). */
  schemas: readonly string[];
  /** db-max-rows; null = no cap. */
  maxRows: number | null;
  /**
   * Per-request statement timeout in ms (0 = none). Enforced by a PostgreSQL server and by PGlite in a worker
   * thread; PGlite on the main thread cannot cancel (see README).
   */
  statementTimeoutMs: number;
  /** Verifies a token signed by a signing key (by kid) or, HS256, the legacy JWT secret; throws on anything else. */
  verifyJwt: (token: string) => Promise<Record<string, unknown>>;
}

/** What the apikey middleware found: the role of a valid key (anon or service_role). */
export type ApiKeyRole = 'anon' | 'service_role';

export interface RestService {
  /**
   * Answers one /rest/v1 request. `apiKeyRole` is the role of the (already checked) apikey; `responseHeaders`
   * (CORS) are put on every response.
   */
  handle(request: Request, apiKeyRole: ApiKeyRole, responseHeaders?: Readonly<Record<string, string>>): Promise<Response>;
  /** Re-reads the catalog (after migrations or DDL run outside localbase's migrations). */
  reload(): Promise<void>;
  /** Installs the envelope function again and reloads the cache (after the database was reset under the server). */
  reinstall(): Promise<void>;
}

const BEARER = /^bearer\s+(.*)$/i;

/**
 * Verified tokens → claims, so a client's repeated requests do not pay for the HMAC again (jose's WebCrypto verify
 * was ~6 % of the server's CPU under load). A hit is only used while the token's `exp` is in the future; the
 * signature of that exact token string was verified with the current secret. Bounded; the oldest entry goes first.
 */
class VerifiedTokens {
  readonly #max: number;
  readonly #map = new Map<string, { claims: Record<string, unknown>; expMs: number }>();
  constructor(max = 1000) {
    this.#max = max;
  }
  get(token: string): Record<string, unknown> | undefined {
    const hit = this.#map.get(token);
    if (!hit) return undefined;
    if (hit.expMs <= Date.now()) {
      this.#map.delete(token);
      return undefined;
    }
    return hit.claims;
  }
  set(token: string, claims: Record<string, unknown>): void {
    if (typeof claims.exp !== 'number') return; // tokens without exp are always verified again
    if (this.#map.size >= this.#max) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
    this.#map.set(token, { claims, expMs: claims.exp * 1000 });
  }
}

/**
 * PostgREST's check of the registered claims' JSON types, in its order (exp, nbf, iat, aud): the first that is
 * present, not null and of another type (PostgREST.Auth.Jwt checkForErrors). `sub` and the rest are not its concern.
 */
function postgrestClaimTypeError(claims: Record<string, unknown>): string | undefined {
  for (const name of ['exp', 'nbf', 'iat']) {
    const v = claims[name];
    if (v !== undefined && v !== null && typeof v !== 'number') return `The JWT '${name}' claim must be a number`;
  }
  const aud = claims.aud;
  if (aud !== undefined && aud !== null && typeof aud !== 'string' && !(Array.isArray(aud) && aud.every((a) => typeof a === 'string')))
    return "The JWT 'aud' claim must be a string or an array of strings";
  return undefined;
}

/** PostgREST's JWT errors: 401 PGRST303 for expired tokens / bad claims, PGRST301 for anything else. */
function jwtError(err: unknown, token: string): RestError {
  const message = err instanceof Error ? err.message : String(err);
  if (/expired/i.test(message)) return new RestError(401, 'PGRST303', 'JWT expired', null, null);
  if (/invalid claims/i.test(message)) {
    // the signature was good (claims are validated after it): PostgREST's message for a claim of the wrong type
    const mistyped = postgrestClaimTypeError(unverifiedClaims(token));
    return new RestError(401, 'PGRST303', mistyped ?? message.replace(/^.*?token has /, 'JWT has '), null, null);
  }
  const parts = token.split('.').length;
  if (parts !== 3) return new RestError(401, 'PGRST301', `Expected 3 parts in JWT; got ${parts}`, null, null);
  return new RestError(401, 'PGRST301', 'JWT cryptographic operation failed', null, null);
}

/**
 * One database call per request, with the statement timeout armed first.
 * On a server: BEGIN, SET LOCAL statement_timeout, the envelope call, COMMIT on one pooled connection (the timeout
 * must be set before the statement starts; setting it inside the envelope function would come too late).
 * PGlite's own statement_timeout never fires (synchronous WASM, no timer signal); PGlite in a worker thread takes a
 * deadline with the one envelope call instead and answers the same 57014 (pglite-worker-client.ts). PGlite on the
 * main thread (pgliteWorker: false) cannot be interrupted: the call goes straight through.
 */
function timedQueryable(db: Database, statementTimeoutMs: number): DbQueryable {
  if (statementTimeoutMs <= 0) return db;
  const ms = Math.floor(statementTimeoutMs);
  // PostgREST answers 57014 with 500 and PostgreSQL's message; say which limit it was.
  const addHint = (err: unknown): never => {
    const e = err as { code?: unknown; hint?: unknown };
    if (e && e.code === '57014' && !e.hint) e.hint = `The request ran longer than the statement timeout of ${ms} ms (--statement-timeout)`;
    throw err;
  };
  if (hasDeadlines(db))
    return {
      query: <T extends Row = Row>(sql: string, params?: unknown[]) => db.queryWithTimeout<T>(sql, params, ms).catch(addHint),
      exec: (sql: string) => db.exec(sql),
    };
  if (db.kind !== 'pg') return db;
  return {
    query<T extends Row = Row>(sql: string, params?: unknown[]): Promise<QueryResult<T>> {
      return db
        .transaction(async (tx) => {
          await tx.exec(`set local statement_timeout = ${ms}`); // ms is an integer we computed, not request text
          return tx.query<T>(sql, params);
        })
        .catch(addHint);
    },
    exec: (sql: string) => db.exec(sql),
  };
}

export async function createRestService(opts: RestServiceOptions): Promise<RestService> {
  const { db } = opts;
  // Several servers may start on one PostgreSQL at once: serialise the (idempotent) function replacement.
  await db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock(54321002)');
    await tx.exec(ENVELOPE_SQL);
    await tx.exec(PLAN_SQL);
  });
  let cache: SchemaCache = await loadSchemaCache(db, opts.schemas);
  // PostgREST's in-database settings (ALTER ROLE authenticator SET pgrst.db_tx_end / db_plan_enabled …),
  // re-read with the cache
  let dbConfig = await loadDbConfig(db);
  let planEnabled = planEnabledOf(dbConfig);
  let txEnd: TxEnd = txEndOf(dbConfig);
  const runner = timedQueryable(db, opts.statementTimeoutMs);
  const verified = new VerifiedTokens();

  async function authenticate(request: Request, apiKeyRole: ApiKeyRole): Promise<RestAuth> {
    const header = request.headers.get('authorization');
    const m = header === null ? null : BEARER.exec(header.trim());
    const token = m ? (m[1] ?? '').trim() : '';
    // No token: the apikey's role (PostgREST behind Supabase's gateway sees the key as the token).
    if (token === '') return { role: apiKeyRole, claims: { role: apiKeyRole } };
    // The opaque sb_publishable_/sb_secret_ keys as bearer: the gateway turns them into the key's role.
    if (!token.includes('.') && token === request.headers.get('apikey')) return { role: apiKeyRole, claims: { role: apiKeyRole } };
    let claims = verified.get(token);
    if (!claims) {
      try {
        claims = await opts.verifyJwt(token);
      } catch (err) {
        throw jwtError(err, token);
      }
      const mistyped = postgrestClaimTypeError(claims);
      if (mistyped) throw new RestError(401, 'PGRST303', mistyped, null, null);
      verified.set(token, claims);
    }
    // PostgREST takes a role claim that is not a string as its JSON text ({"role": 123} is the role "123", null the
    // role "null"), which is no API role: refused below, never anon's access.
    const claimed = claims.role;
    const role = claimed === undefined || claimed === '' ? 'anon' : typeof claimed === 'string' ? claimed : JSON.stringify(claimed);
    // PostgREST checks exp only when present. Here a token that acts for a user (any role but the API keys' anon
    // and service_role) must carry one, or a leaked token would never expire: docs/decisions/018-tokens-without-exp.md.
    if (claims.exp === undefined && role !== 'anon' && role !== 'service_role')
      throw new RestError(
        401,
        'PGRST303',
        'JWT has no "exp" claim',
        null,
        'A token for a user or a custom role must expire; only anon and service_role API keys may omit "exp"',
      );
    return { role, claims };
  }

  return {
    handle(request, apiKeyRole, responseHeaders) {
      return handleRest(request, {
        responseHeaders,
        db: runner,
        cache: () => cache,
        authenticate: (req) => authenticate(req, apiKeyRole),
        maxRows: opts.maxRows,
        exposedSchemas: opts.schemas,
        planEnabled,
        txEnd: () => txEnd,
      });
    },
    async reload() {
      cache = await loadSchemaCache(db, opts.schemas);
      dbConfig = await loadDbConfig(db);
      planEnabled = planEnabledOf(dbConfig);
      txEnd = txEndOf(dbConfig);
    },
    async reinstall() {
      await db.transaction(async (tx) => {
        await tx.query('select pg_advisory_xact_lock(54321002)');
        await tx.exec(ENVELOPE_SQL);
      });
      cache = await loadSchemaCache(db, opts.schemas);
    },
  };
}
