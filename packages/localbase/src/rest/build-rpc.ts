/**
 * Builds the statement for `POST /rest/v1/rpc/fn` (JSON object of named arguments) and `GET|HEAD /rest/v1/rpc/fn?a=1`
 * (arguments as query parameters; parse them with parseQuery(qs, { rpc: true }) → `params`).
 *
 * The function is chosen among its overloads by argument names as PostgREST does (none → 404 PGRST202, several →
 * 300 PGRST203) and called with named notation; argument values are bound parameters cast to the argument types.
 * Results: void → body NULL; scalar → the JSON value; a single composite → an object; SETOF / TABLE → an array to
 * which select, filters, order, limit/offset and count apply (embeds too when the function returns a table's rows).
 */
import { pgArrayLiteral, ReadBuilder, type BuiltStatement, type Level } from './build-read.ts';
import { RestError } from './errors.ts';
import type { ParsedQuery } from './parse.ts';
import { findFunctions, findTable, type Column, type DbFunction, type FunctionArg, type SchemaCache, type Table } from './schema-cache.ts';
import { closestMatch } from './fuzzy.ts';
import { quoteIdent, quoteQualified } from './sql.ts';

export interface RpcRequest {
  cache: SchemaCache;
  schema: string;
  fn: string;
  /**
   * POST: the parsed JSON body (must be an object) and, when known, its raw text (a single unnamed json / jsonb /
   * text parameter receives the body as sent); `raw`: a text/plain, text/xml or application/octet-stream body for a
   * single unnamed text / xml / bytea parameter; GET/HEAD (and form bodies): the non-filter parameters.
   */
  args:
    | { kind: 'json'; body: unknown; text?: string }
    | { kind: 'raw'; media: RawMedia; text: string }
    | { kind: 'params'; params: Array<[string, string]>; post?: boolean };
  /** select / filters / order / ranges for set-returning functions. */
  query: ParsedQuery;
  offset: number;
  limit: number | null;
  count: boolean;
  paramStyle?: 'positional' | 'array';
}

export interface BuiltRpc extends BuiltStatement {
  fn: DbFunction;
  /** How to answer: void → 204; scalar → the JSON value; object; set → array (Content-Range applies). */
  returns: 'void' | 'scalar' | 'object' | 'set';
}

