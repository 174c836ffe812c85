/**
 * Relationship resolution for resource embedding (`select=*,owner:profiles(name)`), following PostgREST:
 *
 * - many-to-one: a foreign key on the source references the target (`todos.owner_id → profiles`);
 * - one-to-many: a foreign key on the target references the source (`lists ← todos.list_id`);
 * - one-to-one: either of the above when the FK columns are also a unique key of the table holding them
 *   (the embedded value is then an object, not an array, in both directions);
 * - many-to-many: through a junction table whose two foreign keys (to the source and to the target) both
 *   lie within its primary key or one unique key.
 *
 * The embed name may be the target table, an FK constraint name, or an FK column of the source (the last two
 * not when the target is a view); a `!hint` (constraint name, FK column, referenced column, or junction table)
 * narrows the candidates of a target named by its table. No candidate: PGRST200 (400). Several: PGRST201 (300)
 * listing them in `details`. As in PostgREST:
 *
 * - views carry the foreign keys of the table columns they expose (`cache.viewForeignKeys`);
 * - a function whose one argument is the source's row type and which returns a table's or view's rows is a
 *   computed relationship, embedded by the function's name (to-one unless SETOF without ROWS 1); it replaces
 *   the FK relationships to a table of the same name;
 * - a self-referencing FK gives two relationships told apart by convention: the table name embeds the children
 *   (one-to-many, `!fk_column` picks the FK when there are several), the FK column embeds the parent.
 */
import { RestError } from './errors.ts';
import { findTable, type ForeignKey, type SchemaCache, type Table } from './schema-cache.ts';

export type Cardinality = 'many-to-one' | 'one-to-many' | 'one-to-one' | 'many-to-many';

export interface TableRef {
  schema: string;
  name: string;
}

export interface Junction {
  table: TableRef;
  /** FK of the junction table to the source. */
  sourceConstraint: string;
  /** Junction columns referencing the source, and the source columns they reference (pairwise). */
  sourceJunctionColumns: string[];
  sourceColumns: string[];
  /** FK of the junction table to the target. */
  targetConstraint: string;
  targetJunctionColumns: string[];
  targetColumns: string[];
}

export interface Relationship {
  cardinality: Cardinality;
  source: TableRef;
  target: TableRef;
  /** FK constraint name (for many-to-many, the junction table's FK to the target). */
  constraint: string;
  /**
   * Join condition for direct relationships: source.sourceColumns[i] = target.targetColumns[i].
   * For many-to-many these are empty; use `junction`.
   */
  sourceColumns: string[];
  targetColumns: string[];
  /** True when the FK is held by the source (many-to-one, or the child side of one-to-one). */
  sourceHoldsKey: boolean;
  junction: Junction | null;
  isSelf: boolean;
  /** Computed relationship: the function called with the source row (no join columns). Absent otherwise. */
  computed?: TableRef | null;
}

/** True when the embedded value is a single object (or null) rather than an array. */
export const isToOne = (r: Relationship): boolean => r.cardinality === 'many-to-one' || r.cardinality === 'one-to-one';

function isUniqueOn(table: Table | undefined, columns: readonly string[]): boolean {
  if (!table) return false;
  return table.uniqueKeys.some((key) => key.length === columns.length && key.every((c) => columns.includes(c)));
}

function coveredByKey(table: Table, columns: readonly string[]): boolean {
  const keys = table.primaryKey.length > 0 ? [table.primaryKey, ...table.uniqueKeys] : table.uniqueKeys;
  return keys.some((key) => columns.every((c) => key.includes(c)));
}

const ref = (schema: string, name: string): TableRef => ({ schema, name });

/** FKs held by the table (or, through views, by the view), then FKs referencing it. */
function keysOf(cache: SchemaCache, t: Table): { held: ForeignKey[]; referencing: ForeignKey[] } {
  const derived = cache.viewForeignKeys ?? [];
  if (derived.length === 0) return { held: t.foreignKeys, referencing: t.referencedBy };
  return {
    held: [...t.foreignKeys, ...derived.filter((fk) => fk.schema === t.schema && fk.table === t.name)],
    referencing: [...t.referencedBy, ...derived.filter((fk) => fk.refSchema === t.schema && fk.refTable === t.name)],
  };
}

/** One-to-one: the FK columns are unique on the table holding them (for a key seen through a view, on the real holder). */
function isOneToOne(cache: SchemaCache, fk: ForeignKey): boolean {
  if (fk.holder) return isUniqueOn(findTable(cache, fk.holder.schema, fk.holder.table), fk.holder.columns);
  return isUniqueOn(findTable(cache, fk.schema, fk.table), fk.columns);
}

