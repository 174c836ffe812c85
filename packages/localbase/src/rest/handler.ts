/**
 * The /rest/v1 request handler on web-standard Request/Response (mount it in hono with
 * `app.all('/rest/v1/*', (c) => handleRest(c.req.raw, deps))`): route → profile → JWT (injected) → parse →
 * build → one-call envelope → PostgREST response (status, Content-Range, Preference-Applied, error JSON).
 */
import { jsonNestingExceeds } from '../http/body.ts';
import { buildCountSource, buildRead, type BuiltStatement } from './build-read.ts';
import { buildRpc, type RpcRequest } from './build-rpc.ts';
import { buildDelete, buildInsert, buildUpdate } from './build-write.ts';
import { transactionEnd, type TxEnd } from './db-config.ts';
import { runEnveloped, type EnvelopeContext } from './envelope.ts';
import { isConnectionFailure, isPoolTimeout } from '../db/types.ts';
import { RestError } from './errors.ts';
import { contentRange, negotiateRepresentation, readStatus, requestSchema, singleObjectError, type Representation } from './negotiate.ts';
import { explainStatement, planContentType, planMediaType, plannedRows, requestSearchPath, runExplain } from './plan.ts';
import { decodePathComponent, effectiveRange, parsePrefer, parseQuery, parseRangeHeader, preferenceApplied, type Preferences } from './parse.ts';
import type { Queryable, SchemaCache } from './schema-cache.ts';
import { isPgError, restErrorFromPg } from './sql.ts';

export interface RestAuth {
  role: string;
  claims: Record<string, unknown>;
}

export interface RestDeps {
  db: Queryable;
  /** The current schema cache (reload it after migrations). */
  cache: () => SchemaCache;
  /**
   * Verifies `Authorization: Bearer …` (and the apikey) → role + claims. No token → `{role:'anon', claims:{role:'anon'}}`.
   * Throws RestError 401 (PGRST301 invalid, PGRST303 expired) itself.
   */
  authenticate: (request: Request) => Promise<RestAuth>;
  /** db-max-rows (default 1000; null: no cap). */
  maxRows?: number | null;
  /** Exposed schemas (default: the cache's). */
  exposedSchemas?: readonly string[];
  /** Mount path (default '/rest/v1'). */
  basePath?: string;
  /** Headers added to every response (CORS from the server), set when the Response is built. */
  responseHeaders?: Readonly<Record<string, string>>;
  /** db-plan-enabled: answer `Accept: application/vnd.pgrst.plan…` with EXPLAIN (default off: 406, as PostgREST). */
  planEnabled?: boolean;
  /** PostgREST's db-tx-end (default 'commit': `Prefer: tx=…` ignored); see db-config.ts. */
  txEnd?: () => TxEnd;
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 204: 'No Content', 206: 'Partial Content', 300: 'Multiple Choices', 400: 'Bad Request',
  401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 406: 'Not Acceptable',
  409: 'Conflict', 413: 'Payload Too Large', 416: 'Range Not Satisfiable', 500: 'Internal Server Error', 503: 'Service Unavailable',
};

const JSON_TYPE = 'application/json; charset=utf-8';

/** `headers`: lower-case names (a plain object keeps @hono/node-server on its fast path, no Headers object). */
function respond(status: number, body: string | null, headers: Record<string, string> = {}): Response {
  const h: Record<string, string> = { ...headers };
  if (body !== null && h['content-type'] === undefined) h['content-type'] = JSON_TYPE;
  return new Response(status === 204 ? null : body, { status, statusText: STATUS_TEXT[status] ?? '', headers: h });
}

function errorResponse(e: RestError, extra: Readonly<Record<string, string>> = {}): Response {
  const headers: Record<string, string> = { ...extra };
  if (e.status === 401 && e.code.startsWith('PGRST3')) headers['www-authenticate'] = `Bearer error="invalid_token", error_description="${e.message.replaceAll('"', "'")}"`;
  return respond(e.status, JSON.stringify(e.toJSON()), headers);
}

interface ResultRow extends Record<string, unknown> {
  total: number | string | null;
  page_count: number;
  body: string | null;
  inserted?: boolean | null;
}

function stripNullsDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripNullsDeep);
  if (typeof v === 'object' && v !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = stripNullsDeep(x);
    return out;
  }
  return v;
}

