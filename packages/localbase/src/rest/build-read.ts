/**
 * Builds the one SQL statement that answers a read (GET/HEAD) from the parsed query and the schema cache.
 *
 * Every identifier is looked up in the cache and emitted from the cache entry, quoted; every request value is a
 * bound parameter (all parameters are text) cast to the column's catalog type; operators, directions and
 * keywords come from closed sets. Embeds are correlated subqueries (to-one → `row_to_json`, to-many and
 * many-to-many → `json_agg`), so the statement returns one row:
 *
 *   total       the exact count of matching rows when asked (else null)
 *   page_count  rows in this page (for Content-Range)
 *   body        the JSON array as text
 *
 * Not supported yet (clear errors): aggregates (PGRST123), spreads (PGRST119), casts to types outside a known list.
 */
import { RestError } from './errors.ts';
import type { AggregateFunction, Field, FilterParam, LogicTree, OpExpr, OrderTerm, ParsedQuery, SelectItem } from './parse.ts';
import { isToOne, resolveEmbed, type Relationship } from './resolve.ts';
import { findTable, type Column, type RowFunction, type SchemaCache, type Table } from './schema-cache.ts';
import { quoteIdent, quoteQualified } from './sql.ts';

export interface ReadRequest {
  cache: SchemaCache;
  schema: string;
  table: string;
  query: ParsedQuery;
  /** Root offset/limit after Range header, limit/offset and max_rows (see effectiveRange). */
  offset: number;
  limit: number | null;
  /** Compute the exact total (Prefer: count=exact, or planned/estimated answered exactly). */
  count: boolean;
  /**
   * `positional` (default): parameters are `$1, $2, …`. `array`: the statement takes ONE text[] parameter and
   * refers to `($1)[n]` — the form envelope.ts's one-call `exec` runs with EXECUTE … USING.
   */
  paramStyle?: 'positional' | 'array';
  /** `csv`: body is PostgREST's CSV (header of the first row's keys, one record per line) instead of JSON. */
  format?: 'json' | 'csv';
}

export interface BuiltStatement {
  sql: string;
  /** All text; the SQL casts each to its type (with paramStyle 'array', bind them as one text[]). */
  params: string[];
}

/** Casts accepted in `select=col::type`, mapped to pg_type names (emitted quoted). */
const CAST_TYPES: Record<string, string> = {
  text: 'text', varchar: 'varchar', 'character varying': 'varchar', char: 'bpchar', character: 'bpchar', name: 'name',
  int: 'int4', integer: 'int4', int4: 'int4', bigint: 'int8', int8: 'int8', smallint: 'int2', int2: 'int2',
  numeric: 'numeric', decimal: 'numeric', real: 'float4', float4: 'float4', 'double precision': 'float8', float8: 'float8',
  boolean: 'bool', bool: 'bool', json: 'json', jsonb: 'jsonb', uuid: 'uuid', date: 'date', time: 'time',
  timestamp: 'timestamp', timestamptz: 'timestamptz', 'timestamp with time zone': 'timestamptz',
  'timestamp without time zone': 'timestamp', interval: 'interval', money: 'money', inet: 'inet', cidr: 'cidr',
};

const COMPARISON: Record<string, string> = {
  eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=',
  cs: '@>', cd: '<@', ov: '&&', sl: '<<', sr: '>>', nxr: '&<', nxl: '&>', adj: '-|-',
};
const TEXT_MATCH: Record<string, string> = { like: 'LIKE', ilike: 'ILIKE', match: '~', imatch: '~*' };
const FTS_FUNCTION: Record<string, string> = {
  fts: 'to_tsquery', plfts: 'plainto_tsquery', phfts: 'phraseto_tsquery', wfts: 'websearch_to_tsquery',
};

/** A PostgreSQL array literal of text elements (each quoted), to be bound and cast to `type[]`. */
export function pgArrayLiteral(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`).join(',')}}`;
}

/** The column paired with position i on the other side of a foreign key (both sides have the same length). */
function pairedColumn(columns: readonly string[], i: number): string {
  const column = columns[i];
  if (column === undefined) throw new Error(`foreign key column lists differ in length at ${i}: ${columns.join(', ')}`);
  return column;
}

/** An aggregate function with its optional output cast (`id.sum()::text`). */
export interface AggregateCall {
  fn: AggregateFunction;
  cast: string | null;
}

export interface Level {
  table: Table;
  alias: string;
  /** Embed path of this level: [] for the root, then embed aliases/names. */
  path: string[];
}

export const pathKey = (path: readonly string[]): string => JSON.stringify(path);