/** Computed relationships of a table or view: functions of its row type returning rows of a relation in the schema. */
export function computedRelationshipsFrom(cache: SchemaCache, schema: string, table: string): Relationship[] {
  const out: Relationship[] = [];
  for (const fn of cache.rowFunctions ?? []) {
    if (fn.schema !== schema || fn.argSchema !== schema || fn.argTable !== table) continue;
    if (!fn.returnRelation || fn.returnRelation.schema !== schema) continue;
    const toOne = !fn.returnsSet || fn.rows === 1;
    out.push({
      cardinality: toOne ? 'many-to-one' : 'one-to-many',
      source: ref(schema, table),
      target: ref(fn.returnRelation.schema, fn.returnRelation.name),
      constraint: fn.name,
      sourceColumns: [],
      targetColumns: [],
      sourceHoldsKey: false,
      junction: null,
      isSelf: fn.returnRelation.name === table,
      computed: ref(fn.schema, fn.name),
    });
  }
  return out;
}

/** Every relationship whose source is the given table (both ends in the table's schema). */
export function relationshipsFrom(cache: SchemaCache, schema: string, table: string): Relationship[] {
  const src = findTable(cache, schema, table);
  if (!src) return [];
  const computed = computedRelationshipsFrom(cache, schema, table);
  const out: Relationship[] = [];
  const inSchema = (fk: ForeignKey) => fk.schema === schema && fk.refSchema === schema;
  const keys = keysOf(cache, src);

  // FK on the source → to-one
  for (const fk of keys.held) {
    if (!inSchema(fk)) continue;
    const oneToOne = isOneToOne(cache, fk);
    out.push({
      cardinality: oneToOne ? 'one-to-one' : 'many-to-one',
      source: ref(schema, table),
      target: ref(fk.refSchema, fk.refTable),
      constraint: fk.name,
      sourceColumns: fk.columns,
      targetColumns: fk.refColumns,
      sourceHoldsKey: true,
      junction: null,
      isSelf: fk.refTable === table,
    });
  }
  // FK on the target → to-many (or one-to-one when the FK columns are unique on the target)
  for (const fk of keys.referencing) {
    if (!inSchema(fk)) continue;
    out.push({
      cardinality: isOneToOne(cache, fk) ? 'one-to-one' : 'one-to-many',
      source: ref(schema, table),
      target: ref(fk.schema, fk.table),
      constraint: fk.name,
      sourceColumns: fk.refColumns,
      targetColumns: fk.columns,
      sourceHoldsKey: false,
      junction: null,
      isSelf: fk.table === table,
    });
  }
  // many-to-many through a junction table that references the source
  for (const toSource of keys.referencing) {
    if (!inSchema(toSource)) continue;
    const junction = findTable(cache, toSource.schema, toSource.table);
    if (!junction || junction.name === table) continue;
    for (const toTarget of keysOf(cache, junction).held) {
      if (toTarget.name === toSource.name || !inSchema(toTarget) || toTarget.refTable === junction.name) continue;
      // both FKs must lie within one key of the junction (its primary key, or a unique key)
      if (!coveredByKey(junction, [...toSource.columns, ...toTarget.columns])) continue;
      out.push({
        cardinality: 'many-to-many',
        source: ref(schema, table),
        target: ref(toTarget.refSchema, toTarget.refTable),
        constraint: toTarget.name,
        sourceColumns: [],
        targetColumns: [],
        sourceHoldsKey: false,
        junction: {
          table: ref(junction.schema, junction.name),
          sourceConstraint: toSource.name,
          sourceJunctionColumns: toSource.columns,
          sourceColumns: toSource.refColumns,
          targetConstraint: toTarget.name,
          targetJunctionColumns: toTarget.columns,
          targetColumns: toTarget.refColumns,
        },
        isSelf: toTarget.refTable === table,
      });
    }
  }
  // a computed relationship named like a table replaces the FK relationships to that table
  const replaced = new Set(computed.map((r) => r.constraint));
  return [...out.filter((r) => !replaced.has(r.target.name)), ...computed];
}

// PostgREST's matchers (Plan.hs findRel). Constraint and column matchers never match many-to-many.
const matchesConstraint = (name: string, r: Relationship): boolean => !r.junction && name === r.constraint;
const matchesSourceColumn = (name: string, r: Relationship): boolean =>
  !r.junction && r.sourceColumns.length === 1 && r.sourceColumns[0] === name;
