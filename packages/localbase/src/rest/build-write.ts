/**
 * Builds the one statement for POST (insert / upsert), PATCH (update) and DELETE, as PostgREST shapes them:
 *
 *   WITH pgrst_source AS (<INSERT|UPDATE|DELETE …> RETURNING t0.*)
 *   SELECT NULL AS total, <affected rows> AS page_count, <representation or NULL> AS body, <any row inserted> AS inserted
 *
 * The JSON body travels as ONE bound parameter and PostgreSQL converts it (json_populate_record), so types, arrays
 * and JSON columns behave as in PostgREST. Column names come from the schema cache (unknown → PGRST204); filters and
 * the representation's select list (with embeds) reuse the read builder.
 */
import { ReadBuilder, pathKey, type BuiltStatement, type Level } from './build-read.ts';
import { RestError } from './errors.ts';
import type { ParsedQuery, Preferences } from './parse.ts';
import { findTable, type SchemaCache, type Table } from './schema-cache.ts';
import { quoteIdent, quoteQualified } from './sql.ts';

export interface WriteRequest {
  cache: SchemaCache;
  schema: string;
  table: string;
  query: ParsedQuery;
  prefs: Pick<Preferences, 'return' | 'resolution' | 'missing'>;
  paramStyle?: 'positional' | 'array';
}

type JsonObject = Record<string, unknown>;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

function invalidBody(message: string): RestError {
  return new RestError(400, 'PGRST102', message, null, null);
}

function unknownColumn(table: Table, column: string): RestError {
  return new RestError(400, 'PGRST204', `Could not find the '${column}' column of '${table.name}' in the schema cache`, null, null);
}

function setup(req: WriteRequest): { b: ReadBuilder; table: Table; level: Level } {
  const table = findTable(req.cache, req.schema, req.table);
  if (!table) throw new RestError(404, 'PGRST205', `Could not find the table '${req.schema}.${req.table}' in the schema cache`, null, null);
  const b = new ReadBuilder({ cache: req.cache, schema: req.schema, table: req.table, query: req.query, offset: 0, limit: null, count: false, paramStyle: req.paramStyle });
  if (req.query.limit !== null || req.query.offset !== null) {
    throw new RestError(400, 'PGRST109', 'limit and offset are not supported on inserts, updates and deletes by localbase', null, null);
  }
  return { b, table, level: { table, alias: b.nextAlias(), path: [] } };
}

/** The final SELECT over the data-modifying CTE. */
function finish(b: ReadBuilder, req: WriteRequest, level: Level, dml: string, insertedFlag: boolean): BuiltStatement {
  let body = 'NULL::text';
  if (req.prefs.return === 'representation') {
    const embeds = new Map();
    const innerExists: string[] = [];
    const select = b.selectList(level, req.query.select, innerExists, embeds);
    const cols = select.length > 0 ? select.join(', ') : 'NULL AS "_"';
    const agg = select.length > 0 ? 'json_agg(_page)' : `json_agg('{}'::json)`;
    const order = b.orderOf(level, embeds);
    body = `(SELECT coalesce(${agg}, '[]')::text FROM (SELECT ${cols} FROM pgrst_source ${level.alias}${b.lateralSql(level)}${b.groupByOf(level, req.query.select)}${order}) _page)`;
  }
  // filters/orders on embedded resources must name embeds of the representation
  b.checkPaths(req.query.filters.filter((f) => f.path.length > 0).map((f) => f.path));
  b.checkPaths(req.query.logic.filter((l) => l.path.length > 0).map((l) => l.path));
  b.checkPaths(req.query.order.map((o) => o.path));
  b.checkPaths(req.query.embeddedRanges.map((r) => r.path));
  const inserted = insertedFlag ? `(SELECT coalesce(bool_or("_pgrst_inserted"), false) FROM pgrst_source)` : 'NULL::boolean';
  return {
    sql: `WITH pgrst_source AS (${dml}) SELECT NULL::bigint AS total, (SELECT count(*) FROM pgrst_source)::int AS page_count, ${body} AS body, ${inserted} AS inserted`,
    params: b.params,
  };
}

function rootWhere(b: ReadBuilder, level: Level): string {
  const conds = b.whereOf(level, []);
  return conds.length > 0 ? ` WHERE ${conds.join(' AND ')}` : '';
}

