/**
 * `localbase gen types typescript`: renders an Introspection (introspect.ts) as the `database.types.ts` that
 * `supabase gen types typescript` writes, so `createClient<Database>()` types queries, inserts and rpc calls the
 * same way. The layout follows that file (prettier's defaults: double quotes, no semicolons, 2 spaces); the code is
 * our own. Differences from the Supabase CLI are listed in docs/decisions/028-generated-database-types-and-cli-commands.md.
 */
import type { GenFunction, GenFunctionArg, GenRelation, Introspection, PgType } from './introspect.ts';

export interface RenderOptions {
  /** The `__InternalSupabase.PostgrestVersion` marker: the PostgREST dialect the server speaks. */
  postgrestVersion?: string;
}

/** PostgREST version localbase's /rest/v1 answers like (PGRST303, max-affected): typed features follow it. */
export const LOCALBASE_POSTGREST_VERSION = '13';

const JSON_TYPE = 'export type Json =\n  | string\n  | number\n  | boolean\n  | null\n  | { [key: string]: Json | undefined }\n  | Json[]';

const NUMBER_TYPES = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric']);
const STRING_TYPES = new Set([
  'bytea', 'bpchar', 'varchar', 'date', 'text', 'citext', 'time', 'timetz', 'timestamp', 'timestamptz', 'uuid',
  'vector', 'interval',
]);
/** Types PostgREST accepts as the single unnamed argument of an rpc (the request body as one value). */
const SINGLE_UNNAMED_ARG_TYPES = new Set(['json', 'jsonb', 'text']);
const INPUT_MODES = new Set(['i', 'b', 'v']);
const MAX_WIDTH = 80;

const byName = (a: string, b: string) => a.localeCompare(b, 'en');
const q = (s: string) => JSON.stringify(s);
/** An object key as prettier writes it: bare when it is an identifier, quoted otherwise. */
const key = (s: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(s) ? s : q(s));

/** Indents every line but the first by `n` spaces. */
function indentRest(text: string, n: number): string {
  return text.replace(/\n/g, `\n${' '.repeat(n)}`);
}

/** `{ a: x; b: y }` on one line when it fits in `width` from column `indent`, else one member per line (relative text). */
function objectType(members: string[], indent: number, width = MAX_WIDTH): string {
  if (members.length === 0) return '{}';
  const oneLine = `{ ${members.join('; ')} }`;
  if (!members.some((m) => m.includes('\n')) && indent + oneLine.length <= width) return oneLine;
  return `{\n${members.map((m) => '  ' + indentRest(m, 2)).join('\n')}\n}`;
}

/**
 * A block that is always written one member per line (Tables, Row, …), or the empty mapped type. Text is relative:
 * the enclosing block indents it. (`_indent`, the absolute column, is kept for symmetry with objectType.)
 */
function block(members: string[], _indent: number, empty = '[_ in never]: never'): string {
  if (members.length === 0 && empty === '') return '{}';
  const body = members.length === 0 ? [empty] : members;
  return `{\n${body.map((m) => '  ' + indentRest(m, 2)).join('\n')}\n}`;
}

class Renderer {
  readonly #db: Introspection;
  readonly #types = new Map<number, PgType>();
  readonly #relByOid = new Map<number, GenRelation>();
  readonly #schemas: Set<string>;
  readonly #options: RenderOptions;

  constructor(db: Introspection, options: RenderOptions) {
    this.#db = db;
    this.#options = options;
    this.#schemas = new Set(db.schemas);
    for (const t of db.types) this.#types.set(t.oid, t);
    for (const r of db.relations) this.#relByOid.set(r.oid, r);
  }

