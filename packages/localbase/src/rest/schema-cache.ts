/**
 * Schema cache for the /rest/v1 data API: what PostgREST reads from the catalog at startup and after a
 * reload — tables and views with their columns, keys and foreign keys, and functions. One parameterised
 * catalog query (one round trip, one snapshot) returns everything as JSON text; buildSchemaCache() turns it
 * into lookup maps. Every identifier in a request is checked against this cache before it reaches SQL.
 */

import { viewColumnOrigins } from './view-columns.ts';
import { NO_STATEMENT_TIMEOUT } from '../db/migrations.ts';
import { hasDeadlines, type Database, type DeadlineQueryable } from '../db/types.ts';

/** The query interface we need: PGlite's `db.query`, a `pg` Pool/Client and localbase's Database satisfy it. */
export interface Queryable {
  query<T extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
}

export type RelationKind = 'table' | 'partitioned_table' | 'view' | 'materialized_view' | 'foreign_table';

export interface Column {
  name: string;
  position: number;
  /** format_type(): `text`, `bigint`, `timestamp with time zone`, `text[]`, `character varying(20)`, … */
  dataType: string;
  /** pg_type.typname: `text`, `int8`, `timestamptz`, `_text`, or the name of an enum/domain type. */
  udtName: string;
  /** Schema of the column's type (`pg_catalog` for built-ins). */
  typeSchema: string;
  nullable: boolean;
  hasDefault: boolean;
  defaultExpr: string | null;
  identity: 'always' | 'by_default' | null;
  /** GENERATED ALWAYS AS (…) STORED/VIRTUAL: cannot be written. */
  generated: boolean;
  /** For array columns, the element type (format_type), else null. */
  elementType: string | null;
  /** For domain columns, the base type (format_type), else null. */
  baseType: string | null;
  enumValues: string[] | null;
}

export interface ForeignKey {
  name: string;
  schema: string;
  table: string;
  columns: string[];
  refSchema: string;
  refTable: string;
  refColumns: string[];
  /**
   * Only on keys derived through views (`viewForeignKeys`): the table that really holds the constraint and its
   * columns (to tell one-to-one from many-to-one when the holder here is a view).
   */
  holder?: { schema: string; table: string; columns: string[] };
}

export interface Table {
  schema: string;
  name: string;
  kind: RelationKind;
  insertable: boolean;
  updatable: boolean;
  deletable: boolean;
  comment: string | null;
  columns: Column[];
  columnMap: ReadonlyMap<string, Column>;
  /** Empty when there is no primary key (always for views). */
  primaryKey: string[];
  /** Column sets of unique, non-partial, non-expression indexes (the primary key included). */
  uniqueKeys: string[][];
  /** Foreign keys declared on this table. */
  foreignKeys: ForeignKey[];
  /** Foreign keys of other tables (or this one) that reference this table. */
  referencedBy: ForeignKey[];
}

export type ArgMode = 'in' | 'out' | 'inout' | 'variadic' | 'table';

export interface FunctionArg {
  /** '' for unnamed arguments. */
  name: string;
  type: string;
  mode: ArgMode;
  /** Input arguments only: true when a DEFAULT lets the caller omit it. */
  hasDefault: boolean;
}

export interface DbFunction {
  schema: string;
  name: string;
  /** All arguments in declaration order (in, out, inout, variadic, table columns). */
  args: FunctionArg[];
  /** The arguments a caller passes (in, inout, variadic). */
  inArgs: FunctionArg[];
  returnType: string;
  /** pg_type.typtype of the return type: b(ase), c(omposite), d(omain), e(num), p(seudo: void, record, …), r(ange), m(ultirange). */
  returnTypeKind: string;
  returnsSet: boolean;
  returnsVoid: boolean;
  /** When the return type is the row type of a table or view: that relation (SETOF todos, todos). */
  returnRelation: { schema: string; name: string } | null;
  volatility: 'immutable' | 'stable' | 'volatile';
}

