// Postgres changes bindings as Supabase Realtime reads them (decision 042): `event`, `schema`, `table` and a
// PostgREST-style `filter` string — `col=op.value`, `not.` negation, commas at the top level for AND, `in.(a,"b c")`,
// double-quoted values with \-escapes. The messages are upstream's, so an app sees the same system errors.

export type Action = '*' | 'INSERT' | 'UPDATE' | 'DELETE';
export const FILTER_OPS = ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export interface Filter {
  column: string;
  op: FilterOp;
  /** The value as text; for `in` a PostgreSQL array literal `{a,"b c"}` (cast to the column's array type). */
  value: string;
  negate: boolean;
}

export interface BindingParams {
  action: Action;
  schema: string;
  table: string;
  filters: Filter[];
}

export class BindingError extends Error {}

const isString = (v: unknown): v is string => typeof v === 'string';

/** Upstream's action filter: `*`, or INSERT/UPDATE/DELETE in any case; anything else counts as `*`. */
function actionOf(event: unknown): Action {
  if (!isString(event)) return '*';
  const up = event.toUpperCase();
  return up === 'INSERT' || up === 'UPDATE' || up === 'DELETE' ? up : '*';
}

/** Elixir's `inspect` of a list of strings, as upstream's error messages print parsed parts. */
const inspectList = (parts: string[]): string => `[${parts.map((p) => JSON.stringify(p)).join(', ')}]`;

/** A `postgres_changes` entry of a join's config → the parameters of a subscription (BindingError when malformed). */
export function parseBinding(params: Record<string, unknown>): BindingParams {
  const action = actionOf(params.event);
  const { schema, table, filter } = params;
  const has = (k: string) => params[k] !== undefined && params[k] !== null;
  if (isString(schema) && isString(table) && isString(filter)) return { action, schema, table, filters: parseFilter(filter) };
  if (isString(schema) && isString(table) && !has('filter')) return { action, schema, table, filters: [] };
  if (isString(schema) && !has('table') && !has('filter')) return { action, schema, table: '*', filters: [] };
  if (isString(table) && !has('schema') && !has('filter')) return { action, schema: 'public', table, filters: [] };
  throw new BindingError(
    `No subscription params provided. Please provide at least a \`schema\` or \`table\` to subscribe to: ${JSON.stringify(params)}`,
  );
}

/** Parses a filter string; an empty one is no filter. */
export function parseFilter(filter: string): Filter[] {
  const trimmed = filter.trim();
  if (trimmed === '') return [];
  return splitTopLevel(trimmed).map(parseSegment);
}

/** Splits at commas outside parentheses and double quotes (a quote opens only after `.`, `(` or `,`). */
function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let current = '';
  let depth = 0;
  let quoted = false;
  let prev = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (quoted) {
      if (ch === '\\' && i + 1 < s.length) {
        current += ch + s[++i]!;
        prev = s[i]!;
        continue;
      }
      if (ch === '"') quoted = false;
      current += ch;
      prev = ch;
      continue;
    }
    if (ch === '"' && (prev === '.' || prev === '(' || prev === ',')) quoted = true;
    else if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    else if (ch === ',' && depth === 0) {
      out.push(current);
      current = '';
      prev = '';
      continue;
    }
    current += ch;
    prev = ch;
  }
  out.push(current);
  return out;
}

function parseSegment(segment: string): Filter {
  const s = segment.trim();
  if (s === '') throw new BindingError('Error parsing `filter` params: filter must not contain empty segments (check for extra commas)');
  const eq = s.indexOf('=');
  if (eq < 0) throw new BindingError(`Error parsing \`filter\` params: ${inspectList([s])}`);
  const column = s.slice(0, eq);
  let rest = s.slice(eq + 1);
  let negate = false;
  if (rest.startsWith('not.')) {
    negate = true;
    rest = rest.slice(4);
  }
  const dot = rest.indexOf('.');
  if (dot < 0) throw new BindingError(`Error parsing \`filter\` params: ${inspectList([rest])}`);
  const op = rest.slice(0, dot);
  const raw = rest.slice(dot + 1);
  if (!(FILTER_OPS as readonly string[]).includes(op)) throw new BindingError(`Error parsing \`filter\` params: ${inspectList([op, raw])}`);
  if (op === 'in') {
    if (raw.length < 2 || !raw.startsWith('(') || !raw.endsWith(')'))
      throw new BindingError('Error parsing `filter` params: `in` filter value must be wrapped by parentheses');
    return { column, op, value: `{${raw.slice(1, -1)}}`, negate };
  }
  return { column, op: op as FilterOp, value: unquote(raw), negate };
}

/** `"a \"b\""` → `a "b"`; a value that is not one well-formed quoted string is kept as written. */
function unquote(v: string): string {
  if (!v.startsWith('"')) return v;
  let out = '';
  for (let i = 1; i < v.length; i++) {
    const ch = v[i]!;
    if (ch === '\\' && i + 1 < v.length) {
      out += v[++i]!;
      continue;
    }
    if (ch === '"') return i === v.length - 1 ? out : v;
    out += ch;
  }
  return v;
}

/** How upstream prints a subscription in its errors: `event: *, schema: public, table: t, filters: […], select: nil`. */
export function describeBinding(p: BindingParams): string {
  const filters = `[${p.filters.map((f) => `{${JSON.stringify(f.column)}, ${JSON.stringify(f.op)}, ${JSON.stringify(f.value)}, ${f.negate}}`).join(', ')}]`;
  return `event: ${p.action}, schema: ${p.schema}, table: ${p.table}, filters: ${filters}, select: nil`;
}

export const SQL_OPERATOR: Record<FilterOp, string> = { eq: '=', neq: '<>', lt: '<', lte: '<=', gt: '>', gte: '>=', in: '= any' };