/** The statement builder; exported for build-write.ts / build-rpc.ts, which reuse filters and select lists. */
export class ReadBuilder {
  readonly req: ReadRequest;
  readonly params: string[] = [];
  private aliasCounter = 0;
  /** Embed paths that exist in `select`, to validate filters/order/limits on embedded resources. */
  readonly knownPaths = new Set<string>([pathKey([])]);

  constructor(req: ReadRequest) {
    this.req = req;
  }

  param(value: string, type: string): string {
    this.params.push(value);
    return this.req.paramStyle === 'array' ? `($1)[${this.params.length}]::${type}` : `$${this.params.length}::${type}`;
  }

  nextAlias(): string {
    return `t${this.aliasCounter++}`;
  }

  column(level: Level, name: string): Column {
    const col = level.table.columnMap.get(name);
    if (!col) {
      throw new RestError(400, '42703', `column ${ReadBuilder.errorAlias(level)}.${name} does not exist`, null, null);
    }
    return col;
  }

  /** Expression and resulting SQL type of a field (column plus optional JSON path). */
  fieldExpr(level: Level, field: Field): { sql: string; type: string; column: Column } {
    const computed = level.table.columnMap.has(field.name) ? null : this.computedField(level, field.name);
    const column = computed?.column ?? this.column(level, field.name);
    let sql = computed?.sql ?? `${level.alias}.${quoteIdent(column.name)}`;
    let type = column.dataType;
    if (field.jsonPath.length > 0) {
      // As PostgREST: a json/jsonb column takes the arrows as it is (its indexes apply); any other column (an array,
      // a composite, even text) is turned into jsonb first, `to_jsonb(col)->…`.
      const isJson = column.dataType === 'json' || column.dataType === 'jsonb';
      if (!isJson) sql = `to_jsonb(${sql})`;
      const jsonType = isJson ? column.dataType : 'jsonb';
      for (const step of field.jsonPath) {
        const operand = step.kind === 'index' ? this.param(step.value, 'int') : this.param(step.value, 'text');
        sql = `${sql}${step.arrow}${operand}`;
        type = step.arrow === '->>' ? 'text' : jsonType;
      }
    }
    return { sql, type, column };
  }

  /** Aliases whose FROM item is the level's own relation (or a function returning its rows), not a CTE. */
  private readonly relationAliases = new Set<string>();
  /** PostgreSQL's 42712 for two embeds that PostgREST would alias alike, raised once the whole tree is resolved. */
  private duplicateEmbed: string | null = null;

  /** Marks `alias` as a FROM item whose row type is the level's table or view (see wholeRow). */
  markRelationAlias(alias: string): void {
    this.relationAliases.add(alias);
  }

  /** The level's current row as a value of the table's row type (the argument of computed fields and relationships). */
  wholeRow(level: Level): string {
    if (this.relationAliases.has(level.alias)) return level.alias;
    // a CTE (writes, rpc): rebuild the row from the table's columns
    const cols = level.table.columns.map((c) => `${level.alias}.${quoteIdent(c.name)}`);
    return `ROW(${cols.join(', ')})::${quoteQualified(level.table.schema, level.table.name)}`;
  }

  /**
   * A computed field: a function of the table's row type returning one value, used like a column
   * (`select=full_name`, filters, order), as PostgreSQL's `t.fn` notation does for PostgREST. Not part of `*`.
   */
  computedField(level: Level, name: string): { sql: string; column: Column } | null {
    const fn = computedFieldFunction(this.req.cache, level.table.schema, level.table.name, name);
    if (!fn) return null;
    const column: Column = {
      name, position: 0, dataType: fn.returnType, udtName: fn.returnType, typeSchema: '', nullable: true, hasDefault: false,
      defaultExpr: null, identity: null, generated: true, elementType: null, baseType: null, enumValues: null,
    };
    return { sql: `${quoteQualified(fn.schema, fn.name)}(${this.wholeRow(level)})`, column };
  }

  /** FROM item and join conditions of an embedded level (a table joined on its FK, or a computed relationship's call). */
  embedSource(rel: Relationship, parent: Level, child: Level): { from: string; conds: string[] } {
    this.markRelationAlias(child.alias);
    if (rel.computed) {
      return { from: `${quoteQualified(rel.computed.schema, rel.computed.name)}(${this.wholeRow(parent)}) ${child.alias}`, conds: [] };
    }
    return { from: `${quoteQualified(child.table.schema, child.table.name)} ${child.alias}`, conds: [this.joinCondition(rel, parent, child)] };
  }