/** The raw JSON the catalog query returns; also how tests build a cache by hand. */
export interface CatalogSnapshot {
  relations: Array<{
    schema: string;
    name: string;
    kind: string;
    /** pg_relation_is_updatable() bitmask: 8 insert, 4 update, 16 delete. */
    updatable: number;
    comment?: string | null;
    columns: Array<Partial<Column> & { name: string; dataType: string }>;
  }>;
  keys: Array<{ schema: string; table: string; primary: boolean; columns: string[] }>;
  foreignKeys: ForeignKey[];
  functions: Array<{
    schema: string;
    name: string;
    args: Array<{ name: string; type: string; mode: string }>;
    numDefaults: number;
    returnType: string;
    returnTypeKind: string;
    returnsSet: boolean;
    returnRelation: { schema: string; name: string } | null;
    volatility: string;
  }>;
  /** Views and materialized views: their `_RETURN` rule (ev_action text) and the table columns it depends on. */
  views?: CatalogView[];
  /** Functions of one argument that is the row type of a table or view (computed fields and relationships). */
  rowFunctions?: RowFunction[];
}

export interface CatalogView {
  oid: string;
  schema: string;
  name: string;
  definition: string;
  /** Columns the view reads (pg_depend): relation oid, its schema, name and relkind, the column's attnum and name. */
  columns: Array<{ relation: string; schema: string; table: string; kind: string; column: number; name: string }>;
}

/**
 * A function whose only argument is a table's (or view's) row type. With a table or view as its return type it is a
 * computed relationship (`select=fn(*)`: to-one unless SETOF without ROWS 1); if it returns one value it is also a
 * computed field (`select=fn`, filters, order).
 */
export interface RowFunction {
  schema: string;
  name: string;
  argSchema: string;
  argTable: string;
  returnsSet: boolean;
  /** pg_proc.prorows (the ROWS estimate of a set-returning function; 0 otherwise). */
  rows: number;
  returnType: string;
  returnTypeKind: string;
  returnRelation: { schema: string; name: string } | null;
}

export interface SchemaCache {
  /** Exposed schemas, in order; the first is the default profile. */
  schemas: string[];
  tables: ReadonlyMap<string, Table>;
  functions: ReadonlyMap<string, DbFunction[]>;
  foreignKeys: ForeignKey[];
  loadedAt: Date;
  /**
   * Foreign keys seen through views (derived in buildSchemaCache): a view column that is a plain reference to a
   * table's FK column (or referenced column) carries that key, as in PostgREST. Absent in hand-made caches.
   */
  viewForeignKeys?: ForeignKey[];
  /** Functions of a table's row type (computed fields and relationships); absent in hand-made caches. */
  rowFunctions?: RowFunction[];
}

/** Map key of a relation or function. */
export const qualifiedKey = (schema: string, name: string): string => JSON.stringify([schema, name]);

export function findTable(cache: SchemaCache, schema: string, name: string): Table | undefined {
  return cache.tables.get(qualifiedKey(schema, name));
}

/** All overloads of a function (empty when unknown). */
export function findFunctions(cache: SchemaCache, schema: string, name: string): DbFunction[] {
  return cache.functions.get(qualifiedKey(schema, name)) ?? [];
}

// ---------------------------------------------------------------------------------------------------------

/**
 * The catalog query. $1 is a JSON array of schema names (JSON rather than a SQL array parameter so that
 * PGlite and node-postgres bind it identically). Reads pg_catalog only (information_schema is slow).
 */
