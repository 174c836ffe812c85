/**
 * What the TypeScript generator reads from the catalog: relations with their columns, foreign keys, functions,
 * enums, composite types and every type they mention — for the requested schemas, in one statement (one snapshot)
 * that returns JSON text, so it runs the same on PGlite and on a PostgreSQL server.
 */

import { relationshipsWithViews } from './view-origins.ts';
import type { Relationship } from './view-origins.ts';

export interface Queryable {
  query<T extends Record<string, unknown> = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
}

export interface PgType {
  oid: number;
  schema: string;
  name: string;
  /** typtype: b(ase), c(omposite), d(omain), e(num), p(seudo), r(ange), m(ultirange) */
  kind: string;
  /** Element type of an array type, else 0. */
  elem: number;
  /** Base type of a domain, else 0. */
  base: number;
  /** The relation behind a composite type (a table's row type or a standalone composite type), else 0. */
  relid: number;
  /** relkind of that relation ('c' for a standalone composite type). */
  relkind: string | null;
}

export interface GenColumn {
  name: string;
  /** attnum */
  num: number;
  type: number;
  nullable: boolean;
  hasDefault: boolean;
  /** 'a' = GENERATED ALWAYS AS IDENTITY, 'd' = BY DEFAULT, '' = none */
  identity: string;
  /** GENERATED ALWAYS AS (expr) STORED / VIRTUAL */
  generated: boolean;
  /** For views: pg_column_is_updatable. Table columns are always true. */
  updatable: boolean;
}

export interface GenRelation {
  oid: number;
  schema: string;
  name: string;
  /** r, p, f (tables), v, m (views) */
  kind: string;
  /** Views: UPDATE and DELETE through the view work (pg_relation_is_updatable has 4 and 16). */
  updatable: boolean;
  columns: GenColumn[];
  /** Views: the `_RETURN` rule's query tree as text (pg_rewrite.ev_action), read for relationships through views. */
  definition?: string | null;
}

export interface GenForeignKey {
  name: string;
  schema: string;
  relation: string;
  columns: string[];
  refSchema: string;
  refRelation: string;
  refColumns: string[];
  /** The FK columns are exactly a unique key (or the primary key) of the referencing table. */
  oneToOne: boolean;
}

export interface GenFunctionArg {
  /** '' when unnamed */
  name: string;
  type: number;
  /** i(n), o(ut), b (inout), v(ariadic), t(able) */
  mode: string;
  hasDefault: boolean;
}

export interface GenFunction {
  schema: string;
  name: string;
  /** pg_get_function_identity_arguments, e.g. "user_row users" or "messages" */
  identityArgs: string;
  args: GenFunctionArg[];
  returnType: number;
  /** format_type of the return type, for sorting overloads */
  returnTypeName: string;
  returnsSet: boolean;
  /** The planner's row estimate (ROWS n); 0 for functions that do not return sets. */
  rows: number;
}

export interface GenEnum {
  schema: string;
  name: string;
  values: string[];
}

export interface GenCompositeType {
  schema: string;
  name: string;
  attributes: Array<{ name: string; type: number }>;
}

export interface Introspection {
  schemas: string[];
  relations: GenRelation[];
  /** Foreign keys declared on tables of the generated schemas. */
  foreignKeys: GenForeignKey[];
  /** The foreign keys, plus the same keys through views (relationshipsWithViews); default: foreignKeys. */
  relationships?: Relationship[];
  functions: GenFunction[];
  enums: GenEnum[];
  compositeTypes: GenCompositeType[];
  types: PgType[];
}

