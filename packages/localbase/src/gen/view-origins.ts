/**
 * Which view columns are plain references to which table columns, read from the view's stored query tree
 * (`pg_rewrite.ev_action::text`): in the view's own target list, each entry that is a bare column reference carries
 * `:resorigtbl <oid> :resorigcol <attnum>` (PostgreSQL records the origin of such columns when it parses the view).
 * The generator uses this to repeat foreign keys through views, as PostgREST and the Supabase CLI do.
 */
import { viewColumnOrigins as restViewColumnOrigins } from '../rest/view-columns.ts';

export interface ViewColumnOrigin {
  /** attnum of the view column */
  resno: number;
  /** oid of the relation the column comes from (a table or another view) */
  table: number;
  /** attnum in that relation */
  column: number;
}

/**
 * The origins of the columns of the view whose `_RETURN` rule is `evAction` (an empty list when unreadable): the
 * node-tree reader of the REST schema cache (rest/view-columns.ts), in the generator's terms.
 */
export function viewColumnOrigins(evAction: string): ViewColumnOrigin[] {
  return restViewColumnOrigins(evAction).map((o) => ({ resno: o.position, table: Number(o.relation), column: o.column }));
}

export interface Relationship {
  name: string;
  schema: string;
  relation: string;
  columns: string[];
  oneToOne: boolean;
  refSchema: string;
  refRelation: string;
  refColumns: string[];
}

interface RelationInfo {
  oid: number;
  schema: string;
  name: string;
  columns: Array<{ name: string; num: number }>;
  /** Views: their `_RETURN` rule as text. */
  definition?: string | null;
}

/** Every combination picking one entry of each list. */
function combinations<T>(lists: T[][]): T[][] {
  return lists.reduce<T[][]>((acc, list) => acc.flatMap((prefix) => list.map((x) => [...prefix, x])), [[]]);
}

/**
 * The foreign keys between relations, plus the same keys seen through views: a view that shows a key's columns as
 * plain column references (directly or through other views) takes part in the relationship in the table's place,
 * on either side or both. Views, tables and keys must come from the generated schemas.
 */
export function relationshipsWithViews(
  relations: RelationInfo[],
  foreignKeys: Array<Omit<Relationship, 'oneToOne'> & { oneToOne: boolean }>,
): Relationship[] {
  const byOid = new Map(relations.map((r) => [r.oid, r]));
  const direct = new Map<number, ViewColumnOrigin[]>();
  for (const r of relations) if (r.definition) direct.set(r.oid, viewColumnOrigins(r.definition));
  // (view oid, view column name) → (base relation oid, column name), following views over views.
  const baseOf = (table: number, column: number, depth = 0): { table: number; column: string } | null => {
    const rel = byOid.get(table);
    if (!rel) return null;
    const name = rel.columns.find((c) => c.num === column)?.name;
    if (!name) return null;
    const origins = direct.get(table);
    if (!origins) return { table, column: name };
    if (depth > 16) return null;
    const o = origins.find((x) => x.resno === column);
    return o ? baseOf(o.table, o.column, depth + 1) : null;
  };
  const views: Array<{ view: RelationInfo; columns: Array<{ name: string; table: number; column: string }> }> = [];
  for (const [oid, origins] of direct) {
    const view = byOid.get(oid)!;
    const columns = origins.flatMap((o) => {
      const name = view.columns.find((c) => c.num === o.resno)?.name;
      const base = baseOf(o.table, o.column);
      return name && base ? [{ name, ...base }] : [];
    });
    views.push({ view, columns });
  }
  const key = (schema: string, name: string) => `${schema}.${name}`;
  const oidOf = new Map(relations.map((r) => [key(r.schema, r.name), r.oid]));
  /** The views that show all of `columns` of relation `oid`, once per way of picking their view columns. */
  const through = (oid: number | undefined, columns: string[]) =>
    oid === undefined
      ? []
      : views.flatMap(({ view, columns: shown }) =>
          combinations(columns.map((c) => shown.filter((s) => s.table === oid && s.column === c).map((s) => s.name))).map(
            (picked) => ({ view, picked }),
          ),
        );
  const out: Relationship[] = [];
  for (const fk of foreignKeys) {
    out.push(fk);
    const sources = through(oidOf.get(key(fk.schema, fk.relation)), fk.columns);
    const targets = through(oidOf.get(key(fk.refSchema, fk.refRelation)), fk.refColumns);
    for (const t of targets) out.push({ ...fk, refSchema: t.view.schema, refRelation: t.view.name, refColumns: t.picked });
    for (const s of sources) {
      out.push({ ...fk, schema: s.view.schema, relation: s.view.name, columns: s.picked });
      for (const t of targets)
        out.push({ ...fk, schema: s.view.schema, relation: s.view.name, columns: s.picked, refSchema: t.view.schema, refRelation: t.view.name, refColumns: t.picked });
    }
  }
  return out;
}
