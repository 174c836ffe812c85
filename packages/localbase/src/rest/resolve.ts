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
 * The embed name may be the target table, an FK constraint name, or the FK column of a to-one
 * relationship; a `!hint` (constraint name, FK column, referenced column, or junction table) narrows the
 * candidates. No candidate: PGRST200 (400). Several: PGRST201 (300) listing them in `details`.
 * Relationships through views (PostgREST infers them from the view definition) are not derived here.
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

/** Every relationship whose source is the given table (both ends in the table's schema). */
export function relationshipsFrom(cache: SchemaCache, schema: string, table: string): Relationship[] {
  const src = findTable(cache, schema, table);
  if (!src) return [];
  const out: Relationship[] = [];
  const inSchema = (fk: ForeignKey) => fk.schema === schema && fk.refSchema === schema;

  // FK on the source → to-one
  for (const fk of src.foreignKeys) {
    if (!inSchema(fk)) continue;
    const oneToOne = isUniqueOn(src, fk.columns);
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
  for (const fk of src.referencedBy) {
    if (!inSchema(fk)) continue;
    const child = findTable(cache, fk.schema, fk.table);
    out.push({
      cardinality: isUniqueOn(child, fk.columns) ? 'one-to-one' : 'one-to-many',
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
  for (const toSource of src.referencedBy) {
    if (!inSchema(toSource)) continue;
    const junction = findTable(cache, toSource.schema, toSource.table);
    if (!junction || junction.name === table) continue;
    for (const toTarget of junction.foreignKeys) {
      if (toTarget === toSource || !inSchema(toTarget) || toTarget.refTable === junction.name) continue;
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
  return out;
}

function matchesConstraint(name: string, r: Relationship): boolean {
  if (r.junction) return name === r.junction.sourceConstraint || name === r.junction.targetConstraint;
  return name === r.constraint;
}

function matchesHint(hint: string, r: Relationship): boolean {
  if (matchesConstraint(hint, r)) return true;
  if (r.junction) return hint === r.junction.table.name;
  // single-column FKs: the hint may name the column on either side
  return (
    (r.sourceColumns.length === 1 && hint === r.sourceColumns[0]) || (r.targetColumns.length === 1 && hint === r.targetColumns[0])
  );
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
  const candidates = all.filter((r) => {
    if (r.target.name === embed && (hint === null || matchesHint(hint, r))) return true;
    // /todos?select=todos_owner_id_fkey(*)
    if (matchesConstraint(embed, r) && (hint === null || matchesHint(hint, r))) return true;
    // /todos?select=owner_id(*)  — the FK column of a to-one relationship
    return hint === null && r.sourceHoldsKey && r.sourceColumns.length === 1 && r.sourceColumns[0] === embed;
  });
  // The same FK can match both by target name and by column; keep each relationship once.
  const unique = candidates.filter((r, i) => candidates.indexOf(r) === i);
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