export const CATALOG_SQL = `
with schemas as (
  select json_array_elements_text($1::json) as name
),
rels as (
  select c.oid, n.nspname as schema, c.relname as name, c.relkind::text as kind,
         pg_relation_is_updatable(c.oid::regclass, true) as updatable,
         obj_description(c.oid, 'pg_class') as comment
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace
  where n.nspname in (select name from schemas)
    and c.relkind in ('r', 'p', 'v', 'm', 'f')
),
cols as (
  select a.attrelid,
         json_agg(json_build_object(
           'name', a.attname,
           'position', a.attnum,
           'dataType', format_type(a.atttypid, a.atttypmod),
           'udtName', t.typname,
           'typeSchema', tn.nspname,
           'nullable', not a.attnotnull,
           'hasDefault', a.atthasdef,
           'defaultExpr', pg_get_expr(d.adbin, d.adrelid),
           'identity', case a.attidentity when 'a' then 'always' when 'd' then 'by_default' end,
           'generated', a.attgenerated <> '',
           'elementType', case when t.typcategory = 'A' then format_type(t.typelem, null) end,
           'baseType', case when t.typtype = 'd' then format_type(t.typbasetype, t.typtypmod) end,
           'enumValues', case when t.typtype = 'e' then
             (select json_agg(e.enumlabel order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid) end
         ) order by a.attnum) as columns
  from pg_attribute a
  join rels r on r.oid = a.attrelid
  join pg_type t on t.oid = a.atttypid
  join pg_namespace tn on tn.oid = t.typnamespace
  left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
  where a.attnum > 0 and not a.attisdropped
  group by a.attrelid
),
keys as (
  select r.schema, r.name as "table", i.indisprimary as "primary",
         (select json_agg(a.attname order by k.ord)
            from unnest(i.indkey::int2[]) with ordinality k(attnum, ord)
            join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum) as columns
  from pg_index i
  join rels r on r.oid = i.indrelid
  where i.indisunique and i.indpred is null and i.indexprs is null and i.indisvalid
),
fks as (
  select con.conname as name, n.nspname as schema, c.relname as "table",
         (select json_agg(a.attname order by k.ord)
            from unnest(con.conkey) with ordinality k(attnum, ord)
            join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum) as columns,
         fn.nspname as "refSchema", fc.relname as "refTable",
         (select json_agg(a.attname order by k.ord)
            from unnest(con.confkey) with ordinality k(attnum, ord)
            join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.attnum) as "refColumns"
  from pg_constraint con
  join pg_class c on c.oid = con.conrelid
  join pg_namespace n on n.oid = c.relnamespace
  join pg_class fc on fc.oid = con.confrelid
  join pg_namespace fn on fn.oid = fc.relnamespace
  where con.contype = 'f'
    and (n.nspname in (select name from schemas) or fn.nspname in (select name from schemas))
),
funcs as (
  select n.nspname as schema, p.proname as name,
         coalesce((
           select json_agg(json_build_object(
                    'name', coalesce(p.proargnames[i], ''),
                    'type', format_type(coalesce(p.proallargtypes[i], p.proargtypes[i - 1]), null),
                    'mode', coalesce(p.proargmodes[i]::text, 'i')
                  ) order by i)
           from generate_series(1, coalesce(array_length(p.proallargtypes, 1), p.pronargs)) i
         ), '[]'::json) as args,
         p.pronargdefaults as "numDefaults",
         format_type(p.prorettype, null) as "returnType",
         rt.typtype::text as "returnTypeKind",
         p.proretset as "returnsSet",
         case when rc.oid is not null and rc.relkind in ('r', 'p', 'v', 'm', 'f')
              then json_build_object('schema', rcn.nspname, 'name', rc.relname) end as "returnRelation",
         p.provolatile::text as volatility
  from pg_proc p
  join pg_namespace n on n.oid = p.pronamespace
  join pg_type rt on rt.oid = p.prorettype
  left join pg_class rc on rc.oid = rt.typrelid
  left join pg_namespace rcn on rcn.oid = rc.relnamespace
  where n.nspname in (select name from schemas) and p.prokind = 'f'
),
view_defs as (
  select c.oid::text as oid, n.nspname as schema, c.relname as name, r.ev_action::text as definition,
         coalesce((
           select json_agg(json_build_object(
                    'relation', d.refobjid::text, 'schema', dn.nspname, 'table', dc.relname, 'kind', dc.relkind::text,
                    'column', d.refobjsubid, 'name', a.attname
                  ) order by d.refobjid, d.refobjsubid)
           from pg_depend d
           join pg_class dc on dc.oid = d.refobjid
           join pg_namespace dn on dn.oid = dc.relnamespace
           join pg_attribute a on a.attrelid = d.refobjid and a.attnum = d.refobjsubid
           where d.classid = 'pg_rewrite'::regclass and d.objid = r.oid
             and d.refclassid = 'pg_class'::regclass and d.refobjsubid > 0
         ), '[]'::json) as columns
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace
  join pg_rewrite r on r.ev_class = c.oid and r.rulename = '_RETURN'
  where c.relkind in ('v', 'm') and n.nspname in (select name from schemas)
),
row_funcs as (
  select n.nspname as schema, p.proname as name, an.nspname as "argSchema", ac.relname as "argTable",
         p.proretset as "returnsSet", p.prorows::float8 as rows,
         format_type(p.prorettype, null) as "returnType", rt.typtype::text as "returnTypeKind",
         case when rc.oid is not null and rc.relkind in ('r', 'p', 'v', 'm', 'f')
              then json_build_object('schema', rcn.nspname, 'name', rc.relname) end as "returnRelation"
  from pg_proc p
  join pg_namespace n on n.oid = p.pronamespace
  join pg_type argt on argt.oid = p.proargtypes[0]
  join pg_class ac on ac.oid = argt.typrelid and ac.relkind in ('r', 'p', 'v', 'm', 'f')
  join pg_namespace an on an.oid = ac.relnamespace
  join pg_type rt on rt.oid = p.prorettype
  left join pg_class rc on rc.oid = rt.typrelid
  left join pg_namespace rcn on rcn.oid = rc.relnamespace
  where n.nspname in (select name from schemas) and p.prokind = 'f' and p.pronargs = 1
)
select json_build_object(
  'relations', coalesce((
     select json_agg(json_build_object(
              'schema', r.schema, 'name', r.name, 'kind', r.kind, 'updatable', r.updatable,
              'comment', r.comment, 'columns', coalesce(cl.columns, '[]'::json)
            ) order by r.schema, r.name)
     from rels r left join cols cl on cl.attrelid = r.oid), '[]'::json),
  'keys', coalesce((select json_agg(k) from keys k), '[]'::json),
  'foreignKeys', coalesce((select json_agg(f order by f.schema, f."table", f.name) from fks f), '[]'::json),
  'functions', coalesce((select json_agg(fn order by fn.schema, fn.name) from funcs fn), '[]'::json),
  'views', coalesce((select json_agg(v order by v.schema, v.name) from view_defs v), '[]'::json),
  'rowFunctions', coalesce((select json_agg(rf order by rf.schema, rf.name, rf."argSchema", rf."argTable") from row_funcs rf), '[]'::json)
)::text as snapshot
`;