const matchesTargetColumn = (name: string, r: Relationship): boolean =>
  !r.junction && r.targetColumns.length === 1 && r.targetColumns[0] === name;

function matchesHint(hint: string, r: Relationship): boolean {
  if (r.junction) return hint === r.junction.table.name;
  // the constraint, or (single-column FKs) the column on either side
  return matchesConstraint(hint, r) || matchesSourceColumn(hint, r) || matchesTargetColumn(hint, r);
}

/** Whether relationship `r` is the one meant by `embed` (and `hint`), following PostgREST's rules. */
function isCandidate(cache: SchemaCache, r: Relationship, embed: string, hint: string | null): boolean {
  // computed relationship: by the function's name only (a hint is ignored)
  if (r.computed) return r.computed.name === embed;
  if (r.isSelf) {
    // one FK, two directions: the table name embeds the children (narrowed by the FK column as hint),
    // the FK column embeds the parent. Self one-to-one and many-to-many are not embeddable (as in PostgREST).
    if (hint === null) {
      return (r.target.name === embed && r.cardinality === 'one-to-many') || (r.cardinality === 'many-to-one' && matchesSourceColumn(embed, r));
    }
    return r.target.name === embed && r.cardinality === 'one-to-many' && matchesTargetColumn(hint, r);
  }
  if (hint !== null) return r.target.name === embed && matchesHint(hint, r);
  if (r.target.name === embed) return true;
  // /todos?select=todos_owner_id_fkey(*) and /todos?select=owner_id(*): not towards a view
  const kind = findTable(cache, r.target.schema, r.target.name)?.kind;
  if (kind === 'view' || kind === 'materialized_view') return false;
  return matchesConstraint(embed, r) || matchesSourceColumn(embed, r);
}

export interface EmbedRequest {
  schema: string;
  /** The table being selected from (or the parent embed's table). */
  source: string;
  /** The embed name from `select`: table, FK constraint or FK column. */
  embed: string;
  hint?: string | null;
}

function describeRelationship(r: Relationship): Record<string, string> {
  const fmt = (cols: string[]) => `(${cols.join(', ')})`;
  if (r.junction) {
    const j = r.junction;
    return {
      cardinality: r.cardinality,
      embedding: `${r.source.name} with ${r.target.name}`,
      relationship: `${j.table.name} using ${j.sourceConstraint}${fmt(j.sourceJunctionColumns)} and ${j.targetConstraint}${fmt(j.targetJunctionColumns)}`,
    };
  }
  return {
    cardinality: r.cardinality,
    embedding: `${r.source.name} with ${r.target.name}`,
    relationship: `${r.constraint} using ${r.source.name}${fmt(r.sourceColumns)} and ${r.target.name}${fmt(r.targetColumns)}`,
  };
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return 99;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * Finds the unique relationship for an embed, or throws RestError PGRST200 (400, none) / PGRST201 (300,
 * ambiguous) with PostgREST's messages.
 */
export function resolveEmbed(cache: SchemaCache, req: EmbedRequest): Relationship {
  const { schema, source, embed } = req;
  const hint = req.hint ?? null;
  const all = relationshipsFrom(cache, schema, source);
  const unique = all.filter((r) => isCandidate(cache, r, embed, hint));
  if (unique.length === 1) return unique[0]!;
  if (unique.length === 0) {
    const names = [...new Set(all.map((r) => r.target.name))];
    let best: string | null = null;
    let bestDistance = Infinity;
    for (const n of names) {
      const d = editDistance(n.toLowerCase(), embed.toLowerCase());
      if (d < bestDistance && d <= Math.max(2, Math.floor(embed.length / 3))) {
        best = n;
        bestDistance = d;
      }
    }
    throw new RestError(
      400,
      'PGRST200',
      `Could not find a relationship between '${source}' and '${embed}' in the schema cache`,
      `Searched for a foreign key relationship between '${source}' and '${embed}'${hint === null ? '' : ` using the hint '${hint}'`} in the schema '${schema}', but no matches were found.`,
      best !== null && best !== embed ? `Perhaps you meant '${best}' instead of '${embed}'.` : null,
    );
  }
  const hints = unique.map((r) => `'${r.target.name}!${r.junction ? r.junction.table.name : r.constraint}'`);
  throw new RestError(
    300,
    'PGRST201',
    `Could not embed because more than one relationship was found for '${source}' and '${embed}'`,
    unique.map(describeRelationship),
    `Try changing '${embed}' to one of the following: ${hints.join(', ')}. Find the desired relationship in the 'details' key.`,
  );
}