/** POST: insert one object or an array of objects; upsert with Prefer resolution=… (+ on_conflict). */
export function buildInsert(req: WriteRequest & { body: unknown }): BuiltStatement {
  const { b, table, level } = setup(req);
  const rows: unknown[] = Array.isArray(req.body) ? req.body : [req.body];
  if (!rows.every(isObject)) throw invalidBody('Empty or invalid json');
  const objects = rows as JsonObject[];
  let columns: string[];
  if (req.query.columns !== null) {
    columns = req.query.columns;
  } else {
    columns = objects[0] ? Object.keys(objects[0]) : [];
    const key = [...columns].sort().join('\u0000');
    if (objects.some((o) => Object.keys(o).sort().join('\u0000') !== key)) throw invalidBody('All object keys must match');
  }
  for (const c of columns) if (!table.columnMap.has(c)) throw unknownColumn(table, c);
  columns = [...new Set(columns)];

  const target = quoteQualified(table.schema, table.name);
  const bodyParam = b.param(JSON.stringify(objects), 'json');
  const exprs = columns.map((c) => `_r.${quoteIdent(c)}`);
  // missing=default, as PostgREST: every row is read from {column: DEFAULT, …} || the row's object, so each row
  // evaluates every default of the inserted columns (an identity / serial sequence advances once per row and column,
  // also for rows that give the value)
  const defaults: string[] = [];
  if (req.prefs.missing === 'default') {
    for (const c of columns) {
      const col = table.columnMap.get(c)!;
      let fallback = col.defaultExpr;
      if (fallback === null && col.identity !== null) fallback = `nextval(pg_get_serial_sequence(${b.param(target, 'text')}, ${b.param(c, 'text')}))`;
      if (fallback !== null) defaults.push(`${b.param(c, 'text')}, ${fallback}`);
    }
  }
  const colList = columns.length > 0 ? ` (${columns.map(quoteIdent).join(', ')})` : '';
  let conflict = '';
  if (req.prefs.resolution) {
    const keys = req.query.onConflict ?? table.primaryKey;
    for (const k of keys) if (!table.columnMap.has(k)) throw unknownColumn(table, k);
    // merge-duplicates sets every given column, the conflict key included (PostgREST does), so a body holding only
    // the key still updates (and returns) the existing row
    const updatable = columns;
    if (req.prefs.resolution === 'ignore-duplicates' || updatable.length === 0) {
      conflict = keys.length > 0 ? ` ON CONFLICT (${keys.map(quoteIdent).join(', ')}) DO NOTHING` : ' ON CONFLICT DO NOTHING';
    } else {
      if (keys.length === 0) {
        throw new RestError(400, '42P10', 'there is no unique or exclusion constraint matching the ON CONFLICT specification', null, null);
      }
      conflict = ` ON CONFLICT (${keys.map(quoteIdent).join(', ')}) DO UPDATE SET ${updatable.map((c) => `${quoteIdent(c)} = EXCLUDED.${quoteIdent(c)}`).join(', ')}`;
    }
  }
  const source =
    defaults.length > 0
      ? `FROM json_array_elements(${bodyParam}) _j(obj), jsonb_populate_record(NULL::${target}, jsonb_build_object(${defaults.join(', ')}) || _j.obj::jsonb) _r`
      : `FROM json_array_elements(${bodyParam}) _j(obj), json_populate_record(NULL::${target}, _j.obj) _r`;
  const values = columns.length > 0 ? `SELECT ${exprs.join(', ')} ${source}` : `SELECT ${source}`;
  const returning = `RETURNING ${level.alias}.*, (${level.alias}.xmax = 0) AS "_pgrst_inserted"`;
  const dml = `INSERT INTO ${target} AS ${level.alias}${colList} ${values}${conflict} ${returning}`;
  return finish(b, req, level, dml, true);
}

/** PATCH: update the rows matched by the root filters with the body's columns. */
export function buildUpdate(req: WriteRequest & { body: unknown }): BuiltStatement {
  const { b, table, level } = setup(req);
  if (!isObject(req.body)) throw invalidBody('Empty or invalid json');
  const columns = req.query.columns ?? Object.keys(req.body);
  for (const c of columns) if (!table.columnMap.has(c)) throw unknownColumn(table, c);
  const target = quoteQualified(table.schema, table.name);
  if (columns.length === 0) {
    // nothing to set: PostgREST answers as if no row matched
    return finish(b, req, level, `SELECT ${level.alias}.* FROM ${target} ${level.alias} WHERE false`, false);
  }
  const bodyParam = b.param(JSON.stringify(req.body), 'json');
  const sets = [...new Set(columns)].map((c) => `${quoteIdent(c)} = _r.${quoteIdent(c)}`).join(', ');
  const where = rootWhere(b, level);
  const dml = `UPDATE ${target} AS ${level.alias} SET ${sets} FROM json_populate_record(NULL::${target}, ${bodyParam}) _r${where} RETURNING ${level.alias}.*`;
  return finish(b, req, level, dml, false);
}

/** DELETE: delete the rows matched by the root filters. */
export function buildDelete(req: WriteRequest): BuiltStatement {
  const { b, table, level } = setup(req);
  const where = rootWhere(b, level);
  const dml = `DELETE FROM ${quoteQualified(table.schema, table.name)} AS ${level.alias}${where} RETURNING ${level.alias}.*`;
  return finish(b, req, level, dml, false);
}

/** Root filters exist (PostgREST answers unfiltered PATCH/DELETE too; Supabase's safeupdate refuses them). */
export const hasRootFilter = (q: ParsedQuery): boolean =>
  q.filters.some((f) => pathKey(f.path) === pathKey([])) || q.logic.some((l) => l.path.length === 0);