  /** The TypeScript type of a PostgreSQL type (by oid), as seen from `schema`. */
  tsType(oid: number): string {
    const t = this.#types.get(oid);
    if (!t) return 'unknown';
    if (t.kind === 'd' && t.base) return this.tsType(t.base);
    if (t.elem && t.name.startsWith('_')) {
      const elem = this.tsType(t.elem);
      return /[ |&]/.test(elem) ? `(${elem})[]` : `${elem}[]`;
    }
    if (t.schema === 'pg_catalog') {
      if (t.name === 'bool') return 'boolean';
      if (NUMBER_TYPES.has(t.name)) return 'number';
      if (STRING_TYPES.has(t.name)) return 'string';
      if (t.name === 'json' || t.name === 'jsonb') return 'Json';
      if (t.name === 'void') return 'undefined';
      if (t.name === 'record') return 'Record<string, unknown>';
      return 'unknown';
    }
    if (STRING_TYPES.has(t.name) || t.name === 'vector') return 'string'; // citext, vector from extensions
    const exposed = this.#schemas.has(t.schema);
    if (t.kind === 'e') {
      if (exposed) return `Database[${q(t.schema)}]["Enums"][${q(t.name)}]`;
      const e = this.#db.enums.find((x) => x.schema === t.schema && x.name === t.name);
      return e ? e.values.map(q).join(' | ') : 'unknown';
    }
    if (t.kind === 'c') {
      if (!exposed) return 'unknown';
      if (t.relkind === 'c') return `Database[${q(t.schema)}]["CompositeTypes"][${q(t.name)}]`;
      const rel = this.#relByOid.get(t.relid);
      if (!rel) return 'unknown';
      return `Database[${q(rel.schema)}][${q(isView(rel) ? 'Views' : 'Tables')}][${q(rel.name)}]["Row"]`;
    }
    return 'unknown';
  }

  nullable(ts: string, isNullable: boolean): string {
    return isNullable && ts !== 'unknown' ? `${ts} | null` : ts;
  }

  /** The relation (in a generated schema) or standalone composite type whose row type is `oid`, by name. */
  rowTypeTarget(oid: number): string | null {
    const t = this.#types.get(oid);
    if (!t || t.kind !== 'c' || !t.relid) return null;
    const rel = this.#relByOid.get(t.relid);
    if (rel) return rel.name;
    return t.relkind === 'c' ? t.name : null;
  }

  isRowType(oid: number): boolean {
    const t = this.#types.get(oid);
    return Boolean(t && t.kind === 'c' && t.relid);
  }

  typeName(oid: number): string {
    return this.#types.get(oid)?.name ?? 'unknown';
  }

  /** Functions PostgREST can call over /rpc (the rest are left out, as the Supabase CLI does). */
  callable(fn: GenFunction): boolean {
    const returned = this.#types.get(fn.returnType);
    if (returned?.schema === 'pg_catalog' && (returned.name === 'trigger' || returned.name === 'event_trigger')) return false;
    const inArgs = inputArgs(fn);
    if (inArgs.length === 0 || inArgs.every((a) => a.name !== '')) return true;
    const singleBodyType = (a: GenFunctionArg) => SINGLE_UNNAMED_ARG_TYPES.has(this.typeName(a.type));
    if (inArgs.every((a) => a.name !== '' || (a.hasDefault && singleBodyType(a)))) return true;
    const only = inArgs.length === 1 ? inArgs[0]! : undefined;
    return Boolean(only && only.name === '' && (singleBodyType(only) || this.isRowType(only.type)));
  }

  columnsOf(rel: GenRelation) {
    return [...rel.columns].sort((a, b) => byName(a.name, b.name));
  }

  /** The object type of a row: columns sorted by name, nullable ones with `| null`. */
  rowObject(rel: GenRelation, indent: number): string {
    return block(
      this.columnsOf(rel).map((c) => `${key(c.name)}: ${this.nullable(this.tsType(c.type), c.nullable)}`),
      indent,
    );
  }

  /** What a function returns, before the set-returning `[]`. */
  returnType(fn: GenFunction, indent: number): string {
    const tableCols = sortedArgs(fn).filter((a) => a.mode === 't');
    if (tableCols.length > 0) return block(tableCols.map((a) => `${key(a.name)}: ${this.tsType(a.type)}`), indent);
    const t = this.#types.get(fn.returnType);
    const rel = t?.relid ? this.#relByOid.get(t.relid) : undefined;
    if (rel && rel.schema === fn.schema) return this.rowObject(rel, indent);
    return this.tsType(fn.returnType);
  }