/** Media types whose body goes whole to a function's single unnamed parameter of the matching type. */
export type RawMedia = 'text/plain' | 'text/xml' | 'application/octet-stream';
const RAW_PARAM_TYPE: Record<RawMedia | 'application/json', readonly string[]> = {
  'application/json': ['json', 'jsonb'],
  'text/plain': ['text'],
  'text/xml': ['xml'],
  'application/octet-stream': ['bytea'],
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The only parameter of a function that takes exactly one, unnamed (it receives the whole request body). */
function soleUnnamedArg(f: DbFunction): FunctionArg | undefined {
  const only = f.inArgs.length === 1 ? f.inArgs[0] : undefined;
  return only?.name === '' ? only : undefined;
}

/**
 * Whether the API can call the function at all (PostgREST leaves the others out of its schema cache): every input
 * parameter named, or exactly one unnamed and the first parameter of type bytea, json, jsonb, text or xml. Computed
 * fields like `f(tbl)` are therefore not rpc endpoints.
 */
export function isCallable(f: DbFunction): boolean {
  if (f.returnType === 'trigger') return false;
  const unnamed = f.inArgs.filter((a) => a.name === '').length;
  if (unnamed === 0) return true;
  return unnamed === 1 && ['bytea', 'json', 'jsonb', 'text', 'xml'].includes(f.inArgs[0]!.type);
}

/** PostgREST's order of overloads: fewer parameters first, then by the parameters' names and types. */
function compareOverloads(a: DbFunction, b: DbFunction): number {
  if (a.inArgs.length !== b.inArgs.length) return a.inArgs.length - b.inArgs.length;
  for (let i = 0; i < a.inArgs.length; i++) {
    const x = a.inArgs[i]!;
    const y = b.inArgs[i]!;
    if (x.name !== y.name) return x.name < y.name ? -1 : 1;
    if (x.type !== y.type) return x.type < y.type ? -1 : 1;
  }
  return 0;
}

function signature(f: DbFunction): string {
  return `${f.schema}.${f.name}(${f.inArgs.map((a) => `${a.name} => ${a.type}`).join(', ')})`;
}

/** How the arguments arrive: their names, whether by POST, and the body's media type. */
export interface CallShape {
  argNames: readonly string[];
  post: boolean;
  media: RawMedia | 'application/json' | 'application/x-www-form-urlencoded';
}

/** PostgREST's PGRST202 body (message, details, and the "Perhaps you meant …" hint). */
function noFunction(cache: SchemaCache, schema: string, name: string, shape: CallShape, overloads: DbFunction[]): RestError {
  const keys = [...new Set(shape.argNames)].sort();
  const func = `${schema}.${name}`;
  const onlySingle = shape.post && shape.media !== 'application/json' && shape.media !== 'application/x-www-form-urlencoded';
  const fmt = (p: string): string => (keys.length === 0 ? ' without parameters' : p);
  const message = `Could not find the function ${func}${onlySingle ? '' : fmt(`(${keys.join(', ')})`)} in the schema cache`;
  const withParams = fmt(` with parameter${keys.length > 1 ? 's ' : ' '}${keys.join(', ')}`);
  let searched: string;
  if (shape.post && shape.media === 'text/plain') searched = ' with a single unnamed text parameter';
  else if (shape.post && shape.media === 'text/xml') searched = ' with a single unnamed xml parameter';
  else if (shape.post && shape.media === 'application/octet-stream') searched = ' with a single unnamed bytea parameter';
  else if (shape.post && shape.media === 'application/json') searched = `${withParams} or with a single unnamed json/jsonb parameter`;
  else searched = withParams;
  let hint: string | null = null;
  if (!onlySingle) {
    if (overloads.length === 0) {
      const names = [...cache.functions.values()].flatMap((list) => list.filter((f) => f.schema === schema && isCallable(f)).slice(0, 1).map((f) => f.name));
      const best = closestMatch(names, name, 0.75);
      if (best !== null) hint = `Perhaps you meant to call the function ${schema}.${best}`;
    } else {
      const asText = (names: readonly string[]): string => `(${[...names].sort().join(', ')})`;
      const best = closestMatch(overloads.map((f) => asText(f.inArgs.map((a) => a.name))), asText(keys), 0.33);
      if (best !== null) hint = `Perhaps you meant to call the function ${schema}.${name}${best}`;
    }
  }
  return new RestError(404, 'PGRST202', message, `Searched for the function ${func}${searched}, but no matches were found in the schema cache.`, hint);
}

/**
 * The overload PostgREST would call for these argument names: required parameters must all be given, optional ones
 * may be, nothing else; a function without parameters only takes no arguments. When no overload matches by name, a
 * POST falls back to a function whose single unnamed parameter takes the whole body (json/jsonb for JSON, text for
 * text/plain, xml for text/xml, bytea for application/octet-stream). None → 404 PGRST202, several → 300 PGRST203.
 */
export function chooseFunction(cache: SchemaCache, schema: string, name: string, shape: CallShape): DbFunction {
  const overloads = findFunctions(cache, schema, name).filter(isCallable).sort(compareOverloads);
  const given = new Set(shape.argNames);
  const rawBody = shape.post && (shape.media === 'text/plain' || shape.media === 'text/xml' || shape.media === 'application/octet-stream');
  const matches = (f: DbFunction): boolean => {
    if (f.inArgs.length === 0) return given.size === 0 && !rawBody;
    const required = f.inArgs.filter((a) => !a.hasDefault).map((a) => a.name);
    const optional = new Set(f.inArgs.filter((a) => a.hasDefault).map((a) => a.name));
    const rest = [...given].filter((k) => !optional.has(k));
    return rest.length === required.length && required.every((r) => given.has(r));
  };
  const wholeBody = (f: DbFunction): boolean => {
    const only = soleUnnamedArg(f);
    return shape.post && only !== undefined && shape.media !== 'application/x-www-form-urlencoded' && RAW_PARAM_TYPE[shape.media].includes(only.type);
  };
  const byName = overloads.filter(matches);
  const fallback = overloads.filter((f) => !matches(f) && wholeBody(f));
  const candidates = byName.length > 0 ? byName : fallback;
  if (candidates.length === 1) return candidates[0]!;
  if (candidates.length === 0) throw noFunction(cache, schema, name, shape, overloads);
  throw new RestError(
    300,
    'PGRST203',
    `Could not choose the best candidate function between: ${candidates.map(signature).join(', ')}`,
    null,
    'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
  );
}

/** The type an argument is read as: char/bit without a length would truncate to one, so they read as varying. */
function argType(a: FunctionArg): string {
  const m = /^(character|bit)(\[\])?$/.exec(a.type);
  return m ? `${m[1]} varying${m[2] ?? ''}` : a.type;
}

/** A table-like view of a function's result columns (RETURNS TABLE / OUT parameters). */
function resultTable(f: DbFunction): Table {
  const columns: Column[] = f.args
    .filter((a) => a.mode === 'out' || a.mode === 'inout' || a.mode === 'table')
    .map((a, i) => ({
      name: a.name, position: i + 1, dataType: a.type, udtName: a.type, typeSchema: 'pg_catalog', nullable: true, hasDefault: false,
      defaultExpr: null, identity: null, generated: false, elementType: null, baseType: null, enumValues: null,
    }));
  return {
    schema: f.schema, name: f.name, kind: 'view', insertable: false, updatable: false, deletable: false, comment: null,
    columns, columnMap: new Map(columns.map((c) => [c.name, c])), primaryKey: [], uniqueKeys: [], foreignKeys: [], referencedBy: [],
  };
}

export function buildRpc(req: RpcRequest): BuiltRpc {
  const { cache, schema } = req;
  let shape: CallShape;
  if (req.args.kind === 'json') {
    const body = req.args.body ?? {};
    if (!isObject(body)) throw new RestError(400, 'PGRST102', 'Empty or invalid json', null, null);
    shape = { argNames: Object.keys(body), post: true, media: 'application/json' };
  } else if (req.args.kind === 'raw') {
    shape = { argNames: [], post: true, media: req.args.media };
  } else {
    shape = { argNames: req.args.params.map(([k]) => k), post: req.args.post === true, media: 'application/x-www-form-urlencoded' };
  }
  const fn = chooseFunction(cache, schema, req.fn, shape);

  const relation = fn.returnRelation ? findTable(cache, fn.returnRelation.schema, fn.returnRelation.name) : undefined;
  const outTable = resultTable(fn);
  const table: Table | null = relation ?? (outTable.columns.length > 0 ? outTable : null);
  const b = new ReadBuilder({
    cache, schema, table: table?.name ?? fn.name, query: req.query, offset: req.offset, limit: req.limit, count: req.count, paramStyle: req.paramStyle,
  });

  // Arguments in named notation. A JSON body is read as PostgREST does, with json_to_record over the given
  // parameters (so an object fills a row-type parameter, an array an array parameter, a string any type's literal);
  // the row it yields is joined before the call (`argsFrom`).
  const args: string[] = [];
  let argsFrom: string | null = null;
  const singleUnnamed = soleUnnamedArg(fn);
  if (singleUnnamed) {
    // the whole body (as sent) is the one argument; for GET the parameters as a JSON object
    const a = req.args;
    const whole = a.kind === 'params' ? JSON.stringify(Object.fromEntries(a.params)) : a.kind === 'raw' ? a.text : (a.text ?? JSON.stringify(a.body ?? {}));
    args.push(b.param(whole, argType(singleUnnamed)));
  } else if (req.args.kind === 'json') {
    const body = (req.args.body ?? {}) as Record<string, unknown>;
    const given = fn.inArgs.filter((a) => Object.hasOwn(body, a.name));
    if (given.length > 0) {
      const columns = given.map((a) => `${quoteIdent(a.name)} ${argType(a)}`).join(', ');
      argsFrom = `json_to_record(${b.param(JSON.stringify(body), 'json')}) AS _a(${columns})`;
      for (const a of given) args.push(`${a.mode === 'variadic' ? 'VARIADIC ' : ''}${quoteIdent(a.name)} => _a.${quoteIdent(a.name)}`);
    }
  } else if (req.args.kind === 'params') {
    // As PostgREST: a repeated parameter gives a VARIADIC one all its values (`?v=1&v=2`, even a single `?v=1`, is
    // the array {1,2}), any other parameter its last value.
    const values = new Map<string, string[]>();
    for (const [k, v] of req.args.params) values.set(k, [...(values.get(k) ?? []), v]);
    for (const [k, vs] of values) {
      const a = fn.inArgs.find((x) => x.name === k)!;
      if (a.mode === 'variadic') args.push(`VARIADIC ${quoteIdent(k)} => ${b.param(pgArrayLiteral(vs), argType(a))}`);
      else args.push(`${quoteIdent(k)} => ${b.param(vs[vs.length - 1]!, argType(a))}`);
    }
  }
  const call = `${quoteQualified(fn.schema, fn.name)}(${args.join(', ')})`;

  // the call as a FROM item (after the arguments' row when there is one)
  const source = argsFrom === null ? `${call} _x` : `${argsFrom} CROSS JOIN LATERAL ${call} _x`;
  const fromArgs = argsFrom === null ? '' : ` FROM ${argsFrom}`;

  if (fn.returnsVoid) {
    return {
      fn, returns: 'void', params: b.params,
      sql: `SELECT ${req.count ? 'count(*)' : 'NULL::bigint'} AS total, count(*)::int AS page_count, NULL::text AS body FROM (SELECT ${call}${fromArgs}) _c`,
    };
  }
  if (table === null) {
    if (!fn.returnsSet) {
      // one value: one row, so Content-Range 0-0/1 with a count (as PostgREST)
      return { fn, returns: 'scalar', params: b.params, sql: `SELECT ${req.count ? '1::bigint' : 'NULL::bigint'} AS total, 1 AS page_count, to_json(${call})::text AS body${fromArgs}` };
    }
    // SETOF a scalar type: an array of values; only limit/offset apply. The call runs once (materialized CTE).
    const lim = b.rangeOf({ table: outTable, alias: 't0', path: [] });
    return {
      fn, returns: 'set', params: b.params,
      sql: `WITH _fn AS MATERIALIZED (SELECT _x AS v FROM ${source}) SELECT ${req.count ? '(SELECT count(*) FROM _fn)' : 'NULL::bigint'} AS total, count(*)::int AS page_count, coalesce(json_agg(_s.v), '[]')::text AS body FROM (SELECT v FROM _fn${lim}) _s`,
    };
  }

  const level: Level = { table, alias: b.nextAlias(), path: [] };
  const embeds = new Map();
  const innerExists: string[] = [];
  const select = b.selectList(level, req.query.select, innerExists, embeds);
  b.checkPaths(req.query.filters.map((f) => f.path));
  b.checkPaths(req.query.logic.map((l) => l.path));
  b.checkPaths(req.query.order.map((o) => o.path));
  b.checkPaths(req.query.embeddedRanges.map((r) => r.path));
  const where = b.whereOf(level, innerExists);
  const whereSql = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
  // the function runs once; filters, order, count and the page read its materialized result
  const cte = `WITH _fn AS MATERIALIZED (SELECT _x.* FROM ${source}) `;
  const from = `FROM _fn ${level.alias}`;
  const cols = select.length > 0 ? select.join(', ') : 'NULL AS "_"';
  if (!fn.returnsSet) {
    return {
      fn, returns: 'object', params: b.params,
      sql: `${cte}SELECT ${req.count ? 'count(*)' : 'NULL::bigint'} AS total, count(*)::int AS page_count, (array_agg(row_to_json(_page)))[1]::text AS body FROM (SELECT ${cols} ${from}${whereSql}) _page`,
    };
  }
  const order = b.orderOf(level, embeds);
  const page = `SELECT ${cols} ${from}${b.lateralSql(level)}${whereSql}${b.groupByOf(level, req.query.select)}${order}${b.rangeOf(level)}`;
  const total = req.count ? `(SELECT count(*) ${from}${whereSql})` : 'NULL::bigint';
  return {
    fn, returns: 'set', params: b.params,
    sql: `${cte}SELECT ${total} AS total, count(*)::int AS page_count, coalesce(json_agg(_page), '[]')::text AS body FROM (${page}) _page`,
  };
}