/** `[{…}]` (json_agg of one row) → `{…}` without re-parsing. */
const onlyElement = (arrayText: string): string => arrayText.slice(1, -1).trim();

/** Deepest nesting of a JSON body the database is given (ADR 172). */
export const MAX_JSON_DEPTH = 1000;

/**
 * Parses a JSON body. Deeper than MAX_JSON_DEPTH it is refused as invalid: such a value overflowed the stack of
 * PGlite's PostgreSQL, which then failed every later request (and JSON.stringify throws on it long before).
 */
function parseJsonBody(text: string): unknown {
  if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) {
    throw new RestError(400, 'PGRST102', 'Empty or invalid json', `The JSON is nested more than ${MAX_JSON_DEPTH} levels deep`, null);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RestError(400, 'PGRST102', 'Empty or invalid json', null, null);
  }
}

async function readJson(request: Request, empty: unknown): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === '') return empty;
  return parseJsonBody(text);
}

/** A plan response is built by plan.ts; the read itself is negotiated as JSON. */
const PLAN_REPRESENTATION: Representation = { kind: 'json', stripNulls: false, contentType: JSON_TYPE };

/**
 * The total of a read: exact (from the statement), planned (the planner's estimate of the filtered rows, as PostgREST
 * reads "Plan Rows" of EXPLAIN) or estimated (exact up to db-max-rows, beyond it the larger of exact and planned).
 */
async function countOf(
  db: Queryable, ctx: EnvelopeContext, count: Preferences['count'], exact: number | string | null, maxRows: number | null,
  countSource: () => BuiltStatement, searchPath: string,
): Promise<number | null> {
  const total = exact === null ? null : Number(exact);
  if (count === 'planned') return plannedRows(db, ctx, searchPath, countSource());
  if (count === 'estimated' && total !== null && maxRows !== null && total > maxRows) {
    const planned = await plannedRows(db, ctx, searchPath, countSource());
    return planned === null ? total : Math.max(total, planned);
  }
  return total;
}

/**
 * The arguments of POST /rpc/fn by Content-Type, as PostgREST reads them: JSON (the default) by name,
 * application/x-www-form-urlencoded by name, and text/plain, text/xml, application/octet-stream whole (for a
 * function with a single unnamed text / xml / bytea parameter; bytea as its hex input form).
 */
async function readRpcArgs(request: Request): Promise<RpcRequest['args']> {
  const media = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (media === 'application/octet-stream') {
    return { kind: 'raw', media, text: `\\x${Buffer.from(await request.arrayBuffer()).toString('hex')}` };
  }
  const text = await request.text();
  if (media === 'text/plain' || media === 'text/xml') return { kind: 'raw', media, text };
  if (media === 'application/x-www-form-urlencoded') return { kind: 'params', params: [...new URLSearchParams(text)], post: true };
  if (text.trim() === '') return { kind: 'json', body: {} };
  return { kind: 'json', body: parseJsonBody(text), text };
}

