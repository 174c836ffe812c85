/**
 * The two things every SQL builder for /rest/v1 needs: quoting identifiers (names taken from the schema
 * cache, never from the request) and turning a PostgreSQL error into PostgREST's HTTP status and body.
 */
import { RestError } from './errors.ts';

/** Quotes an identifier for PostgreSQL: always double-quoted, embedded `"` doubled. NUL cannot be in a name. */
export function quoteIdent(name: string): string {
  if (name.includes('\u0000')) throw new RestError(400, 'PGRST100', 'Identifiers cannot contain NUL characters', null, null);
  return `"${name.replaceAll('"', '""')}"`;
}

/** `"schema"."name"` */
export const quoteQualified = (schema: string, name: string): string => `${quoteIdent(schema)}.${quoteIdent(name)}`;

/** What PGlite's DatabaseError and node-postgres' DatabaseError both carry. */
export interface PgErrorLike {
  code?: string;
  message: string;
  detail?: string | null;
  hint?: string | null;
}

export function isPgError(e: unknown): e is PgErrorLike & Error {
  if (!(e instanceof Error)) return false;
  const code: unknown = (e as Error & { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/**
 * HTTP status for a SQLSTATE, as PostgREST maps it (Error.hs pgErrorStatus).
 * `authenticated`: false for the anon role, whose permission errors are 401 rather than 403.
 */
export function pgErrorStatus(code: string, authenticated: boolean): number {
  switch (code) {
    case '23503': // foreign_key_violation
    case '23505': // unique_violation
      return 409;
    case '25006': // read_only_sql_transaction
      return 405;
    case '42883': // undefined_function
    case '42P01': // undefined_table
      return 404;
    case '42P17': // infinite_recursion (e.g. in a policy)
      return 500;
    case '42501': // insufficient_privilege, RLS violation on write
      return authenticated ? 403 : 401;
    case '53400': // configuration_limit_exceeded
      return 500;
    case '57P01': // admin_shutdown
      return 503;
    case 'P0001': // RAISE EXCEPTION default
      return 400;
  }
  if (code.startsWith('PT')) {
    const n = Number(code.slice(2));
    return Number.isInteger(n) && n >= 100 && n <= 599 ? n : 500;
  }
  switch (code.slice(0, 2)) {
    case '08': // connection exception
    case '53': // insufficient resources
      return 503;
    case '0L': // invalid grantor
    case '0P': // invalid role specification
    case '28': // invalid authorization specification
      return 403;
    case '09': case '25': case '2D': case '38': case '39': case '3B': case '40': case '54': case '55':
    case '57': case '58': case 'F0': case 'HV': case 'P0': case 'XX':
      return 500;
  }
  return 400;
}

/** Converts a database error into the RestError PostgREST would answer with (body: code, message, details, hint). */
export function restErrorFromPg(e: PgErrorLike, authenticated: boolean): RestError {
  const code = e.code ?? 'XX000';
  return new RestError(pgErrorStatus(code, authenticated), code, e.message, e.detail ?? null, e.hint ?? null);
}