const INTROSPECTION_SQL = /* sql */ `
with
  ns as (select oid, nspname from pg_namespace where nspname = any($1::text[])),
  rels as (
    select c.oid, n.nspname as schema, c.relname as name, c.relkind as kind,
           (c.relkind = 'v' and (pg_relation_is_updatable(c.oid, false) & 20) = 20)
             or (c.relkind = 'f' and (pg_relation_is_updatable(c.oid, false) & 20) = 20) as updatable
      from pg_class c join ns n on n.oid = c.relnamespace
     where c.relkind in ('r', 'p', 'f', 'v', 'm')
  ),
  cols as (
    select a.attrelid as rel, a.attnum, a.attname as name,
           a.atttypid as type,
           not (a.attnotnull or (t.typtype = 'd' and t.typnotnull)) as nullable,
           a.atthasdef as has_default,
           a.attidentity::text as identity,
           a.attgenerated <> '' as generated,
           (r.kind in ('r', 'p') or (r.kind in ('v', 'f') and pg_column_is_updatable(r.oid, a.attnum, false))) as updatable
      from pg_attribute a
      join rels r on r.oid = a.attrelid
      join pg_type t on t.oid = a.atttypid
     where a.attnum > 0 and not a.attisdropped
  ),
  keys as (
    select i.indrelid as rel, array_agg(a.attname::text order by a.attname) as cols
      from pg_index i
      join rels r on r.oid = i.indrelid
      join pg_attribute a on a.attrelid = i.indrelid and a.attnum = any(i.indkey)
     where (i.indisunique or i.indisprimary) and i.indpred is null and i.indexprs is null
     group by i.indexrelid, i.indrelid
  ),
  fks as (
    select con.conname as name, n.nspname as schema, c.relname as relation, rn.nspname as ref_schema,
           rc.relname as ref_relation, con.conrelid,
           (select array_agg(a.attname::text order by k.ord) from unnest(con.conkey) with ordinality k(attnum, ord)
              join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum) as columns,
           (select array_agg(a.attname::text order by k.ord) from unnest(con.confkey) with ordinality k(attnum, ord)
              join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.attnum) as ref_columns
      from pg_constraint con
      join pg_class c on c.oid = con.conrelid
      join ns n on n.oid = c.relnamespace
      join pg_class rc on rc.oid = con.confrelid
      join pg_namespace rn on rn.oid = rc.relnamespace
     where con.contype = 'f'
  ),
  fns as (
    select p.oid, n.nspname as schema, p.proname as name,
           pg_get_function_identity_arguments(p.oid) as identity_args,
           p.prorettype as return_type, format_type(p.prorettype, null) as return_type_name,
           p.proretset as returns_set, p.prorows as rows,
           coalesce(p.proallargtypes, p.proargtypes::oid[]) as arg_types,
           coalesce(p.proargmodes, array_fill('i'::"char", array[p.pronargs::int])) as arg_modes,
           p.proargnames as arg_names, p.pronargs, p.pronargdefaults
      from pg_proc p join ns n on n.oid = p.pronamespace
     where p.prokind = 'f'
  ),
  used_types as (
    select type as oid from cols
    union select unnest(arg_types) from fns
    union select return_type from fns
    union select a.atttypid from pg_attribute a join pg_type t on t.typrelid = a.attrelid
      join ns n on n.oid = t.typnamespace where t.typtype = 'c' and a.attnum > 0 and not a.attisdropped
    union select t.oid from pg_type t join ns n on n.oid = t.typnamespace where t.typtype in ('e', 'c')
  ),
  -- arrays and domains point at further types: follow them (two levels are plenty: domain over an array of enum)
  types1 as (
    select oid from used_types
    union select t.typelem from pg_type t join used_types u on u.oid = t.oid where t.typelem <> 0
    union select t.typbasetype from pg_type t join used_types u on u.oid = t.oid where t.typbasetype <> 0
  ),
  types2 as (
    select oid from types1
    union select t.typelem from pg_type t join types1 u on u.oid = t.oid where t.typelem <> 0
    union select t.typbasetype from pg_type t join types1 u on u.oid = t.oid where t.typbasetype <> 0
  )
select json_build_object(
  'relations', coalesce((select json_agg(json_build_object(
      'oid', r.oid::int8, 'schema', r.schema, 'name', r.name, 'kind', r.kind, 'updatable', r.updatable,
      'definition', (select w.ev_action::text from pg_rewrite w where w.ev_class = r.oid and w.rulename = '_RETURN'),
      'columns', coalesce((select json_agg(json_build_object(
          'name', c.name, 'num', c.attnum, 'type', c.type::int8, 'nullable', c.nullable, 'hasDefault', c.has_default,
          'identity', c.identity, 'generated', c.generated, 'updatable', c.updatable) order by c.attnum)
        from cols c where c.rel = r.oid), '[]'::json)))
    from rels r), '[]'::json),
  'keys', coalesce((select json_agg(json_build_object('rel', k.rel::int8, 'cols', k.cols)) from keys k), '[]'::json),
  'foreignKeys', coalesce((select json_agg(json_build_object(
      'name', f.name, 'schema', f.schema, 'relation', f.relation, 'refSchema', f.ref_schema,
      'refRelation', f.ref_relation, 'columns', f.columns, 'refColumns', f.ref_columns, 'rel', f.conrelid::int8))
    from fks f), '[]'::json),
  'functions', coalesce((select json_agg(json_build_object(
      'schema', f.schema, 'name', f.name, 'identityArgs', f.identity_args, 'returnType', f.return_type::int8,
      'returnTypeName', f.return_type_name, 'returnsSet', f.returns_set, 'rows', f.rows,
      'argTypes', (select json_agg(x::int8) from unnest(f.arg_types) x), 'argModes', f.arg_modes::text[],
      'argNames', f.arg_names, 'nargs', f.pronargs, 'ndefaults', f.pronargdefaults))
    from fns f), '[]'::json),
  'enums', coalesce((select json_agg(json_build_object('schema', n.nspname, 'name', t.typname,
      'values', (select json_agg(e.enumlabel order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid)))
    from pg_type t join ns n on n.oid = t.typnamespace where t.typtype = 'e'), '[]'::json),
  'compositeTypes', coalesce((select json_agg(json_build_object('schema', n.nspname, 'name', t.typname,
      'attributes', coalesce((select json_agg(json_build_object('name', a.attname, 'type', a.atttypid::int8) order by a.attnum)
        from pg_attribute a where a.attrelid = t.typrelid and a.attnum > 0 and not a.attisdropped), '[]'::json)))
    from pg_type t join ns n on n.oid = t.typnamespace join pg_class c on c.oid = t.typrelid
    where t.typtype = 'c' and c.relkind = 'c'), '[]'::json),
  'types', coalesce((select json_agg(json_build_object(
      'oid', t.oid::int8, 'schema', tn.nspname, 'name', t.typname, 'kind', t.typtype, 'elem', t.typelem::int8,
      'base', t.typbasetype::int8, 'relid', t.typrelid::int8, 'relkind', c.relkind))
    from pg_type t join types2 u on u.oid = t.oid join pg_namespace tn on tn.oid = t.typnamespace
    left join pg_class c on c.oid = t.typrelid), '[]'::json)
)::text as snapshot`;