  /** The JSON key of a selected field: alias, else the last JSON key, else the column name. */
  static outputName(field: Field, alias: string | null): string {
    if (alias !== null) return alias;
    for (let i = field.jsonPath.length - 1; i >= 0; i--) if (field.jsonPath[i]!.kind === 'key') return field.jsonPath[i]!.value;
    return field.name;
  }

  condition(level: Level, field: Field, expr: OpExpr): string {
    const f = this.fieldExpr(level, field);
    const op = expr.operation;
    let sql: string;
    switch (op.kind) {
      case 'op': {
        if (op.op in TEXT_MATCH) {
          const value = op.op === 'like' || op.op === 'ilike' ? op.value.replaceAll('*', '%') : op.value;
          sql = `${f.sql} ${TEXT_MATCH[op.op]} ${this.param(value, 'text')}`;
        } else if (op.op === 'isdistinct') {
          sql = `${f.sql} IS DISTINCT FROM ${this.param(op.value, f.type)}`;
        } else {
          sql = `${f.sql} ${COMPARISON[op.op]} ${this.param(op.value, f.type)}`;
        }
        break;
      }
      case 'quant': {
        const values = op.value;
        if (op.op in TEXT_MATCH) {
          const v = op.op === 'like' || op.op === 'ilike' ? values.replaceAll('*', '%') : values;
          sql = `${f.sql} ${TEXT_MATCH[op.op]} ${op.quantifier.toUpperCase()}(${this.param(v, 'text[]')})`;
        } else {
          sql = `${f.sql} ${COMPARISON[op.op]} ${op.quantifier.toUpperCase()}(${this.param(values, `${f.type}[]`)})`;
        }
        break;
      }
      case 'in':
        sql = `${f.sql} = ANY(${this.param(pgArrayLiteral(op.values), `${f.type}[]`)})`;
        break;
      case 'is':
        sql = `${f.sql} IS ${{ null: 'NULL', not_null: 'NOT NULL', true: 'TRUE', false: 'FALSE', unknown: 'UNKNOWN' }[op.value]}`;
        break;
      case 'fts': {
        const config = op.language === null ? '' : `${this.param(op.language, 'regconfig')}, `;
        const vector = f.type === 'tsvector' ? f.sql : `to_tsvector(${config}${f.sql})`;
        sql = `${vector} @@ ${FTS_FUNCTION[op.op]}(${config}${this.param(op.value, 'text')})`;
        break;
      }
    }
    return expr.negated ? `NOT (${sql})` : sql;
  }

  logic(level: Level, tree: LogicTree): string {
    if (tree.type === 'filter') return this.condition(level, tree.field, tree.expr);
    const inner = tree.children.map((c) => this.logic(level, c)).join(tree.op === 'and' ? ' AND ' : ' OR ');
    return tree.negated ? `NOT (${inner})` : `(${inner})`;
  }

  joinCondition(rel: Relationship, parent: Level, child: Level): string {
    if (rel.junction) {
      const j = rel.junction;
      const ja = this.nextAlias();
      const toTarget = j.targetJunctionColumns.map((c, i) => `${ja}.${quoteIdent(c)} = ${child.alias}.${quoteIdent(pairedColumn(j.targetColumns, i))}`);
      const toSource = j.sourceJunctionColumns.map((c, i) => `${ja}.${quoteIdent(c)} = ${parent.alias}.${quoteIdent(pairedColumn(j.sourceColumns, i))}`);
      return `EXISTS (SELECT 1 FROM ${quoteQualified(j.table.schema, j.table.name)} ${ja} WHERE ${[...toTarget, ...toSource].join(' AND ')})`;
    }
    return rel.sourceColumns
      .map((c, i) => `${child.alias}.${quoteIdent(pairedColumn(rel.targetColumns, i))} = ${parent.alias}.${quoteIdent(c)}`)
      .join(' AND ');
  }

  /** WHERE conditions of a level: its filters, logic trees and the EXISTS of its !inner embeds. */
  whereOf(level: Level, innerExists: string[]): string[] {
    const key = pathKey(level.path);
    const conds: string[] = [];
    for (const f of this.req.query.filters) if (pathKey(f.path) === key) conds.push(this.condition(level, f.field, f.expr));
    for (const l of this.req.query.logic) if (pathKey(l.path) === key) conds.push(this.logic(level, l.tree));
    conds.push(...innerExists);
    return conds;
  }