/** Reads the catalog of the given schemas (default ['public']) into a schema cache. */
export async function loadSchemaCache(db: Queryable, schemas: readonly string[] = ['public']): Promise<SchemaCache> {
  const snapshot = await readCatalog(db, schemas);
  return buildSchemaCache(snapshot, schemas);
}

export async function readCatalog(db: Queryable, schemas: readonly string[]): Promise<CatalogSnapshot> {
  const result = await catalogQuery(db, [JSON.stringify(schemas)]);
  const raw = result.rows[0]?.snapshot;
  if (typeof raw !== 'string') throw new Error('schema cache: the catalog query returned no snapshot');
  return JSON.parse(raw) as CatalogSnapshot;
}

/**
 * The catalog query is localbase's own work, as migrations are: the API's statement timeout (--statement-timeout) does
 * not apply to it. A busy or large database may take longer than a request may to list its tables, and a start or a
 * reload must not fail (or, on PGlite in a worker, restart the database) for that.
 */
function catalogQuery(db: Queryable, params: unknown[]): Promise<{ rows: { snapshot: string }[] }> {
  const database = db as Partial<Database>;
  if (typeof database.transaction === 'function' && hasDeadlines(database as Database))
    return (database as Database & DeadlineQueryable).queryWithTimeout<{ snapshot: string }>(CATALOG_SQL, params, 0);
  if (typeof database.transaction === 'function' && database.kind === 'pg')
    return database.transaction(async (tx) => {
      await tx.exec(NO_STATEMENT_TIMEOUT);
      return tx.query<{ snapshot: string }>(CATALOG_SQL, params);
    });
  return db.query<{ snapshot: string }>(CATALOG_SQL, params);
}