export async function handleRest(request: Request, deps: RestDeps): Promise<Response> {
  let authenticated = false;
  const extra = deps.responseHeaders ?? {};
  const reply = (status: number, body: string | null, headers: Record<string, string> = {}): Response =>
    respond(status, body, { ...extra, ...headers });
  try {
    const url = new URL(request.url);
    const base = deps.basePath ?? '/rest/v1';
    const method = request.method.toUpperCase();
    const rest = url.pathname.startsWith(base) ? url.pathname.slice(base.length).replace(/^\/+/, '') : null;
    if (rest === null || rest === '' || (rest.includes('/') && !rest.startsWith('rpc/'))) {
      throw new RestError(404, 'PGRST125', 'Invalid path specified in request URL', null, null);
    }
    const cache = deps.cache();
    const schema = requestSchema(method, request.headers, deps.exposedSchemas ?? cache.schemas);
    const auth = await deps.authenticate(request);
    authenticated = auth.role !== 'anon';
    const prefs = parsePrefer(request.headers.get('prefer'));
    const plan = planMediaType(request.headers.get('accept'));
    const rep = plan === null ? negotiateRepresentation(request.headers.get('accept')) : PLAN_REPRESENTATION;
    const tableRead = !rest.startsWith('rpc/') && (method === 'GET' || method === 'HEAD');
    // plans only when db-plan-enabled; CSV and plans only for table reads (a plan of a write would run it)
    if ((plan !== null && deps.planEnabled !== true) || ((plan !== null || rep.kind === 'csv') && !tableRead)) {
      throw new RestError(406, 'PGRST107', `None of these media types are available: ${request.headers.get('accept') ?? ''}`, null, null);
    }
    const headersJson: Record<string, string> = {};
    request.headers.forEach((v, k) => {
      headersJson[k.toLowerCase()] = v;
    });
    // Prefer: tx=commit|rollback, honoured as db-tx-end allows (PostgREST's default 'commit' ignores it)
    const tx = transactionEnd(deps.txEnd?.() ?? 'commit', prefs.tx);
    const ctx: EnvelopeContext = { role: auth.role, claims: auth.claims, readOnly: true, method, path: url.pathname, headers: headersJson, rollback: tx.rollback };
    const maxRows = deps.maxRows === undefined ? 1000 : deps.maxRows;
    const maxAffected = prefs.handling === 'strict' ? prefs.maxAffected : null;
    const single = rep.kind === 'object';
    // Accept: application/vnd.pgrst.(array|object)+json;nulls=stripped
    const shape = (body: string | null): string | null => (body === null || !rep.stripNulls ? body : JSON.stringify(stripNullsDeep(JSON.parse(body))));
    const applied = (p: Partial<Preferences>): Record<string, string> => {
      const v = preferenceApplied({ ...p, tx: tx.applied });
      return v === null ? {} : { 'preference-applied': v };
    };

    if (rest.startsWith('rpc/')) {
      const fn = decodePathComponent(rest.slice(4));
      const get = method === 'GET' || method === 'HEAD';
      if (!get && method !== 'POST') throw new RestError(405, 'PGRST117', `Unsupported HTTP method: ${method}`, null, null);
      const query = parseQuery(url.search, { rpc: get });
      const range = effectiveRange(parseRangeHeader(request.headers.get('range'), request.headers.get('range-unit')), query.limit, query.offset, maxRows);
      const stmt = buildRpc({
        cache, schema, fn, query, offset: range.offset, limit: range.limit, count: prefs.count !== null, paramStyle: 'array',
        args: get ? { kind: 'params', params: query.params } : await readRpcArgs(request),
      });
      const row = await runEnveloped<ResultRow>(deps.db, { ...ctx, readOnly: get || stmt.fn.volatility !== 'volatile', maxAffected }, stmt);
      // every rpc answer carries Content-Range (a scalar or void result is one row: 0-0/1 with a count)
      const total = row === null || row.total === null ? null : Number(row.total);
      const pageCount = row?.page_count ?? 0;
      const headers: Record<string, string> = { 'content-range': contentRange(range.offset, pageCount, total), ...applied({ count: prefs.count }) };
      if (!row || stmt.returns === 'void') return reply(204, null, headers);
      const body = method === 'HEAD' ? null : (row.body ?? 'null');
      if (stmt.returns !== 'set') return reply(200, shape(body), headers);
      const status = readStatus(range.offset, row.page_count, total);
      if (single) {
        if (row.page_count !== 1) throw singleObjectError(row.page_count);
        return reply(200, shape(body === null ? null : onlyElement(body)), headers);
      }
      return reply(status, shape(body), headers);
    }

    const table = decodePathComponent(rest);
    const query = parseQuery(url.search);
    if (method === 'GET' || method === 'HEAD') {
      const range = effectiveRange(parseRangeHeader(request.headers.get('range'), request.headers.get('range-unit')), query.limit, query.offset, maxRows);
      const read = { cache, schema, table, query, offset: range.offset, limit: range.limit, paramStyle: 'array' as const };
      const stmt = buildRead({ ...read, count: prefs.count !== null && prefs.count !== 'planned', format: rep.kind === 'csv' ? 'csv' : 'json' });
      if (plan !== null) {
        const text = await runExplain(deps.db, ctx, requestSearchPath(schema), explainStatement(plan, stmt));
        return reply(200, method === 'HEAD' ? null : text, { 'content-type': planContentType(plan) });
      }
      const row = await runEnveloped<ResultRow>(deps.db, ctx, stmt);
      if (!row) throw new Error('the read statement returned no row');
      const total = await countOf(deps.db, ctx, prefs.count, row.total, maxRows, () => buildCountSource({ ...read, count: false }), requestSearchPath(schema));
      if (rep.kind === 'csv') {
        const csvHeaders = { 'content-type': rep.contentType, 'content-range': contentRange(range.offset, row.page_count, total), ...applied({ count: prefs.count }) };
        return reply(readStatus(range.offset, row.page_count, total), method === 'HEAD' ? null : row.body, csvHeaders);
      }
      const status = readStatus(range.offset, row.page_count, total);
      const headers: Record<string, string> = { 'content-range': contentRange(range.offset, row.page_count, total), ...applied({ count: prefs.count }) };
      const body = method === 'HEAD' ? null : row.body;
      if (single) {
        if (row.page_count !== 1) throw singleObjectError(row.page_count);
        return reply(200, shape(body === null ? null : onlyElement(body)), headers);
      }
      return reply(status, shape(body), headers);
    }

    const representation = prefs.return === 'representation';
    const write = { cache, schema, table, query, prefs, paramStyle: 'array' as const };
    // Accept: vnd.pgrst.object+json: exactly one affected row, whatever the return preference (PostgREST's
    // failNotSingular reads the media type only), else PGRST116 and the write is undone
    const wctx: EnvelopeContext = { ...ctx, readOnly: false, expectSingle: single, maxAffected };
    let stmt;
    if (method === 'POST') stmt = buildInsert({ ...write, body: await readJson(request, undefined) });
    else if (method === 'PATCH') stmt = buildUpdate({ ...write, body: await readJson(request, undefined) });
    else if (method === 'DELETE') stmt = buildDelete(write);
    else throw new RestError(405, 'PGRST117', `Unsupported HTTP method: ${method}`, null, null);
    const row = await runEnveloped<ResultRow>(deps.db, wctx, stmt);
    if (!row) throw new Error('the write statement returned no row');
    const n = row.page_count;
    const total = prefs.count !== null ? String(n) : '*';
    const headers: Record<string, string> = {
      ...applied({ resolution: prefs.resolution, missing: prefs.missing, return: prefs.return, count: prefs.count, handling: prefs.handling, maxAffected }),
      'content-range': method === 'PATCH' && n > 0 ? `0-${n - 1}/${total}` : `*/${total}`,
    };
    const body = representation && row.body !== null ? shape(single ? onlyElement(row.body) : row.body) : null;
    if (method === 'POST') {
      const status = prefs.resolution === 'merge-duplicates' && row.inserted === false ? 200 : 201;
      return reply(status, body, headers);
    }
    return representation ? reply(200, body, headers) : reply(204, null, headers);
  } catch (e) {
    if (e instanceof RestError) return errorResponse(e, extra);
    // The database could not be reached or the connection broke (not an error PostgreSQL sent): PostgREST's 503
    // PGRST000 with the driver's words as details (supabase-js retries a GET on a 503).
    if (isConnectionFailure(e) && !('severity' in e)) {
      return reply(503, JSON.stringify({ code: 'PGRST000', message: 'Database connection error. Retrying the connection.', details: e.message, hint: null }));
    }
    // Every pooled connection stayed busy for the connect timeout: PostgREST's answer to a pool acquisition timeout.
    if (isPoolTimeout(e))
      return reply(504, JSON.stringify({ code: 'PGRST003', message: 'Timed out acquiring connection from connection pool.', details: null, hint: null }));
    if (isPgError(e)) {
      const pg = e as Error & { code: string; detail?: string };
      if (pg.code === 'PT406') return errorResponse(new RestError(406, 'PGRST116', pg.message, pg.detail ?? null, null), extra);
      if (pg.code === 'PT400' && pg.message.startsWith('Query result exceeds max-affected')) {
        return errorResponse(new RestError(400, 'PGRST124', pg.message, pg.detail ?? null, null), extra);
      }
      return errorResponse(restErrorFromPg(pg, authenticated), extra);
    }
    return reply(500, JSON.stringify({ code: 'PGRST000', message: e instanceof Error ? e.message : String(e), details: null, hint: null }));
  }
}