  orderOf(level: Level, embeds: Map<string, { rel: Relationship; level: Level }>): string {
    const key = pathKey(level.path);
    const terms: OrderTerm[] = this.req.query.order.filter((o) => pathKey(o.path) === key).flatMap((o) => o.terms);
    if (terms.length === 0) return '';
    const parts = terms.map((t) => {
      let expr: string;
      if (t.relation === null) {
        expr = this.fieldExpr(level, t.field).sql;
      } else {
        const embed = embeds.get(t.relation);
        if (!embed || !isToOne(embed.rel)) {
          throw new RestError(400, 'PGRST118', `A related order on '${t.relation}' is not possible`, `'${level.table.name}' and '${t.relation}' do not form a many-to-one or one-to-one relationship`, null);
        }
        const inner: Level = { table: embed.level.table, alias: this.nextAlias(), path: embed.level.path };
        const source = this.embedSource(embed.rel, level, inner);
        const col = this.fieldExpr(inner, t.field).sql;
        const where = source.conds.length > 0 ? ` WHERE ${source.conds.join(' AND ')}` : '';
        expr = `(SELECT ${col} FROM ${source.from}${where} LIMIT 1)`;
      }
      const dir = t.direction === 'desc' ? ' DESC' : t.direction === 'asc' ? ' ASC' : '';
      const nulls = t.nulls === 'nullsfirst' ? ' NULLS FIRST' : t.nulls === 'nullslast' ? ' NULLS LAST' : '';
      return `${expr}${dir}${nulls}`;
    });
    return ` ORDER BY ${parts.join(', ')}`;
  }

  rangeOf(level: Level): string {
    if (level.path.length === 0) {
      const lim = this.req.limit === null ? '' : ` LIMIT ${this.param(String(this.req.limit), 'bigint')}`;
      const off = this.req.offset > 0 ? ` OFFSET ${this.param(String(this.req.offset), 'bigint')}` : '';
      return lim + off;
    }
    const r = this.req.query.embeddedRanges.find((x) => pathKey(x.path) === pathKey(level.path));
    if (!r) return '';
    return (r.limit === null ? '' : ` LIMIT ${this.param(String(r.limit), 'bigint')}`) + (r.offset === null ? '' : ` OFFSET ${this.param(String(r.offset), 'bigint')}`);
  }

  /**
   * The select list of a level, plus (through innerExists) the EXISTS conditions its !inner embeds impose on it.
   */
  selectList(level: Level, items: readonly SelectItem[], innerExists: string[], embeds: Map<string, { rel: Relationship; level: Level }>): string[] {
    const out: string[] = [];
    const siblingEmbeds = new Set<string>();
    for (const item of items) {
      switch (item.type) {
        case 'star':
          for (const c of level.table.columns) out.push(`${level.alias}.${quoteIdent(c.name)} AS ${quoteIdent(c.name)}`);
          break;
        case 'count':
          out.push(this.aggregateSelect(level, null, item.alias, null, { fn: 'count', cast: item.cast }));
          break;
        case 'column': {
          if (item.aggregate) {
            out.push(this.aggregateSelect(level, item.field, item.alias, item.cast, item.aggregate));
            break;
          }
          if (this.isLegacyCount(level, item)) {
            out.push(`${ReadBuilder.castTo('count(*)', item.cast)} AS ${quoteIdent(item.alias ?? 'count')}`);
            break;
          }
          const f = this.fieldExpr(level, item.field);
          let sql = f.sql;
          if (item.cast !== null) {
            const type = CAST_TYPES[item.cast.toLowerCase()];
            if (!type) throw new RestError(400, '42704', `type "${item.cast}" does not exist`, null, null);
            sql = `CAST(${sql} AS ${quoteIdent(type)})`;
          }
          out.push(`${sql} AS ${quoteIdent(ReadBuilder.outputName(item.field, item.alias))}`);
          break;
        }
        case 'embed': {
          if (item.spread) {
            out.push(...this.spreadSelect(level, item, innerExists, embeds));
            break;
          }
          const rel = resolveEmbed(this.req.cache, {
            schema: level.table.schema,
            source: level.table.name,
            embed: item.relation,
            hint: item.hint,
          });
          const target = findTable(this.req.cache, rel.target.schema, rel.target.name);
          if (!target) throw new RestError(400, 'PGRST200', `Could not find the table '${rel.target.schema}.${rel.target.name}' in the schema cache`, null, null);
          const name = item.alias ?? item.relation;
          this.noteSiblingEmbed(level, name, siblingEmbeds);
          const child: Level = { table: target, alias: this.nextAlias(), path: [...level.path, name] };
          this.knownPaths.add(pathKey(child.path));
          embeds.set(name, { rel, level: child });
          const childEmbeds = new Map<string, { rel: Relationship; level: Level }>();
          const childInner: string[] = [];
          const source = this.embedSource(rel, level, child);
          const childSelect = this.selectList(child, item.select, childInner, childEmbeds);
          const conds = [...source.conds, ...this.whereOf(child, childInner)];
          const from = `FROM ${source.from}${this.lateralSql(child)}${conds.length > 0 ? ` WHERE ${conds.join(' AND ')}` : ''}`;
          const e = `_${child.alias}`;
          if (isEmptyEmbed(item)) {
            // `users()`: only a filter (with !inner); the key is left out of the object, as in PostgREST
            if (item.joinType === 'inner') innerExists.push(`EXISTS (SELECT 1 ${from})`);
            break;
          }
          const cols = childSelect.length > 0 ? childSelect.join(', ') : 'NULL AS "_"';
          const group = this.groupByOf(child, item.select);
          // grouped levels group by their embeds too (as PostgREST): json has no equality, jsonb has
          const grouped = this.itemsAggregate(items);
          if (isToOne(rel)) {
            const obj = childSelect.length > 0 ? `row_to_json(${e})` : `'{}'::json`;
            out.push(this.embedColumn(level, `(SELECT ${obj} FROM (SELECT ${cols} ${from}${group} LIMIT 1) ${e})`, name, grouped));
          } else {
            const agg = childSelect.length > 0 ? `json_agg(${e})` : `json_agg('{}'::json)`;
            const order = this.orderOf(child, childEmbeds);
            out.push(this.embedColumn(level, `(SELECT coalesce(${agg}, '[]') FROM (SELECT ${cols} ${from}${group}${order}${this.rangeOf(child)}) ${e})`, name, grouped));
          }
          if (item.joinType === 'inner') innerExists.push(`EXISTS (SELECT 1 ${from})`);
          break;
        }
      }
    }
    if (level.path.length === 0 && this.duplicateEmbed !== null) {
      throw new RestError(400, '42712', `table name "${this.duplicateEmbed}" specified more than once`, null, null);
    }
    return out;
  }

