/**
 * Builds the statement for `POST /rest/v1/rpc/fn` (JSON object of named arguments) and `GET|HEAD /rest/v1/rpc/fn?a=1`
 * (arguments as query parameters; parse them with parseQuery(qs, { rpc: true }) → `params`).
 *
 * The function is chosen among its overloads by argument names as PostgREST does (none → 404 PGRST202, several →
 * 300 PGRST203) and called with named notation; argument values are bound parameters cast to the argument types.
 * Results: void → body NULL; scalar → the JSON value; a single composite → an object; SETOF / TABLE → an array to
 * which select, filters, order, limit/offset and count apply (embeds too when the function returns a table's rows).
 */
import { ReadBuilder, type BuiltStatement, type Level } from './build-read.ts';
import { RestError } from './errors.ts';
import type { ParsedQuery } from './parse.ts';
import { findFunctions, findTable, type Column, type DbFunction, type FunctionArg, type SchemaCache, type Table } from './schema-cache.ts';
import { quoteIdent, quoteQualified } from './sql.ts';

export interface RpcRequest {
  cache: SchemaCache;
  schema: string;
  fn: string;
  /** POST: the parsed JSON body (must be an object); GET/HEAD: the non-filter query parameters. */
  args: { kind: 'json'; body: unknown } | { kind: 'params'; params: Array<[string, string]> };
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

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The only parameter of a function that takes exactly one, unnamed (it receives the whole JSON body). */
function soleUnnamedArg(f: DbFunction): FunctionArg | undefined {
  const only = f.inArgs.length === 1 ? f.inArgs[0] : undefined;
  return only?.name === '' ? only : undefined;
}

function signature(f: DbFunction): string {
  return `${f.schema}.${f.name}(${f.inArgs.map((a) => `${a.name} => ${a.type}`).join(', ')})`;
}

/** The overload PostgREST would call for these argument names. */
export function chooseFunction(cache: SchemaCache, schema: string, name: string, argNames: readonly string[], jsonBody: boolean): DbFunction {
  const overloads = findFunctions(cache, schema, name);
  const given = new Set(argNames);
  const byName = overloads.filter(
    (f) =>
      f.inArgs.every((a) => a.name !== '' && (a.hasDefault || given.has(a.name))) && argNames.every((n) => f.inArgs.some((a) => a.name === n)),
  );
  // a single unnamed json/jsonb parameter receives the whole body
  const single = jsonBody
    ? overloads.filter((f) => soleUnnamedArg(f)?.type === 'json' || soleUnnamedArg(f)?.type === 'jsonb')
    : [];
  const candidates = byName.length > 0 ? byName : single;
  if (candidates.length === 1) return candidates[0]!;
  if (candidates.length === 0) {
    const list = [...argNames].sort().join(', ');
    throw new RestError(
      404,
      'PGRST202',
      `Could not find the function ${schema}.${name}(${list}) in the schema cache`,
      `Searched for the function ${schema}.${name}${list === '' ? ' without parameters' : ` with parameters ${list}`} or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.`,
      null,
    );
  }
  throw new RestError(
    300,
    'PGRST203',
    `Could not choose the best candidate function between: ${candidates.map(signature).sort().join(', ')}`,
    null,
    'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
  );
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
  let argNames: string[];
  if (req.args.kind === 'json') {
    const body = req.args.body ?? {};
    if (!isObject(body)) throw new RestError(400, 'PGRST102', 'Empty or invalid json', null, null);
    argNames = Object.keys(body);
  } else {
    argNames = req.args.params.map(([k]) => k);
  }
  const fn = chooseFunction(cache, schema, req.fn, argNames, req.args.kind === 'json');

  const relation = fn.returnRelation ? findTable(cache, fn.returnRelation.schema, fn.returnRelation.name) : undefined;
  const outTable = resultTable(fn);
  const table: Table | null = relation ?? (outTable.columns.length > 0 ? outTable : null);
  const b = new ReadBuilder({
    cache, schema, table: table?.name ?? fn.name, query: req.query, offset: req.offset, limit: req.limit, count: req.count, paramStyle: req.paramStyle,
  });

  // arguments in named notation
  const args: string[] = [];
  if (req.args.kind === 'json') {
    const body = (req.args.body ?? {}) as Record<string, unknown>;
    const singleUnnamed = soleUnnamedArg(fn);
    if (singleUnnamed) {
      args.push(b.param(JSON.stringify(body), singleUnnamed.type));
    } else if (argNames.length > 0) {
      const bodyParam = b.param(JSON.stringify(body), 'json');
      for (const a of fn.inArgs) {
        if (!(a.name in body)) continue;
        const key = b.param(a.name, 'text');
        const type = a.type;
        let value: string;
        if (type === 'json' || type === 'jsonb') value = `(${bodyParam} -> ${key})::${type}`;
        else if (type.endsWith('[]')) {
          const v = `(${bodyParam} -> ${key})`;
          value = `CASE WHEN json_typeof(${v}) = 'array' THEN ARRAY(SELECT json_array_elements_text(${v}))::${type} ELSE (${bodyParam} ->> ${key})::${type} END`;
        } else value = `(${bodyParam} ->> ${key})::${type}`;
        args.push(`${a.mode === 'variadic' ? 'VARIADIC ' : ''}${quoteIdent(a.name)} => ${value}`);
      }
    }
  } else {
    for (const [k, v] of req.args.params) {
      const a = fn.inArgs.find((x) => x.name === k)!;
      args.push(`${a.mode === 'variadic' ? 'VARIADIC ' : ''}${quoteIdent(k)} => ${b.param(v, a.type)}`);
    }
  }
  const call = `${quoteQualified(fn.schema, fn.name)}(${args.join(', ')})`;

  if (fn.returnsVoid) {
    return { fn, returns: 'void', params: b.params, sql: `SELECT NULL::bigint AS total, count(*)::int AS page_count, NULL::text AS body FROM (SELECT ${call}) _c` };
  }
  if (table === null) {
    if (!fn.returnsSet) {
      return { fn, returns: 'scalar', params: b.params, sql: `SELECT NULL::bigint AS total, 1 AS page_count, to_json(${call})::text AS body` };
    }
    // SETOF a scalar type: an array of values; only limit/offset apply. The call runs once (materialized CTE).
    const lim = b.rangeOf({ table: outTable, alias: 't0', path: [] });
    return {
      fn, returns: 'set', params: b.params,
      sql: `WITH _fn AS MATERIALIZED (SELECT _x AS v FROM ${call} _x) SELECT ${req.count ? '(SELECT count(*) FROM _fn)' : 'NULL::bigint'} AS total, count(*)::int AS page_count, coalesce(json_agg(_s.v), '[]')::text AS body FROM (SELECT v FROM _fn${lim}) _s`,
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
  const cte = `WITH _fn AS MATERIALIZED (SELECT * FROM ${call} _x) `;
  const from = `FROM _fn ${level.alias}`;
  const cols = select.length > 0 ? select.join(', ') : 'NULL AS "_"';
  if (!fn.returnsSet) {
    return {
      fn, returns: 'object', params: b.params,
      sql: `${cte}SELECT NULL::bigint AS total, count(*)::int AS page_count, (array_agg(row_to_json(_page)))[1]::text AS body FROM (SELECT ${cols} ${from}${whereSql}) _page`,
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