const RELATION_KINDS: Record<string, RelationKind> = {
  r: 'table',
  p: 'partitioned_table',
  v: 'view',
  m: 'materialized_view',
  f: 'foreign_table',
};

const ARG_MODES: Record<string, ArgMode> = { i: 'in', o: 'out', b: 'inout', v: 'variadic', t: 'table' };
const VOLATILITY: Record<string, DbFunction['volatility']> = { i: 'immutable', s: 'stable', v: 'volatile' };

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

/** Builds the lookup structure from a catalog snapshot (from readCatalog, or hand-made in tests). */
export function buildSchemaCache(snapshot: CatalogSnapshot, schemas: readonly string[] = ['public']): SchemaCache {
  const tables = new Map<string, Table>();
  for (const rel of snapshot.relations) {
    const kind = RELATION_KINDS[rel.kind] ?? (Object.values(RELATION_KINDS).includes(rel.kind as RelationKind) ? (rel.kind as RelationKind) : 'table');
    const columns: Column[] = rel.columns.map((c, i) => ({
      name: c.name,
      position: c.position ?? i + 1,
      dataType: c.dataType,
      udtName: c.udtName ?? c.dataType,
      typeSchema: c.typeSchema ?? 'pg_catalog',
      nullable: c.nullable ?? true,
      hasDefault: c.hasDefault ?? false,
      defaultExpr: c.defaultExpr ?? null,
      identity: c.identity ?? null,
      generated: c.generated ?? false,
      elementType: c.elementType ?? null,
      baseType: c.baseType ?? null,
      enumValues: c.enumValues ?? null,
    }));
    tables.set(qualifiedKey(rel.schema, rel.name), {
      schema: rel.schema,
      name: rel.name,
      kind,
      insertable: (rel.updatable & 8) === 8,
      updatable: (rel.updatable & 4) === 4,
      deletable: (rel.updatable & 16) === 16,
      comment: rel.comment ?? null,
      columns,
      columnMap: new Map(columns.map((c) => [c.name, c])),
      primaryKey: [],
      uniqueKeys: [],
      foreignKeys: [],
      referencedBy: [],
    });
  }
  for (const key of snapshot.keys) {
    const t = tables.get(qualifiedKey(key.schema, key.table));
    if (!t || key.columns === null) continue;
    if (key.primary) t.primaryKey = key.columns;
    if (!t.uniqueKeys.some((u) => sameSet(u, key.columns))) t.uniqueKeys.push(key.columns);
  }
  for (const fk of snapshot.foreignKeys) {
    tables.get(qualifiedKey(fk.schema, fk.table))?.foreignKeys.push(fk);
    tables.get(qualifiedKey(fk.refSchema, fk.refTable))?.referencedBy.push(fk);
  }
  const functions = new Map<string, DbFunction[]>();
  for (const fn of snapshot.functions) {
    const args: FunctionArg[] = fn.args.map((a) => ({
      name: a.name,
      type: a.type,
      mode: ARG_MODES[a.mode] ?? (a.mode as ArgMode),
      hasDefault: false,
    }));
    const inArgs = args.filter((a) => a.mode === 'in' || a.mode === 'inout' || a.mode === 'variadic');
    for (let i = inArgs.length - fn.numDefaults; i < inArgs.length; i++) if (i >= 0) inArgs[i]!.hasDefault = true;
    const def: DbFunction = {
      schema: fn.schema,
      name: fn.name,
      args,
      inArgs,
      returnType: fn.returnType,
      returnTypeKind: fn.returnTypeKind,
      returnsSet: fn.returnsSet,
      returnsVoid: fn.returnType === 'void',
      returnRelation: fn.returnRelation,
      volatility: VOLATILITY[fn.volatility] ?? (fn.volatility as DbFunction['volatility']),
    };
    const key = qualifiedKey(fn.schema, fn.name);
    const list = functions.get(key);
    if (list) list.push(def);
    else functions.set(key, [def]);
  }
  return {
    schemas: [...schemas],
    tables,
    functions,
    foreignKeys: snapshot.foreignKeys,
    loadedAt: new Date(),
    viewForeignKeys: deriveViewForeignKeys(snapshot, tables),
    rowFunctions: snapshot.rowFunctions ?? [],
  };
}