  /**
   * PostgREST aliases each embed's subquery `<parent table>_<alias or name>_<depth>`, so two sibling embeds with the
   * same alias (or the same name and no alias) fail in PostgreSQL with 42712; we answer the same, after the tree is
   * resolved (relationship errors come first).
   */
  private noteSiblingEmbed(level: Level, name: string, seen: Set<string>): void {
    if (seen.has(name)) this.duplicateEmbed ??= `${level.table.name}_${name}_${level.path.length + 1}`;
    seen.add(name);
  }

  build(): BuiltStatement {
    const { cache, schema, table } = this.req;
    const root = findTable(cache, schema, table);
    if (!root) {
      throw new RestError(404, 'PGRST205', `Could not find the table '${schema}.${table}' in the schema cache`, null, null);
    }
    const level: Level = { table: root, alias: this.nextAlias(), path: [] };
    this.markRelationAlias(level.alias);
    const embeds = new Map<string, { rel: Relationship; level: Level }>();
    const innerExists: string[] = [];
    const select = this.selectList(level, this.req.query.select, innerExists, embeds);
    this.checkPaths(this.req.query.filters.map((f: FilterParam) => f.path));
    this.checkPaths(this.req.query.logic.map((l) => l.path));
    this.checkPaths(this.req.query.order.map((o) => o.path));
    this.checkPaths(this.req.query.embeddedRanges.map((r) => r.path));
    const where = this.whereOf(level, innerExists);
    const whereSql = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
    const from = `FROM ${quoteQualified(root.schema, root.name)} ${level.alias}`;
    const order = this.orderOf(level, embeds);
    const cols = select.length > 0 ? select.join(', ') : 'NULL AS "_"';
    const page = `SELECT ${cols} ${from}${this.lateralSql(level)}${whereSql}${this.groupByOf(level, this.req.query.select)}${order}${this.rangeOf(level)}`;
    const total = this.req.count ? `(SELECT count(*) ${from}${whereSql})` : 'NULL::bigint';
    this.countSource = `SELECT 1 ${from}${whereSql}`;
    if (this.req.format === 'csv') return { sql: ReadBuilder.csvStatement(total, page), params: this.params };
    const body = select.length > 0 ? `coalesce(json_agg(_page), '[]')::text` : `coalesce(json_agg('{}'::json), '[]')::text`;
    return {
      sql: `SELECT ${total} AS total, count(*)::int AS page_count, ${body} AS body FROM (${page}) _page`,
      params: this.params,
    };
  }

  // -------------------------------------------------------------------------------------------------------
  // Aggregates and spreads (PostgREST with db-aggregates-enabled, as hosted Supabase)