  argsType(inArgs: GenFunctionArg[], indent: number): string {
    if (inArgs.length === 0) return 'never';
    return objectType(
      inArgs.map((a) => `${q(a.name) === '""' ? '""' : key(a.name)}${a.hasDefault ? '?' : ''}: ${this.tsType(a.type)}`),
      indent,
    );
  }

  /** Returns and SetofOptions lines of one signature (what postgrest-js reads to type rpc().select()). */
  returnsMembers(fn: GenFunction, indent: number): string[] {
    const target = this.rowTypeTarget(fn.returnType);
    const manyRows = fn.rows > 1;
    let setof: string[] | null = null;
    if (target) setof = [`from: "*"`, `to: ${q(target)}`, `isOneToOne: ${!manyRows}`, `isSetofReturn: ${fn.returnsSet}`];
    const all = sortedArgs(fn);
    if (all.length === 1 && this.isRowType(all[0]!.type) && target) {
      const from = q(this.typeName(all[0]!.type));
      const returnsRelation = fn.returnsSet && Boolean(this.#types.get(fn.returnType)?.relid);
      setof = returnsRelation
        ? [`from: ${from}`, `to: ${q(target)}`, `isOneToOne: ${!manyRows}`, `isSetofReturn: true`]
        : [`from: ${from}`, `to: ${q(target)}`, `isOneToOne: true`, `isSetofReturn: false`];
    }
    // ROWS 1 on a function returning a relation's rows: one row (postgrest-js uses isOneToOne to type it).
    const single = !manyRows && target !== null;
    const members = [`Returns: ${this.returnType(fn, indent)}${fn.returnsSet && !single ? '[]' : ''}`];
    if (setof) members.push(`SetofOptions: ${block(setof, indent)}`);
    return members;
  }

  /** `{ error: true } & "…"` when PostgREST could not pick this overload (PGRST203), else null. */
  overloadError(fn: GenFunction, all: GenFunction[]): string | null {
    if (all.length <= 1) return null;
    const mine = inputArgs(fn);
    const label = (f: GenFunction) =>
      `${f.schema}.${f.name}(${inputArgs(f)
        .map((a) => `${a.name} => ${this.typeName(a.type)}`)
        .join(', ')})`;
    if (mine.length === 0) {
      const other = all.find((f) => f !== fn && inputArgs(f).length === 1 && inputArgs(f)[0]!.name === '' && inputArgs(f)[0]!.hasDefault);
      if (other)
        return `Could not choose the best candidate function between: ${fn.schema}.${fn.name}(), ${fn.schema}.${fn.name}( => ${this.typeName(other.returnType)}). Try renaming the parameters or the function itself in the database so function overloading can be resolved`;
    }
    if (mine.length === 1 && mine[0]!.name !== '') {
      const clash = all.filter(
        (f) => f !== fn && inputArgs(f).length === 1 && inputArgs(f)[0]!.name === mine[0]!.name && inputArgs(f)[0]!.type !== mine[0]!.type,
      );
      if (clash.length > 0) {
        const list = [fn, ...clash].sort((a, b) => inputArgs(a)[0]!.type - inputArgs(b)[0]!.type).map(label);
        return `Could not choose the best candidate function between: ${list.join(', ')}. Try renaming the parameters or the function itself in the database so function overloading can be resolved`;
      }
    }
    return null;
  }

  /** One overload as `{ Args; Returns; SetofOptions? }`, its `{` at column `column`, its members at `indent + 2`. */
  signature(fn: GenFunction, all: GenFunction[], indent: number, column: number): string {
    const inArgs = inputArgs(fn);
    const args = `Args: ${this.argsType(inArgs, indent + 2 + 'Args: '.length)}`;
    const conflict = this.overloadError(fn, all);
    let members: string[];
    // The messages are long: prettier would break `{ error: true }` over three lines, and so do we.
    if (conflict) members = [args, `Returns: {\n  error: true\n} & ${q(conflict)}`];
    else if (inArgs.length === 1 && inArgs[0]!.name === '' && this.isRowType(inArgs[0]!.type) && !this.rowTypeTarget(fn.returnType))
      members = [
        args,
        `Returns: {\n  error: true\n} & ${q(`the function ${fn.schema}.${fn.name} with parameter or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache`)}`,
      ];
    else members = [args, ...this.returnsMembers(fn, indent + 2)];
    return objectType(members, column);
  }

  schemaBlock(schema: string, indent: number): string {
    const rels = this.#db.relations.filter((r) => r.schema === schema).sort((a, b) => byName(a.name, b.name));
    const functions = this.#db.functions
      .filter((f) => f.schema === schema && this.callable(f))
      .sort((a, b) => byName(a.name, b.name));
    const computed = (rel: GenRelation, ind: number) =>
      functions
        .filter((f) => f.identityArgs === rel.name || f.identityArgs === `${rel.schema}.${rel.name}`)
        .map((f) => `${key(f.name)}: ${this.nullable(this.returnType(f, ind), true)}`);
    const rowBlock = (rel: GenRelation, ind: number) =>
      block(
        [
          ...this.columnsOf(rel).map((c) => `${key(c.name)}: ${this.nullable(this.tsType(c.type), c.nullable)}`),
          ...computed(rel, ind + 2),
        ],
        ind,
      );
    const relationships = (rel: GenRelation, _ind: number) => {
      const fks = (this.#db.relationships ?? this.#db.foreignKeys)
        .filter((fk) => fk.schema === rel.schema && fk.relation === rel.name && fk.refSchema === rel.schema)
        .sort(
          (a, b) =>
            byName(a.name, b.name) ||
            byName(a.refRelation, b.refRelation) ||
            byName(JSON.stringify(a.refColumns), JSON.stringify(b.refColumns)),
        );
      if (fks.length === 0) return '[]';
      const list = (xs: string[]) => `[${xs.map(q).join(', ')}]`;
      return `[\n${fks
        .map(
          (fk) =>
            '  ' +
            indentRest(
              block(
                [
                  `foreignKeyName: ${q(fk.name)}`,
                  `columns: ${list(fk.columns)}`,
                  `isOneToOne: ${fk.oneToOne}`,
                  `referencedRelation: ${q(fk.refRelation)}`,
                  `referencedColumns: ${list(fk.refColumns)}`,
                ],
                0,
              ),
              2,
            ) +
            ',',
        )
        .join('\n')}\n]`;
    };
    const writeField = (c: GenRelation['columns'][number], optional: boolean, nullable: boolean) =>
      `${key(c.name)}${optional ? '?' : ''}: ${this.nullable(this.tsType(c.type), nullable)}`;

    const tables = rels
      .filter((r) => !isView(r))
      .map((rel) => {
        const ind = indent + 4;
        const cols = this.columnsOf(rel);
        const readOnly = (c: (typeof cols)[number]) => c.identity === 'a' || c.generated;
        return `${key(rel.name)}: ${block(
          [
            `Row: ${rowBlock(rel, ind + 2)}`,
            `Insert: ${block(
              cols.map((c) =>
                readOnly(c) ? `${key(c.name)}?: never` : writeField(c, c.nullable || c.identity !== '' || c.hasDefault, c.nullable),
              ),
              ind + 2,
            )}`,
            `Update: ${block(
              cols.map((c) => (readOnly(c) ? `${key(c.name)}?: never` : writeField(c, true, c.nullable))),
              ind + 2,
            )}`,
            `Relationships: ${relationships(rel, ind + 2)}`,
          ],
          ind,
        )}`;
      });

    const views = rels.filter(isView).map((rel) => {
      const ind = indent + 4;
      const cols = this.columnsOf(rel);
      const writable = (c: (typeof cols)[number]) => (c.updatable ? writeField(c, true, true) : `${key(c.name)}?: never`);
      const members = [`Row: ${rowBlock(rel, ind + 2)}`];
      if (rel.kind === 'v' && rel.updatable)
        members.push(`Insert: ${block(cols.map(writable), ind + 2)}`, `Update: ${block(cols.map(writable), ind + 2)}`);
      members.push(`Relationships: ${relationships(rel, ind + 2)}`);
      return `${key(rel.name)}: ${block(members, ind)}`;
    });

    const groups = new Map<string, GenFunction[]>();
    for (const f of functions) groups.set(f.name, [...(groups.get(f.name) ?? []), f]);
    const fnMembers = [...groups].map(([name, fns]) => {
      fns.sort((a, b) => byName(a.identityArgs, b.identityArgs) || byName(a.returnTypeName, b.returnTypeName));
      const ind = indent + 4;
      if (fns.length === 1) return `${key(name)}: ${this.signature(fns[0]!, fns, ind, ind + key(name).length + 2)}`;
      return `${key(name)}:\n${fns.map((f) => `  | ${indentRest(this.signature(f, fns, ind + 4, ind + 4), 4)}`).join('\n')}`;
    });

    const enums = this.#db.enums
      .filter((e) => e.schema === schema)
      .sort((a, b) => byName(a.name, b.name))
      .map((e) => `${key(e.name)}: ${e.values.map(q).join(' | ')}`);
    const composites = this.#db.compositeTypes
      .filter((c) => c.schema === schema)
      .sort((a, b) => byName(a.name, b.name))
      .map(
        (c) =>
          `${key(c.name)}: ${block(
            c.attributes.map((a) => `${key(a.name)}: ${this.nullable(this.tsType(a.type), true)}`),
            indent + 4,
            '',
          )}`,
      );
    return block(
      [
        `Tables: ${block(tables, indent + 2)}`,
        `Views: ${block(views, indent + 2)}`,
        `Functions: ${block(fnMembers, indent + 2)}`,
        `Enums: ${block(enums, indent + 2)}`,
        `CompositeTypes: ${block(composites, indent + 2)}`,
      ],
      indent,
    );
  }

  render(): string {
    const schemas = [...this.#db.schemas].sort(byName);
    const version = this.#options.postgrestVersion;
    const head = version
      ? [
          '// Allows to automatically instantiate createClient with right options',
          '// instead of createClient<Database, { PostgrestVersion: \'XX\' }>(URL, KEY)',
          `__InternalSupabase: {\n  PostgrestVersion: ${q(version)}\n}`,
        ]
      : [];
    const database = `export type Database = ${block([...head, ...schemas.map((s) => `${key(s)}: ${this.schemaBlock(s, 2)}`)], 0)}`;
    const constants = `export const Constants = ${block(
      schemas.map((s) => {
        const enums = this.#db.enums
          .filter((e) => e.schema === s)
          .sort((a, b) => byName(a.name, b.name))
          .map((e) => `${key(e.name)}: [${e.values.map(q).join(', ')}],`);
        return `${key(s)}: ${block([`Enums: ${enums.length ? block(enums, 4) : '{}'},`], 2)},`;
      }),
      0,
      '',
    )} as const`;
    return [JSON_TYPE, database, HELPERS, constants].join('\n\n') + '\n';
  }
}

function isView(r: GenRelation): boolean {
  return r.kind === 'v' || r.kind === 'm';
}

function sortedArgs(fn: GenFunction): GenFunctionArg[] {
  return [...fn.args].sort((a, b) => byName(a.name, b.name));
}

function inputArgs(fn: GenFunction): GenFunctionArg[] {
  return sortedArgs(fn).filter((a) => INPUT_MODES.has(a.mode));
}

/** Renders the `database.types.ts` text for an introspected database. */
export function renderTypescript(db: Introspection, options: RenderOptions = {}): string {
  return new Renderer(db, options).render();
}

// The helpers after `Database`: pick a table's Row/Insert/Update, an enum or a composite type by name, from the
// `public` schema by default or from `{ schema: "other" }`. Their names and parameters are the Supabase CLI's, so
// code written against its file compiles against ours.
const HELPERS = `type DatabaseWithoutInternals = Omit<Database, "__InternalSupabase">

type DefaultSchema = DatabaseWithoutInternals[Extract<keyof Database, "public">]

export type Tables<
  DefaultSchemaTableNameOrOptions extends
    | keyof (DefaultSchema["Tables"] & DefaultSchema["Views"])
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals
  }
    ? keyof (DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"] &
        DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Views"])
    : never = never,
> = DefaultSchemaTableNameOrOptions extends {
  schema: keyof DatabaseWithoutInternals
}
  ? (DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"] &
      DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Views"])[TableName] extends {
      Row: infer R
    }
    ? R
    : never
  : DefaultSchemaTableNameOrOptions extends keyof (DefaultSchema["Tables"] &
        DefaultSchema["Views"])
    ? (DefaultSchema["Tables"] &
        DefaultSchema["Views"])[DefaultSchemaTableNameOrOptions] extends {
        Row: infer R
      }
      ? R
      : never
    : never

export type TablesInsert<
  DefaultSchemaTableNameOrOptions extends
    | keyof DefaultSchema["Tables"]
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals
  }
    ? keyof DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"]
    : never = never,
> = DefaultSchemaTableNameOrOptions extends {
  schema: keyof DatabaseWithoutInternals
}
  ? DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"][TableName] extends {
      Insert: infer I
    }
    ? I
    : never
  : DefaultSchemaTableNameOrOptions extends keyof DefaultSchema["Tables"]
    ? DefaultSchema["Tables"][DefaultSchemaTableNameOrOptions] extends {
        Insert: infer I
      }
      ? I
      : never
    : never

export type TablesUpdate<
  DefaultSchemaTableNameOrOptions extends
    | keyof DefaultSchema["Tables"]
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals
  }
    ? keyof DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"]
    : never = never,
> = DefaultSchemaTableNameOrOptions extends {
  schema: keyof DatabaseWithoutInternals
}
  ? DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"][TableName] extends {
      Update: infer U
    }
    ? U
    : never
  : DefaultSchemaTableNameOrOptions extends keyof DefaultSchema["Tables"]
    ? DefaultSchema["Tables"][DefaultSchemaTableNameOrOptions] extends {
        Update: infer U
      }
      ? U
      : never
    : never

export type Enums<
  DefaultSchemaEnumNameOrOptions extends
    | keyof DefaultSchema["Enums"]
    | { schema: keyof DatabaseWithoutInternals },
  EnumName extends DefaultSchemaEnumNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals
  }
    ? keyof DatabaseWithoutInternals[DefaultSchemaEnumNameOrOptions["schema"]]["Enums"]
    : never = never,
> = DefaultSchemaEnumNameOrOptions extends {
  schema: keyof DatabaseWithoutInternals
}
  ? DatabaseWithoutInternals[DefaultSchemaEnumNameOrOptions["schema"]]["Enums"][EnumName]
  : DefaultSchemaEnumNameOrOptions extends keyof DefaultSchema["Enums"]
    ? DefaultSchema["Enums"][DefaultSchemaEnumNameOrOptions]
    : never

export type CompositeTypes<
  PublicCompositeTypeNameOrOptions extends
    | keyof DefaultSchema["CompositeTypes"]
    | { schema: keyof DatabaseWithoutInternals },
  CompositeTypeName extends PublicCompositeTypeNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals
  }
    ? keyof DatabaseWithoutInternals[PublicCompositeTypeNameOrOptions["schema"]]["CompositeTypes"]
    : never = never,
> = PublicCompositeTypeNameOrOptions extends {
  schema: keyof DatabaseWithoutInternals
}
  ? DatabaseWithoutInternals[PublicCompositeTypeNameOrOptions["schema"]]["CompositeTypes"][CompositeTypeName]
  : PublicCompositeTypeNameOrOptions extends keyof DefaultSchema["CompositeTypes"]
    ? DefaultSchema["CompositeTypes"][PublicCompositeTypeNameOrOptions]
    : never`;