/**
 * The foreign keys of tables as seen through views (PostgREST's "embedding views"): for every FK T(c…) → R(r…)
 * and every view V whose columns are plain references to all of c… (through other views too), V(v…) → R; for
 * every view W exposing all of r…, T → W; and V → W. A view exposing a column twice gives one key per choice.
 */
export function deriveViewForeignKeys(snapshot: CatalogSnapshot, tables: ReadonlyMap<string, Table>): ForeignKey[] {
  const views = snapshot.views ?? [];
  if (views.length === 0) return [];
  const byOid = new Map(views.map((v) => [v.oid, v]));
  const origins = new Map(views.map((v) => [v.oid, new Map(viewColumnOrigins(v.definition).map((o) => [o.position, o]))]));
  const depOf = new Map(views.map((v) => [v.oid, new Map(v.columns.map((c) => [`${c.relation}:${c.column}`, c]))]));

  /** The table column behind column `position` of view `oid`, following views; null for expressions. */
  const baseOf = (oid: string, position: number, depth = 0): { schema: string; table: string; column: string } | null => {
    if (depth > 32) return null;
    const origin = origins.get(oid)?.get(position);
    if (!origin) return null;
    const dep = depOf.get(oid)?.get(`${origin.relation}:${origin.column}`);
    if (!dep) return null;
    if (dep.kind === 'v' || dep.kind === 'm') return byOid.has(origin.relation) ? baseOf(origin.relation, origin.column, depth + 1) : null;
    return { schema: dep.schema, table: dep.table, column: dep.name };
  };

  // per view: base "schema.table.column" → the view's column names exposing it
  const exposures: Array<{ view: Table; columns: Map<string, string[]> }> = [];
  for (const v of views) {
    const view = tables.get(qualifiedKey(v.schema, v.name));
    if (!view) continue;
    const columns = new Map<string, string[]>();
    for (const col of view.columns) {
      const base = baseOf(v.oid, col.position);
      if (!base) continue;
      const key = JSON.stringify([base.schema, base.table, base.column]);
      columns.set(key, [...(columns.get(key) ?? []), col.name]);
    }
    if (columns.size > 0) exposures.push({ view, columns });
  }
  /** Every way a view spells the given base columns (empty when one is missing). */
  const spellings = (columns: Map<string, string[]>, schema: string, table: string, cols: readonly string[]): string[][] => {
    let out: string[][] = [[]];
    for (const c of cols) {
      const names = columns.get(JSON.stringify([schema, table, c]));
      if (!names) return [];
      out = out.flatMap((prefix) => names.map((n) => [...prefix, n]));
    }
    return out;
  };

  const derived: ForeignKey[] = [];
  for (const fk of snapshot.foreignKeys) {
    const holders = exposures.flatMap((e) => spellings(e.columns, fk.schema, fk.table, fk.columns).map((cols) => ({ view: e.view, cols })));
    const referenced = exposures.flatMap((e) => spellings(e.columns, fk.refSchema, fk.refTable, fk.refColumns).map((cols) => ({ view: e.view, cols })));
    const holder = { schema: fk.schema, table: fk.table, columns: fk.columns };
    for (const h of holders) {
      derived.push({ name: fk.name, schema: h.view.schema, table: h.view.name, columns: h.cols, refSchema: fk.refSchema, refTable: fk.refTable, refColumns: fk.refColumns, holder });
    }
    for (const r of referenced) {
      derived.push({ name: fk.name, schema: fk.schema, table: fk.table, columns: fk.columns, refSchema: r.view.schema, refTable: r.view.name, refColumns: r.cols, holder });
      for (const h of holders) {
        derived.push({ name: fk.name, schema: h.view.schema, table: h.view.name, columns: h.cols, refSchema: r.view.schema, refTable: r.view.name, refColumns: r.cols, holder });
      }
    }
  }
  return derived;
}