  /** Embedded levels: per level alias, the aggregates hoisted out of a to-one spread (output name → function). */
  private readonly hoisting = new Map<string, Map<string, AggregateCall>>();
  /** LATERAL joins of spreads, per level alias (emitted after that level's FROM). */
  private readonly laterals = new Map<string, string[]>();
  /** Output columns of each compiled spread (name, and whether the parent applies an aggregate to it). */
  private readonly spreadOutputs = new Map<SelectItem, Array<{ name: string; aggregated: boolean }>>();

  /** After build(): `SELECT 1 FROM <root> WHERE <filters>`, the rows a count counts (for the planner's estimate). */
  countSource = '';

  /**
   * PostgREST's CSV body: the keys of the first row as header, then each row's record text without its parentheses
   * (PostgreSQL quotes fields holding commas, quotes, spaces or parentheses and doubles quotes; NULL is empty).
   */
  static csvStatement(total: string, page: string): string {
    const header = `(SELECT coalesce(string_agg(k, ','), '') FROM json_object_keys((SELECT row_to_json(_h.*) FROM _csv _h LIMIT 1)) k)`;
    // ROW(_r.*): the whole row even when a column is called _r
    const rows = `(SELECT coalesce(string_agg(substring(ROW(_r.*)::text, 2, length(ROW(_r.*)::text) - 2), E'\\n'), '') FROM _csv _r)`;
    return `WITH _csv AS MATERIALIZED (${page}) SELECT ${total} AS total, (SELECT count(*) FROM _csv)::int AS page_count, ${header} || E'\\n' || ${rows} AS body`;
  }

  /** The name PostgreSQL reports for a level's columns: PostgREST aliases embedded tables `<table>_<depth>`. */
  static errorAlias(level: Level): string {
    return level.path.length === 0 ? level.table.name : `${level.table.name}_${level.path.length}`;
  }

  /** `CAST(sql AS type)` for a cast from the closed list (else 42704 as PostgreSQL), or sql unchanged. */
  static castTo(sql: string, cast: string | null): string {
    if (cast === null) return sql;
    const type = CAST_TYPES[cast.toLowerCase()];
    if (!type) throw new RestError(400, '42704', `type "${cast}" does not exist`, null, null);
    return `CAST(${sql} AS ${quoteIdent(type)})`;
  }

  /**
   * Bare `count` on a table without a `count` column: PostgreSQL reads `alias.count` as `count(alias)` (functional
   * notation), which is how PostgREST answers `rel(count)`. PostgREST does not know it is an aggregate, so it adds
   * no GROUP BY for it (neither do we: other plain columns beside it fail as they would there).
   */
  isLegacyCount(level: Level, item: SelectItem & { type: 'column' }): boolean {
    return item.field.name === 'count' && item.field.jsonPath.length === 0 && !level.table.columnMap.has('count');
  }

  /** Whether a select list aggregates at its own level (its aggregates, or those hoisted from its spreads). */
  itemsAggregate(items: readonly SelectItem[]): boolean {
    return items.some((i) =>
      i.type === 'count' || (i.type === 'column' && i.aggregate !== null) || (i.type === 'embed' && i.spread && this.itemsAggregate(i.select)));
  }

  /** `FN(input)` with the optional output cast; the function name comes from the parser's closed list. */
  static applyAggregate(agg: AggregateCall, input: string): string {
    const fn = { count: 'count', sum: 'sum', avg: 'avg', max: 'max', min: 'min' }[agg.fn];
    return ReadBuilder.castTo(`${fn}(${input})`, agg.cast);
  }

  /** `col.fn()` / `count()`: aggregated here, or (inside a to-one spread) selected raw and hoisted to the parent. */
  aggregateSelect(level: Level, field: Field | null, alias: string | null, inputCast: string | null, agg: AggregateCall): string {
    const input = field === null ? null : ReadBuilder.castTo(this.fieldExpr(level, field).sql, inputCast);
    const name = alias ?? agg.fn;
    const hoist = this.hoisting.get(level.alias);
    if (hoist) {
      hoist.set(name, agg);
      return `${input ?? '1'} AS ${quoteIdent(name)}`;
    }
    return `${ReadBuilder.applyAggregate(agg, input ?? '*')} AS ${quoteIdent(name)}`;
  }

