/**
 * Execution plans (`Accept: application/vnd.pgrst.plan[+json|+text]; for="…"; options=analyze|verbose|…`) and the
 * planner's row estimate behind `Prefer: count=planned|estimated`.
 *
 * PostgREST answers a plan media type with `EXPLAIN (FORMAT …, options) <its query>` when `db-plan-enabled` is on
 * (off by default, and on hosted Supabase until a project turns it on with
 * `alter role authenticator set pgrst.db_plan_enabled to 'true'`). localbase reads that same in-database setting
 * (`planEnabledOf` in db-config.ts), so plans stay refused (406 PGRST107) unless the project enabled them.
 *
 * EXPLAIN returns several rows in text format, which the one-row envelope (`localbase_rest.exec`) cannot carry, so
 * plans run through `localbase_rest.explain`: the same role / claims / read-only settings in one call, then the
 * EXPLAIN rows joined with newlines. Like `exec`, it is not SECURITY DEFINER, its schema is never exposed and EXECUTE
 * is revoked from PUBLIC: only the server's own session calls it. The EXPLAIN keyword list is built here from a
 * closed set of options; the statement is the one build-read.ts built (parameters in `($1)[n]` form).
 */
import type { BuiltStatement } from './build-read.ts';
import { pgArrayLiteral } from './build-read.ts';
import type { EnvelopeContext } from './envelope.ts';
import { API_ROLES } from './envelope.ts';
import { RestError } from './errors.ts';
import type { Queryable } from './schema-cache.ts';

export const PLAN_SQL = `
create schema if not exists localbase_rest;
revoke all on schema localbase_rest from public;
create or replace function localbase_rest.explain(
  p_role text, p_claims text, p_read_only boolean, p_method text, p_path text, p_headers text,
  p_search_path text, p_sql text, p_params text[]
) returns text
language plpgsql
as $$
declare
  r record;
  lines text[] := '{}';
begin
  -- the query identifier EXPLAIN VERBOSE shows (Supabase loads pg_stat_statements, which turns it on)
  begin
    perform set_config('compute_query_id', 'on', true);
  exception when others then null;
  end;
  perform set_config('role', p_role, true),
          set_config('request.jwt.claims', p_claims, true),
          set_config('request.jwt.claim.sub', coalesce(p_claims::json ->> 'sub', ''), true),
          set_config('request.jwt.claim.role', coalesce(p_claims::json ->> 'role', ''), true),
          set_config('request.jwt.claim.email', coalesce(p_claims::json ->> 'email', ''), true),
          set_config('request.method', p_method, true),
          set_config('request.path', p_path, true),
          set_config('request.headers', p_headers, true),
          -- PostgREST's per-request search_path (schema, then db-extra-search-path) and the planner's cache size
          -- of Supabase's Postgres image: EXPLAIN SETTINGS reports both as PostgREST on Supabase does
          set_config('search_path', p_search_path, true),
          set_config('effective_cache_size', '128MB', true),
          case when p_read_only then set_config('transaction_read_only', 'on', true) end;
  for r in execute p_sql using p_params loop
    lines := lines || (to_json(r) ->> 'QUERY PLAN');
  end loop;
  return array_to_string(lines, E'\\n');
end
$$;
revoke all on function localbase_rest.explain(text, text, boolean, text, text, text, text, text, text[]) from public;
`;

export const PLAN_OPTIONS = ['analyze', 'verbose', 'settings', 'buffers', 'wal'] as const;
export type PlanOption = (typeof PLAN_OPTIONS)[number];

export interface PlanMediaType {
  format: 'json' | 'text';
  /** The media type the plan is for (`for="…"`, default application/json). */
  for: string;
  options: PlanOption[];
}

/**
 * The plan media type of an Accept header (its first media range), or null when it asks for something else.
 * `application/vnd.pgrst.plan` alone is the text format, as in PostgREST.
 */
export function planMediaType(accept: string | null | undefined): PlanMediaType | null {
  if (accept === null || accept === undefined) return null;
  const first = accept.split(',')[0] ?? '';
  const [type, ...params] = first.split(';').map((s) => s.trim());
  const t = (type ?? '').toLowerCase();
  const format = t === 'application/vnd.pgrst.plan+json' ? 'json' : t === 'application/vnd.pgrst.plan' || t === 'application/vnd.pgrst.plan+text' ? 'text' : null;
  if (format === null) return null;
  let forType = 'application/json';
  let options: PlanOption[] = [];
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq === -1) continue;
    const k = p.slice(0, eq).trim().toLowerCase();
    const v = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
    if (k === 'for' && v !== '') forType = v.toLowerCase();
    if (k === 'options') {
      const asked = new Set(v.toLowerCase().split('|').map((o) => o.trim()));
      options = PLAN_OPTIONS.filter((o) => asked.has(o));
    }
  }
  return { format, for: forType, options };
}

/** `application/vnd.pgrst.plan+json; for="application/json"; options=…; charset=utf-8`, as PostgREST answers. */
export function planContentType(plan: PlanMediaType): string {
  const opts = plan.options.length > 0 ? `; options=${plan.options.join('|')}` : '';
  return `application/vnd.pgrst.plan+${plan.format}; for="${plan.for}"${opts}; charset=utf-8`;
}

/** `EXPLAIN (FORMAT …, OPTIONS) <stmt>`; keywords only from the closed lists above. */
export function explainStatement(plan: Pick<PlanMediaType, 'format' | 'options'>, stmt: BuiltStatement): BuiltStatement {
  const words = [plan.format === 'json' ? 'FORMAT JSON' : 'FORMAT TEXT', ...plan.options.map((o) => o.toUpperCase())];
  return { sql: `EXPLAIN (${words.join(', ')}) ${stmt.sql}`, params: stmt.params };
}

/** Runs an EXPLAIN statement (paramStyle 'array') as the request's role; returns the plan text (JSON text for FORMAT JSON). */
export async function runExplain(db: Queryable, ctx: EnvelopeContext, searchPath: string, stmt: BuiltStatement): Promise<string> {
  if (!API_ROLES.includes(ctx.role)) throw new RestError(401, 'PGRST301', `role "${ctx.role}" is not allowed`, null, null);
  const r = await db.query<{ plan: string | null }>(
    'select localbase_rest.explain($1, $2, $3, $4, $5, $6, $7, $8, $9::text[]) as plan',
    [ctx.role, JSON.stringify(ctx.claims), ctx.readOnly, ctx.method, ctx.path, JSON.stringify(ctx.headers ?? {}), searchPath, stmt.sql, pgArrayLiteral(stmt.params)],
  );
  return r.rows[0]?.plan ?? '';
}

/** The planner's row estimate of a statement (`count=planned`): the top node's "Plan Rows". */
export async function plannedRows(db: Queryable, ctx: EnvelopeContext, searchPath: string, stmt: BuiltStatement): Promise<number | null> {
  const text = await runExplain(db, ctx, searchPath, explainStatement({ format: 'json', options: [] }, stmt));
  const plan = JSON.parse(text) as Array<{ Plan?: { 'Plan Rows'?: number } }>;
  const rows = plan[0]?.Plan?.['Plan Rows'];
  return typeof rows === 'number' ? Math.round(rows) : null;
}

/** PostgREST's per-request search_path: the request's schema, then Supabase's db-extra-search-path (public, extensions). */
export function requestSearchPath(schema: string): string {
  return [schema, 'public', 'extensions'].map((s) => `"${s.replaceAll('"', '""')}"`).join(', ');
}