interface RawSnapshot {
  relations: GenRelation[];
  keys: Array<{ rel: number; cols: string[] }>;
  foreignKeys: Array<Omit<GenForeignKey, 'oneToOne'> & { rel: number }>;
  functions: Array<{
    schema: string;
    name: string;
    identityArgs: string;
    returnType: number;
    returnTypeName: string;
    returnsSet: boolean;
    rows: number;
    argTypes: number[] | null;
    argModes: string[] | null;
    argNames: string[] | null;
    nargs: number;
    ndefaults: number;
  }>;
  enums: GenEnum[];
  compositeTypes: GenCompositeType[];
  types: PgType[];
}

/** Reads everything the generator needs for `schemas` in one statement. */
export async function introspect(db: Queryable, schemas: string[]): Promise<Introspection> {
  const { rows } = await db.query<{ snapshot: string }>(INTROSPECTION_SQL, [schemas]);
  const raw = JSON.parse(rows[0]!.snapshot) as RawSnapshot;
  const keysByRel = new Map<number, string[][]>();
  for (const k of raw.keys) {
    const list = keysByRel.get(k.rel) ?? [];
    list.push(k.cols);
    keysByRel.set(k.rel, list);
  }
  const sameSet = (a: string[], b: string[]) => a.length === b.length && [...a].sort().every((x, i) => x === [...b].sort()[i]);
  const foreignKeys = raw.foreignKeys.map(({ rel, ...fk }) => ({
    ...fk,
    oneToOne: (keysByRel.get(rel) ?? []).some((key) => sameSet(key, fk.columns)),
  }));
  const functions: GenFunction[] = raw.functions.map((f) => {
    const types = f.argTypes ?? [];
    const modes = f.argModes ?? [];
    const names = f.argNames ?? [];
    // Defaults belong to the last `ndefaults` input arguments.
    const inputIndexes = types.map((_, i) => i).filter((i) => ['i', 'b', 'v'].includes(modes[i] ?? 'i'));
    const firstDefault = inputIndexes.length - f.ndefaults;
    const args = types.map((type, i) => ({
      name: names[i] ?? '',
      type,
      mode: modes[i] ?? 'i',
      hasDefault: inputIndexes.indexOf(i) >= firstDefault && inputIndexes.includes(i),
    }));
    return {
      schema: f.schema,
      name: f.name,
      identityArgs: f.identityArgs,
      args,
      returnType: f.returnType,
      returnTypeName: f.returnTypeName,
      returnsSet: f.returnsSet,
      rows: Number(f.rows),
    };
  });
  return {
    schemas: [...schemas],
    relations: raw.relations,
    foreignKeys,
    relationships: relationshipsWithViews(raw.relations, foreignKeys),
    functions,
    enums: raw.enums,
    compositeTypes: raw.compositeTypes,
    types: raw.types,
  };
}