  /** Output columns of a compiled select list, in order, with whether each is an aggregate at this level. */
  outputColumns(level: Level, items: readonly SelectItem[]): Array<{ name: string; aggregated: boolean }> {
    const hoisted = this.hoisting.has(level.alias);
    const out: Array<{ name: string; aggregated: boolean }> = [];
    for (const item of items) {
      switch (item.type) {
        case 'star':
          for (const c of level.table.columns) out.push({ name: c.name, aggregated: false });
          break;
        case 'count':
          out.push({ name: item.alias ?? 'count', aggregated: !hoisted });
          break;
        case 'column':
          if (item.aggregate) out.push({ name: item.alias ?? item.aggregate.fn, aggregated: !hoisted });
          else if (this.isLegacyCount(level, item)) out.push({ name: item.alias ?? 'count', aggregated: false });
          else out.push({ name: ReadBuilder.outputName(item.field, item.alias), aggregated: false });
          break;
        case 'embed':
          if (item.spread) out.push(...(this.spreadOutputs.get(item) ?? []));
          else out.push({ name: item.alias ?? item.relation, aggregated: false });
          break;
      }
    }
    return out;
  }

  /** ` GROUP BY <positions of the plain columns>` when the level aggregates (PostgREST's automatic GROUP BY). */
  groupByOf(level: Level, items: readonly SelectItem[]): string {
    if (this.hoisting.has(level.alias) || !this.itemsAggregate(items)) return '';
    const cols = this.outputColumns(level, items);
    if (!cols.some((c) => c.aggregated)) return '';
    const plain = cols.flatMap((c, i) => (c.aggregated ? [] : [String(i + 1)]));
    return plain.length === 0 ? '' : ` GROUP BY ${plain.join(', ')}`;
  }

  /**
   * An embed's select item. In a level that aggregates, PostgREST groups by the embed's JSON: the correlated
   * subquery moves to a LATERAL join (a subquery in the select list could not reference the ungrouped parent
   * columns) and becomes jsonb (json has no equality for GROUP BY).
   */
  embedColumn(level: Level, subquery: string, name: string, grouped: boolean): string {
    if (!grouped) return `${subquery} AS ${quoteIdent(name)}`;
    const g = `_g${this.nextAlias()}`;
    const list = this.laterals.get(level.alias) ?? [];
    list.push(`LEFT JOIN LATERAL (SELECT ${subquery}::jsonb AS v) ${g} ON TRUE`);
    this.laterals.set(level.alias, list);
    return `${g}.v AS ${quoteIdent(name)}`;
  }

  /** The LATERAL joins the spreads of a level added (to follow its `FROM table alias`). */
  lateralSql(level: Level): string {
    const l = this.laterals.get(level.alias);
    return l === undefined ? '' : ` ${l.join(' ')}`;
  }

  /**
   * `...rel(cols)`: a to-one spread puts the related row's columns in the parent object (LEFT JOIN LATERAL; its
   * aggregates are hoisted to the parent, grouped by the parent's other columns); a to-many spread gives one JSON
   * array per column (PostgREST 12+). Aggregates in a to-many spread: PGRST127, as PostgREST.
   */
  spreadSelect(level: Level, item: SelectItem & { type: 'embed' }, innerExists: string[], embeds: Map<string, { rel: Relationship; level: Level }>): string[] {
    const rel = resolveEmbed(this.req.cache, { schema: level.table.schema, source: level.table.name, embed: item.relation, hint: item.hint });
    const target = findTable(this.req.cache, rel.target.schema, rel.target.name);
    if (!target) throw new RestError(400, 'PGRST200', `Could not find the table '${rel.target.schema}.${rel.target.name}' in the schema cache`, null, null);
    const child: Level = { table: target, alias: this.nextAlias(), path: [...level.path, item.relation] };
    this.knownPaths.add(pathKey(child.path));
    embeds.set(item.relation, { rel, level: child });
    const toOne = isToOne(rel);
    if (!toOne && this.itemsAggregate(item.select)) {
      throw new RestError(400, 'PGRST127', 'Feature not implemented', 'Aggregates are not implemented for one-to-many or many-to-many spreads.', null);
    }
    if (toOne) this.hoisting.set(child.alias, new Map());
    const childEmbeds = new Map<string, { rel: Relationship; level: Level }>();
    const childInner: string[] = [];
    const childSelect = this.selectList(child, item.select, childInner, childEmbeds);
    const names = this.outputColumns(child, item.select).map((c) => c.name);
    const source = this.embedSource(rel, level, child);
    const conds = [...source.conds, ...this.whereOf(child, childInner)];
    const from = `FROM ${source.from}${this.lateralSql(child)}${conds.length > 0 ? ` WHERE ${conds.join(' AND ')}` : ''}`;
    const s = `_${child.alias}`;
    const cols = childSelect.length > 0 ? childSelect.join(', ') : 'NULL AS "_"';
    let lateral: string;
    if (toOne) {
      lateral = `LEFT JOIN LATERAL (SELECT ${cols} ${from}${this.orderOf(child, childEmbeds)}) ${s} ON TRUE`;
    } else {
      const r = `_r${child.alias}`;
      const arrays = names.map((n) => `coalesce(json_agg(${r}.${quoteIdent(n)}), '[]')::jsonb AS ${quoteIdent(n)}`);
      const inner = `SELECT ${cols} ${from}${this.orderOf(child, childEmbeds)}${this.rangeOf(child)}`;
      lateral = `LEFT JOIN LATERAL (SELECT ${arrays.length > 0 ? arrays.join(', ') : 'NULL AS "_"'} FROM (${inner}) ${r}) ${s} ON TRUE`;
    }
    const list = this.laterals.get(level.alias) ?? [];
    list.push(lateral);
    this.laterals.set(level.alias, list);
    if (item.joinType === 'inner') innerExists.push(`EXISTS (SELECT 1 ${from})`);
    const hoisted = this.hoisting.get(child.alias);
    const parentHoist = this.hoisting.get(level.alias);
    const out: string[] = [];
    const outputs: Array<{ name: string; aggregated: boolean }> = [];
    for (const n of names) {
      const ref = `${s}.${quoteIdent(n)}`;
      const agg = hoisted?.get(n);
      if (agg !== undefined && parentHoist === undefined) {
        out.push(`${ReadBuilder.applyAggregate(agg, ref)} AS ${quoteIdent(n)}`);
        outputs.push({ name: n, aggregated: true });
      } else {
        if (agg !== undefined) parentHoist?.set(n, agg); // a spread inside a spread: hoist further up
        out.push(`${ref} AS ${quoteIdent(n)}`);
        outputs.push({ name: n, aggregated: false });
      }
    }
    this.spreadOutputs.set(item, outputs);
    return out;
  }

