/**
 * The per-request transaction envelope in ONE database call (see README: on PGlite each call costs about as much
 * as a small SELECT, so BEGIN / SET LOCAL ROLE / set_config / statement / COMMIT as five calls is what makes the
 * API slow).
 *
 * `localbase_rest.exec(role, claims, read_only, method, path, headers, sql, params)` runs inside the implicit
 * transaction of the calling statement: it sets the role and the request settings transaction-locally
 * (`set_config(…, true)`), makes the transaction read-only for reads, runs the statement built by build-read.ts
 * (paramStyle 'array') with EXECUTE … USING, and returns its first row as JSON text (null when none). When the call ends, role and
 * settings are gone. Row-level security is enforced by PostgreSQL for the switched role.
 *
 * ENVELOPE_SQL must be applied once (it is idempotent) by the database bootstrap, as the owner/superuser.
 * The function is not SECURITY DEFINER (so `set role` is allowed and the caller's membership applies) and
 * EXECUTE is revoked from PUBLIC, so the API roles cannot call it through rpc; the schema is never exposed.
 */
import { pgArrayLiteral, type BuiltStatement } from './build-read.ts';
import { RestError } from './errors.ts';
import type { Queryable } from './schema-cache.ts';

export const ENVELOPE_SQL = `
create schema if not exists localbase_rest;
revoke all on schema localbase_rest from public;
drop function if exists localbase_rest.exec(text, text, boolean, text, text, text, text, text[]);
drop function if exists localbase_rest.exec(text, text, boolean, text, text, text, text, text[], boolean, bigint);
create or replace function localbase_rest.exec(
  p_role text, p_claims text, p_read_only boolean, p_method text, p_path text, p_headers text,
  p_sql text, p_params text[], p_expect_single boolean default false, p_max_affected bigint default null,
  p_rollback boolean default false
) returns text
language plpgsql
as $$
declare
  row_value record;
  n_rows bigint;
begin
  -- one statement for all settings (each plpgsql statement has a cost): role, claims, request info, the legacy
  -- per-claim settings of the claims Supabase's auth helpers read first (request.jwt.claim.sub/role/email), read-only
  perform set_config('role', p_role, true),
          set_config('request.jwt.claims', p_claims, true),
          set_config('request.jwt.claim.sub', coalesce(p_claims::json ->> 'sub', ''), true),
          set_config('request.jwt.claim.role', coalesce(p_claims::json ->> 'role', ''), true),
          set_config('request.jwt.claim.email', coalesce(p_claims::json ->> 'email', ''), true),
          set_config('request.method', p_method, true),
          set_config('request.path', p_path, true),
          set_config('request.headers', p_headers, true),
          case when p_read_only then set_config('transaction_read_only', 'on', true) end;
  if not p_rollback then
    -- any top-level statement returning one row: SELECT, WITH … (incl. data-modifying CTEs), INSERT … RETURNING
    execute p_sql into row_value using p_params;
    get diagnostics n_rows = row_count;  -- EXECUTE does not set FOUND
  else
    -- Prefer: tx=rollback: run the statement in a subtransaction, check deferred constraints (as PostgREST's
    -- SET CONSTRAINTS ALL IMMEDIATE before its ROLLBACK), then undo it; the result row stays in the variables
    begin
      execute p_sql into row_value using p_params;
      get diagnostics n_rows = row_count;
      set constraints all immediate;
      raise sqlstate 'LBRBK';
    exception when sqlstate 'LBRBK' then
      null;
    end;
  end if;
  if n_rows = 0 then
    return null;
  end if;
  -- checks that must undo a mutation: raising aborts the implicit transaction of the call
  if p_expect_single and (to_json(row_value) ->> 'page_count')::bigint is distinct from 1 then
    raise sqlstate 'PT406' using message = 'Cannot coerce the result to a single JSON object',
      detail = format('The result contains %s rows', coalesce(to_json(row_value) ->> 'page_count', '0'));
  end if;
  if p_max_affected is not null and (to_json(row_value) ->> 'page_count')::bigint > p_max_affected then
    raise sqlstate 'PT400' using message = 'Query result exceeds max-affected preference constraint',
      detail = format('The query affects %s rows', to_json(row_value) ->> 'page_count');
  end if;
  return to_json(row_value)::text;
end
$$;
revoke all on function localbase_rest.exec(text, text, boolean, text, text, text, text, text[], boolean, bigint, boolean) from public;
`;

export interface EnvelopeContext {
  /** The role from the verified JWT (anon, authenticated, service_role). */
  role: string;
  /** The verified JWT payload; `{"role":"anon"}` without a token, as PostgREST. */
  claims: Record<string, unknown>;
  /** GET/HEAD run read-only. */
  readOnly: boolean;
  method: string;
  path: string;
  /** Lower-cased request headers (PostgREST's request.headers). */
  headers?: Record<string, string>;
  /**
   * Accept: vnd.pgrst.object+json on a mutation (any return preference): anything but exactly one affected row raises inside the call
   * (SQLSTATE PT406, so the change is undone) — map it with singleObjectError.
   */
  expectSingle?: boolean;
  /** Prefer: handling=strict, max-affected=n: more affected rows raise PT400 (undone); PostgREST's PGRST124. */
  maxAffected?: number | null;
  /**
   * Prefer: tx=rollback (when the database's db-tx-end allows it) or db-tx-end=rollback: the statement's writes are
   * undone inside the call but its result row is still returned. Ordinary requests send the same 10-parameter call.
   */
  rollback?: boolean;
}

/** The roles a request may switch to; anything else is refused before it reaches the database. */
export const API_ROLES: readonly string[] = ['anon', 'authenticated', 'service_role'];

/**
 * Runs a built statement (paramStyle 'array') inside the envelope and returns its single result row.
 * Database errors propagate unchanged (map them with restErrorFromPg).
 */
export async function runEnveloped<T extends Record<string, unknown>>(
  db: Queryable,
  ctx: EnvelopeContext,
  stmt: BuiltStatement,
  allowedRoles: readonly string[] = API_ROLES,
): Promise<T | null> {
  if (!allowedRoles.includes(ctx.role)) {
    throw new RestError(401, 'PGRST301', `role "${ctx.role}" is not allowed`, null, null);
  }
  const r = await db.query<{ row: string | null }>(
    ctx.rollback === true
      ? 'select localbase_rest.exec($1, $2, $3, $4, $5, $6, $7, $8::text[], $9, $10::bigint, p_rollback => true) as row'
      : 'select localbase_rest.exec($1, $2, $3, $4, $5, $6, $7, $8::text[], $9, $10::bigint) as row',
    [
      ctx.role,
      JSON.stringify(ctx.claims),
      ctx.readOnly,
      ctx.method,
      ctx.path,
      JSON.stringify(ctx.headers ?? {}),
      stmt.sql,
      pgArrayLiteral(stmt.params),
      ctx.expectSingle ?? false,
      ctx.maxAffected === null || ctx.maxAffected === undefined ? null : String(ctx.maxAffected),
    ],
  );
  const row = r.rows[0]?.row;
  return row === null || row === undefined ? null : (JSON.parse(row) as T);
}