  checkPaths(paths: string[][]): void {
    for (const p of paths) {
      if (!this.knownPaths.has(pathKey(p))) {
        throw new RestError(400, 'PGRST108', `'${p.join('.')}' is not an embedded resource in this request`, null, `Verify that '${p.join('.')}' is included in the 'select' query parameter.`);
      }
    }
  }
}

/** The statement whose planner estimate answers `count=planned` (`SELECT 1 FROM <table> WHERE <filters>`). */
export function buildCountSource(req: ReadRequest): BuiltStatement {
  const b = new ReadBuilder(req);
  b.build();
  return { sql: b.countSource, params: b.params };
}

/** An embed that selects nothing (`users()`, or only embeds that select nothing): not part of the output. */
function isEmptyEmbed(item: SelectItem & { type: 'embed' }): boolean {
  return !item.spread && item.select.every((s) => s.type === 'embed' && isEmptyEmbed(s));
}

/** The computed field `name` of a table or view: a one-argument function of its row type returning one value. */
export function computedFieldFunction(cache: SchemaCache, schema: string, table: string, name: string): RowFunction | undefined {
  return (cache.rowFunctions ?? []).find(
    (fn) => fn.name === name && fn.schema === schema && fn.argSchema === schema && fn.argTable === table && !fn.returnsSet && fn.returnType !== 'void',
  );
}

/** Builds the statement for a read; throws RestError for unknown names and unsupported features. */
export function buildRead(req: ReadRequest): BuiltStatement {
  try {
    return new ReadBuilder(req).build();
  } catch (e) {
    throw relationshipErrorFirst(req.cache, req.schema, req.table, req.query.select, e);
  }
}

/** Errors PostgreSQL raises when it runs PostgREST's query (PostgREST reports them after its planning errors). */
const EXECUTION_ERRORS: ReadonlySet<string> = new Set(['42703', '42704', '42883', 'PGRST127']);

/**
 * PostgREST resolves every relationship of `select` while planning, before PostgreSQL sees a column: a request with
 * both an unknown column and an unknown relationship answers PGRST200/PGRST201. Our builder checks names as it
 * meets them, so after such an error this walks the embeds and throws the first relationship error, if any.
 */
export function relationshipErrorFirst(cache: SchemaCache, schema: string, table: string, select: readonly SelectItem[], error: unknown): unknown {
  if (!(error instanceof RestError) || !EXECUTION_ERRORS.has(error.code)) return error;
  const walk = (source: Table, items: readonly SelectItem[]): void => {
    for (const item of items) {
      if (item.type !== 'embed') continue;
      const rel = resolveEmbed(cache, { schema: source.schema, source: source.name, embed: item.relation, hint: item.hint });
      const target = findTable(cache, rel.target.schema, rel.target.name);
      if (target) walk(target, item.select);
    }
  };
  const root = findTable(cache, schema, table);
  try {
    if (root) walk(root, select);
  } catch (relError) {
    if (relError instanceof RestError) return relError;
  }
  return error;
}
