/**
 * Parser for PostgREST's URL grammar (the query strings postgrest-js builds), the Prefer header and the
 * Range header, into a typed AST. Nothing here touches SQL: identifiers stay names to be checked against
 * the schema cache and quoted, values stay strings to be sent as bound parameters cast to the column type.
 *
 * The grammar follows PostgREST's own parser (ApiRequest/QueryParams.hs): field names are letters,
 * digits, `_`, `$` and spaces joined by single dashes, or "double quoted" with backslash escapes; JSON
 * paths `->key`, `->>0`; aliases `alias:name`; casts `::type`; embeds `alias:rel!hint!inner(...)`;
 * spreads `...rel(...)`; filters `[not.]op.value`; logic trees `or=(a.eq.1,and(b.gt.2,c.is.null))`.
 * Errors are RestError PGRST100 (400) with PostgREST's message shape:
 * `"failed to parse select parameter (id;x)" (line 1, column 3)` and details `unexpected ";" expecting ...`.
 */
import { RestError } from './errors.ts';

export { RestError } from './errors.ts';

/** Maximum nesting of embedded resources in `select` and of and()/or() groups in logic trees. */
export const MAX_NESTING_DEPTH = 20;

// ---------------------------------------------------------------------------------------------------------
// AST

export interface JsonPathStep {
  arrow: '->' | '->>';
  /** `index` for an integer operand (`->0`, `->>-1`), `key` otherwise. */
  kind: 'key' | 'index';
  value: string;
}

export interface Field {
  name: string;
  jsonPath: JsonPathStep[];
}

export type JoinType = 'inner' | 'left';
export const AGGREGATE_FUNCTIONS = ['count', 'sum', 'avg', 'max', 'min'] as const;
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number];

export interface SelectStar {
  type: 'star';
}

export interface SelectColumn {
  type: 'column';
  field: Field;
  alias: string | null;
  cast: string | null;
  /** `col.sum()` etc. Parsed so the planner can reject it (PostgREST: PGRST123 when aggregates are off). */
  aggregate: { fn: AggregateFunction; cast: string | null } | null;
}

/** Bare `count()` (optionally `alias:count()::int`). Parsed, to be rejected by the planner. */
export interface SelectCount {
  type: 'count';
  alias: string | null;
  cast: string | null;
}

export interface SelectEmbed {
  type: 'embed';
  /** Table/view name, FK constraint name or FK column name, as PostgREST resolves it. */
  relation: string;
  alias: string | null;
  hint: string | null;
  joinType: JoinType | null;
  /** `...rel(cols)`: the embedded columns are spread into the parent object. */
  spread: boolean;
  select: SelectItem[];
}

export type SelectItem = SelectStar | SelectColumn | SelectCount | SelectEmbed;

export const SIMPLE_OPERATORS = [
  'eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch',
  'cs', 'cd', 'ov', 'sl', 'sr', 'nxr', 'nxl', 'adj', 'isdistinct',
] as const;
export type SimpleOperator = (typeof SIMPLE_OPERATORS)[number];
export const QUANTIFIABLE_OPERATORS = ['eq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch'] as const;
export type QuantifiableOperator = (typeof QUANTIFIABLE_OPERATORS)[number];
export const FTS_OPERATORS = ['fts', 'plfts', 'phfts', 'wfts'] as const;
export type FtsOperator = (typeof FTS_OPERATORS)[number];
export type IsValue = 'null' | 'not_null' | 'true' | 'false' | 'unknown';

export type Operation =
  | { kind: 'op'; op: SimpleOperator; value: string }
  /** `like(any).{a,b}`: value is a PostgreSQL array literal, bound as `$n::coltype[]`. */
  | { kind: 'quant'; op: QuantifiableOperator; quantifier: 'any' | 'all'; value: string }
  | { kind: 'in'; values: string[] }
  | { kind: 'is'; value: IsValue }
  | { kind: 'fts'; op: FtsOperator; language: string | null; value: string };

export interface OpExpr {
  negated: boolean;
  operation: Operation;
}

/** A filter from a query parameter: `path` is the embed path (`rel.sub.col=eq.1` → ['rel','sub']). */
export interface FilterParam {
  path: string[];
  field: Field;
  expr: OpExpr;
}

export type LogicTree =
  | { type: 'filter'; field: Field; expr: OpExpr }
  | { type: 'expr'; negated: boolean; op: 'and' | 'or'; children: LogicTree[] };

export interface LogicParam {
  path: string[];
  tree: LogicTree & { type: 'expr' };
}

export interface OrderTerm {
  /** `rel(col).desc` orders by a column of a to-one embedded resource. */
  relation: string | null;
  field: Field;
  direction: 'asc' | 'desc' | null;
  nulls: 'nullsfirst' | 'nullslast' | null;
}

export interface OrderParam {
  path: string[];
  terms: OrderTerm[];
}

export interface RangeParam {
  path: string[];
  limit: number | null;
  offset: number | null;
}

export interface ParsedQuery {
  /** `select` (default `*`). An empty `select=` gives []. */
  select: SelectItem[];
  filters: FilterParam[];
  logic: LogicParam[];
  /** One entry per embed path ([] is the root); repeated `order` params for a path are concatenated. */
  order: OrderParam[];
  /** Root `limit`/`offset`. */
  limit: number | null;
  offset: number | null;
  /** `rel.limit` / `rel.offset` for embedded resources. */
  embeddedRanges: RangeParam[];
  /** `columns=` for inserts (postgrest-js sends `"a","b"`). */
  columns: string[] | null;
  /** `on_conflict=` for upserts. */
  onConflict: string[] | null;
  /** In rpc mode: parameters that are not filters (function arguments for GET/HEAD rpc), in URL order. */
  params: Array<[string, string]>;
}

export interface ParseQueryOptions {
  /**
   * RPC mode: a parameter whose key has no `.` and whose value has no operator is a function argument
   * (PostgREST's rule), not a filter. Outside rpc mode every non-reserved parameter is a filter.
   */
  rpc?: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// Low-level cursor

const EXPECT_FIELD = 'field name (* or [a..z0..9_$])';

function isIdentChar(cp: number): boolean {
  if (cp < 128) {
    return (
      (cp >= 97 && cp <= 122) || (cp >= 65 && cp <= 90) || (cp >= 48 && cp <= 57) || cp === 95 || cp === 36 || cp === 32
    );
  }
  return /[\p{L}\p{N}]/u.test(String.fromCodePoint(cp));
}

class Cursor {
  readonly src: string;
  readonly ctx: string;
  pos = 0;

  constructor(src: string, ctx: string) {
    this.src = src;
    this.ctx = ctx;
  }

  eof(): boolean {
    return this.pos >= this.src.length;
  }

  peek(offset = 0): string {
    return this.src.charAt(this.pos + offset);
  }

  startsWith(s: string): boolean {
    return this.src.startsWith(s, this.pos);
  }

  ws(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.pos++;
  }

  describeCurrent(): string {
    if (this.eof()) return 'end of input';
    const cp = this.src.codePointAt(this.pos) ?? 0;
    return JSON.stringify(String.fromCodePoint(cp));
  }

  /** Throws PGRST100 pointing at the current position. */
  fail(expected: string, details?: string): never {
    throw new RestError(
      400,
      'PGRST100',
      `${JSON.stringify(this.ctx)} (line 1, column ${this.pos + 1})`,
      details ?? `unexpected ${this.describeCurrent()} expecting ${expected}`,
      null,
    );
  }

  expect(ch: string, expected = JSON.stringify(ch)): void {
    if (this.peek() !== ch) this.fail(expected);
    this.pos++;
  }

  /** `"..."` with backslash escapes; the cursor is at the opening quote. */
  quoted(): string {
    this.pos++;
    let out = '';
    for (;;) {
      if (this.eof()) this.fail('"\\"" (closing quote)');
      const c = this.src[this.pos];
      if (c === '\\') {
        this.pos++;
        if (this.eof()) this.fail('any character after "\\"');
        out += this.src[this.pos];
        this.pos++;
      } else if (c === '"') {
        this.pos++;
        return out;
      } else {
        out += c;
        this.pos++;
      }
    }
  }

  /** A run of identifier characters, trimmed (PostgREST's pIdentifier). Empty when none. */
  identifierRun(): string {
    const start = this.pos;
    while (!this.eof()) {
      const cp = this.src.codePointAt(this.pos) ?? 0;
      if (!isIdentChar(cp)) break;
      this.pos += cp > 0xffff ? 2 : 1;
    }
    return this.src.slice(start, this.pos).trim();
  }

  /** PostgREST's pFieldName: a quoted name, or identifier runs joined by `-` (a `-` not starting `->`). */
  fieldName(expected = EXPECT_FIELD): string {
    this.ws();
    if (this.peek() === '"') {
      const name = this.quoted();
      this.ws();
      return name;
    }
    const parts: string[] = [];
    for (;;) {
      const runStart = this.pos;
      const run = this.identifierRun();
      if (run === '') {
        this.pos = runStart;
        this.fail(parts.length === 0 ? expected : 'letter or digit');
      }
      parts.push(run);
      if (this.peek() === '-' && this.peek(1) !== '>') {
        this.pos++;
        continue;
      }
      break;
    }
    return parts.join('-');
  }

  /** Zero or more `->key` / `->>0` steps. */
  jsonPath(): JsonPathStep[] {
    const steps: JsonPathStep[] = [];
    while (this.startsWith('->')) {
      const arrow = this.startsWith('->>') ? '->>' : '->';
      this.pos += arrow.length;
      const m = /^-?[0-9]+/.exec(this.src.slice(this.pos, this.pos + 40));
      if (m) {
        const after = this.pos + m[0].length;
        const rest = this.src.slice(after, after + 2);
        if (after >= this.src.length || rest.startsWith('->') || rest.startsWith('::') || /^[.,)]/.test(rest)) {
          this.pos = after;
          steps.push({ arrow, kind: 'index', value: m[0] });
          continue;
        }
      }
      steps.push({ arrow, kind: 'key', value: this.fieldName('JSON key or array index') });
    }
    return steps;
  }

  field(): Field {
    const name = this.fieldName();
    const jsonPath = this.jsonPath();
    this.ws();
    return { name, jsonPath };
  }

  /** A cast or fts language: identifier characters only. */
  typeName(what: string): string {
    const start = this.pos;
    const name = this.identifierRun();
    if (name === '') {
      this.pos = start;
      this.fail(what);
    }
    return name;
  }

  tooDeep(what: string): never {
    this.fail('', `${what} nested too deeply (maximum ${MAX_NESTING_DEPTH} levels)`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// select

function selectList(c: Cursor, depth: number): SelectItem[] {
  c.ws();
  const items: SelectItem[] = [];
  if (c.eof() || c.peek() === ')') return items;
  for (;;) {
    items.push(selectItem(c, depth));
    c.ws();
    if (c.peek() === ',') {
      c.pos++;
      continue;
    }
    return items;
  }
}

function itemEnd(c: Cursor, expected: string): void {
  c.ws();
  const ch = c.peek();
  if (!(c.eof() || ch === ',' || ch === ')')) c.fail(`${expected}")", "," or end of input`);
}

function embedParams(c: Cursor): { hint: string | null; joinType: JoinType | null } {
  let hint: string | null = null;
  let joinType: JoinType | null = null;
  let count = 0;
  while (c.peek() === '!') {
    if (count === 2) c.fail('"("');
    c.pos++;
    const start = c.pos;
    const name = c.fieldName('embedding hint or join type (inner, left)');
    if (name === 'inner' || name === 'left') {
      if (joinType !== null) {
        c.pos = start;
        c.fail('embedding hint', `unexpected second join type "${name}"`);
      }
      joinType = name;
    } else {
      if (hint !== null) {
        c.pos = start;
        c.fail('join type (inner, left)', `unexpected second embedding hint "${name}"`);
      }
      hint = name;
    }
    count++;
  }
  return { hint, joinType };
}

function embedBody(c: Cursor, depth: number): SelectItem[] {
  c.ws();
  if (c.peek() !== '(') c.fail('"!" or "("');
  if (depth + 1 > MAX_NESTING_DEPTH) c.tooDeep('embedded resources');
  c.pos++;
  const children = selectList(c, depth + 1);
  c.ws();
  c.expect(')', '"," or ")"');
  return children;
}

function optionalCast(c: Cursor): string | null {
  if (!c.startsWith('::')) return null;
  c.pos += 2;
  const cast = c.typeName('type name (letter or digit)');
  c.ws();
  return cast;
}

function selectItem(c: Cursor, depth: number): SelectItem {
  c.ws();
  if (c.startsWith('...')) {
    c.pos += 3;
    const relation = c.fieldName();
    const { hint, joinType } = embedParams(c);
    const select = embedBody(c, depth);
    return { type: 'embed', relation, alias: null, hint, joinType, spread: true, select };
  }
  if (c.peek() === '*') {
    c.pos++;
    itemEnd(c, '');
    return { type: 'star' };
  }
  let alias: string | null = null;
  let name = c.fieldName(`${EXPECT_FIELD}, "*" or "..."`);
  if (c.peek() === ':' && c.peek(1) !== ':') {
    c.pos++;
    alias = name;
    name = c.fieldName();
  }
  if (name === 'count' && c.startsWith('()')) {
    c.pos += 2;
    c.ws();
    const cast = optionalCast(c);
    itemEnd(c, '"::", ');
    return { type: 'count', alias, cast };
  }
  if (c.peek() === '!' || c.peek() === '(') {
    const { hint, joinType } = embedParams(c);
    const select = embedBody(c, depth);
    return { type: 'embed', relation: name, alias, hint, joinType, spread: false, select };
  }
  const jsonPath = c.jsonPath();
  c.ws();
  const cast = optionalCast(c);
  let aggregate: SelectColumn['aggregate'] = null;
  if (c.peek() === '.') {
    c.pos++;
    const fnStart = c.pos;
    const fn = c.identifierRun();
    if (!(AGGREGATE_FUNCTIONS as readonly string[]).includes(fn)) {
      c.pos = fnStart;
      c.fail('aggregate function (count, sum, avg, max, min)');
    }
    c.expect('(', '"("');
    c.expect(')', '")"');
    c.ws();
    aggregate = { fn: fn as AggregateFunction, cast: optionalCast(c) };
  }
  itemEnd(c, 'letter, digit, "-", "->>", "->", "::", "!", "(", ');
  return { type: 'column', field: { name, jsonPath }, alias, cast, aggregate };
}

/** Parses a `select` value. */
export function parseSelect(value: string): SelectItem[] {
  const c = new Cursor(value, `failed to parse select parameter (${value})`);
  const items = selectList(c, 0);
  c.ws();
  if (!c.eof()) c.fail('"," or end of input');
  return items;
}

// ---------------------------------------------------------------------------------------------------------
// filters

const SIMPLE_SET: ReadonlySet<string> = new Set(SIMPLE_OPERATORS);
const QUANT_SET: ReadonlySet<string> = new Set(QUANTIFIABLE_OPERATORS);
const FTS_SET: ReadonlySet<string> = new Set(FTS_OPERATORS);
const IS_VALUES: ReadonlySet<string> = new Set(['null', 'not_null', 'true', 'false', 'unknown']);

/**
 * A quoted value, ended by the first `"` that is followed by one of `terminators` or the end (else null, cursor
 * unchanged). Backslash escapes as in PostgREST.
 */
function quotedFollowedBy(c: Cursor, terminators: string): string | null {
  const start = c.pos;
  const src = c.src;
  let i = start + 1;
  let out = '';
  while (i < src.length) {
    const ch = src[i];
    if (ch === '\\') {
      if (i + 1 >= src.length) return null;
      out += src[i + 1];
      i += 2;
    } else if (ch === '"') {
      if (i + 1 < src.length && !terminators.includes(src[i + 1]!)) {
        // postgrest-js quotes values containing , ( ) without escaping inner quotes ("say "hi", ok"):
        // a quote that does not end the element is part of it.
        out += ch;
        i++;
        continue;
      }
      c.pos = i + 1;
      return out;
    } else {
      out += ch;
      i++;
    }
  }
  return null;
}

function rawUntil(c: Cursor, stops: string): string {
  const start = c.pos;
  while (!c.eof() && !stops.includes(c.src[c.pos]!)) c.pos++;
  return c.src.slice(start, c.pos);
}

function listVal(c: Cursor): string[] {
  c.ws();
  c.expect('(', '"("');
  c.ws();
  const values: string[] = [];
  if (c.peek() === ')') {
    c.pos++;
    c.ws();
    return values;
  }
  for (;;) {
    let v: string | null = null;
    if (c.peek() === '"') v = quotedFollowedBy(c, ',)');
    if (v === null) v = rawUntil(c, ',)');
    values.push(v);
    if (c.peek() === ',') {
      c.pos++;
      continue;
    }
    if (c.peek() === ')') {
      c.pos++;
      c.ws();
      return values;
    }
    c.fail('"," or ")"');
  }
}

function logicSingleVal(c: Cursor): string {
  if (c.peek() === '"') {
    const q = quotedFollowedBy(c, ',)');
    if (q !== null) return q;
  }
  if (c.peek() === '{') {
    const close = c.src.indexOf('}', c.pos);
    const open = c.src.indexOf('{', c.pos + 1);
    if (close !== -1 && (open === -1 || open > close)) {
      const v = c.src.slice(c.pos, close + 1);
      c.pos = close + 1;
      return v;
    }
  }
  return rawUntil(c, ',)');
}

function opExpr(c: Cursor, inLogic: boolean): OpExpr {
  let negated = false;
  if (c.startsWith('not.')) {
    negated = true;
    c.pos += 4;
  }
  const opStart = c.pos;
  const opStr = rawUntil(c, inLogic ? '.(,)' : '.(');
  const value = (): string => {
    c.expect('.', 'delimiter (.)');
    return inLogic ? logicSingleVal(c) : c.src.slice(c.pos, (c.pos = c.src.length));
  };
  if (opStr === 'in') {
    c.expect('.', 'delimiter (.)');
    return { negated, operation: { kind: 'in', values: listVal(c) } };
  }
  if (opStr === 'is') {
    c.expect('.', 'delimiter (.)');
    const start = c.pos;
    const word = rawUntil(c, inLogic ? ',)' : '').toLowerCase();
    if (!IS_VALUES.has(word)) {
      c.pos = start;
      c.fail('null or trilean value (unknown, true, false)');
    }
    return { negated, operation: { kind: 'is', value: word as IsValue } };
  }
  if (FTS_SET.has(opStr)) {
    let language: string | null = null;
    if (c.peek() === '(') {
      c.pos++;
      language = c.typeName('text search configuration name');
      c.expect(')', '")"');
    }
    return { negated, operation: { kind: 'fts', op: opStr as FtsOperator, language, value: value() } };
  }
  if (SIMPLE_SET.has(opStr)) {
    if (c.peek() === '(') {
      if (!QUANT_SET.has(opStr)) c.fail('delimiter (.)');
      let quantifier: 'any' | 'all';
      if (c.startsWith('(any)')) quantifier = 'any';
      else if (c.startsWith('(all)')) quantifier = 'all';
      else {
        c.pos++;
        c.fail('quantifier (any, all)');
      }
      c.pos += 5;
      return { negated, operation: { kind: 'quant', op: opStr as QuantifiableOperator, quantifier, value: value() } };
    }
    return { negated, operation: { kind: 'op', op: opStr as SimpleOperator, value: value() } };
  }
  c.pos = opStart;
  if (opStr === '') c.fail(negated ? 'operator (eq, gt, ...)' : '"not" or operator (eq, gt, ...)');
  c.fail('operator (eq, gt, ...)', `unknown single value operator ${opStr}`);
}

/** Parses a filter value like `eq.5`, `not.in.(1,2)`, `fts(english).cat`. */
export function parseFilterValue(value: string): OpExpr {
  const c = new Cursor(value, `failed to parse filter (${value})`);
  const expr = opExpr(c, false);
  if (!c.eof()) c.fail('end of input');
  return expr;
}

function treePath(key: string): { path: string[]; field: Field } {
  const c = new Cursor(key, `failed to parse tree path (${key})`);
  const names = [c.fieldName()];
  while (c.peek() === '.') {
    c.pos++;
    names.push(c.fieldName());
  }
  const jsonPath = c.jsonPath();
  c.ws();
  if (!c.eof()) c.fail('letter, digit, "-", "->>", "->", delimiter (.) or end of input');
  return { path: names.slice(0, -1), field: { name: names[names.length - 1]!, jsonPath } };
}

// ---------------------------------------------------------------------------------------------------------
// logic trees

const LOGIC_EXPR = /^(not\.)?(and|or)\(/;

function logicTree(c: Cursor, depth: number): LogicTree {
  c.ws();
  const m = LOGIC_EXPR.exec(c.src.slice(c.pos, c.pos + 8));
  if (m) {
    if (depth + 1 > MAX_NESTING_DEPTH) c.tooDeep('logic tree');
    c.pos += m[0].length;
    const children: LogicTree[] = [];
    for (;;) {
      children.push(logicTree(c, depth + 1));
      c.ws();
      if (c.peek() === ',') {
        c.pos++;
        continue;
      }
      c.expect(')', '"," or ")"');
      c.ws();
      return { type: 'expr', negated: m[1] !== undefined, op: m[2] as 'and' | 'or', children };
    }
  }
  const field = c.field();
  c.expect('.', 'letter, digit, "-", "->>", "->" or delimiter (.)');
  const expr = opExpr(c, true);
  c.ws();
  return { type: 'filter', field, expr };
}

/** Parses the value of an `or`/`and`/`not.or`/`not.and` parameter (op is that last key part). */
export function parseLogicTree(op: 'and' | 'or' | 'not.and' | 'not.or', value: string): LogicTree & { type: 'expr' } {
  const c = new Cursor(op + value, `failed to parse logic tree (${value})`);
  if (!LOGIC_EXPR.test(c.src.slice(0, 8))) {
    c.pos = op.length;
    c.fail('"("');
  }
  const tree = logicTree(c, 0);
  if (!c.eof()) c.fail('end of input');
  return tree as LogicTree & { type: 'expr' };
}

// ---------------------------------------------------------------------------------------------------------
// order, columns, ranges

export function parseOrder(value: string): OrderTerm[] {
  const c = new Cursor(value, `failed to parse order (${value})`);
  const terms: OrderTerm[] = [];
  for (;;) {
    c.ws();
    const name = c.fieldName();
    let relation: string | null = null;
    let field: Field;
    if (c.peek() === '(') {
      c.pos++;
      relation = name;
      field = c.field();
      c.expect(')', '")"');
    } else {
      field = { name, jsonPath: c.jsonPath() };
    }
    c.ws();
    let direction: OrderTerm['direction'] = null;
    let nulls: OrderTerm['nulls'] = null;
    if (c.peek() === '.') {
      c.pos++;
      const start = c.pos;
      const word = rawUntil(c, '.,');
      if (word === 'asc' || word === 'desc') direction = word;
      else if (word === 'nullsfirst' || word === 'nullslast') nulls = word;
      else {
        c.pos = start;
        c.fail('"asc", "desc", "nullsfirst" or "nullslast"');
      }
      if (nulls === null && c.peek() === '.') {
        c.pos++;
        const start2 = c.pos;
        const word2 = rawUntil(c, '.,');
        if (word2 === 'nullsfirst' || word2 === 'nullslast') nulls = word2;
        else {
          c.pos = start2;
          c.fail('"nullsfirst" or "nullslast"');
        }
      }
    }
    terms.push({ relation, field, direction, nulls });
    c.ws();
    if (c.peek() === ',') {
      c.pos++;
      continue;
    }
    if (!c.eof()) c.fail('delimiter (.), "," or end of input');
    return terms;
  }
}

/** `columns=` and `on_conflict=`: field names separated by commas (postgrest-js double-quotes them). */
export function parseColumnList(value: string, param: 'columns' | 'on_conflict'): string[] {
  const c = new Cursor(value, `failed to parse ${param} parameter (${value})`);
  const names = [c.fieldName()];
  while (c.peek() === ',') {
    c.pos++;
    names.push(c.fieldName());
  }
  if (!c.eof()) c.fail('"," or end of input');
  return names;
}

function nonNegativeInt(value: string, param: string): number {
  const bad = /[^0-9]/.exec(value);
  if (value === '' || bad) {
    const c = new Cursor(value, `failed to parse ${param} parameter (${value})`);
    c.pos = bad ? bad.index : 0;
    c.fail('digit', `${param} must be a non-negative integer`);
  }
  const n = Number(value);
  if (!Number.isSafeInteger(n)) {
    throw new RestError(400, 'PGRST100', `"failed to parse ${param} parameter (${value})" (line 1, column 1)`, `${param} is too large`, null);
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------------
// the query string

/** Percent-decodes one component of an x-www-form-urlencoded query (`+` is a space); lenient like URLSearchParams. */
export function decodeQueryComponent(s: string): string {
  if (!/[%+]/.test(s)) return s;
  const bytes: number[] = [];
  const enc = new TextEncoder();
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (ch === '+') bytes.push(0x20);
    else if (ch === '%' && /^[0-9a-fA-F]{2}$/.test(s.slice(i + 1, i + 3))) {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      const cp = s.codePointAt(i) ?? 0;
      const chars = String.fromCodePoint(cp);
      for (const b of enc.encode(chars)) bytes.push(b);
      i += chars.length - 1;
    }
  }
  return new TextDecoder('utf-8').decode(Uint8Array.from(bytes));
}

/**
 * Percent-decodes a path segment (the table or function name) leniently, as PostgREST does: an escape that is not
 * `%` and two hex digits stays as written (`+` too), so a malformed one names a relation that does not exist.
 */
export function decodePathComponent(s: string): string {
  return decodeQueryComponent(s.replace(/\+/g, '%2B'));
}

/** Splits a raw query string (with or without the leading `?`) into decoded pairs; `a` without `=` has value null. */
export function splitQueryString(query: string): Array<[string, string | null]> {
  const q = query.startsWith('?') ? query.slice(1) : query;
  const out: Array<[string, string | null]> = [];
  if (q === '') return out;
  for (const piece of q.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    if (eq === -1) out.push([decodeQueryComponent(piece), null]);
    else out.push([decodeQueryComponent(piece.slice(0, eq)), decodeQueryComponent(piece.slice(eq + 1))]);
  }
  return out;
}

const ALL_OPERATOR_NAMES: ReadonlySet<string> = new Set<string>([...SIMPLE_OPERATORS, ...FTS_OPERATORS, 'in', 'is']);

/** PostgREST's rule for telling a filter from an rpc argument. */
export function looksLikeFilter(key: string, value: string): boolean {
  if (key.includes('.')) return true;
  const op = /^[^.(]*/.exec(value)?.[0] ?? '';
  if (op === 'not') return value.includes('.', 4);
  return ALL_OPERATOR_NAMES.has(op);
}

function lastSegment(key: string): string {
  const i = key.lastIndexOf('.');
  return i === -1 ? key : key.slice(i + 1);
}

function embedPathOf(key: string): string[] {
  // `rel.sub.order` → ['rel','sub'];  names are parsed like a tree path so quoting works.
  const { path, field } = treePath(key);
  void field;
  return path;
}

/**
 * Parses a whole query string (raw, as received: `+` and percent escapes are decoded here) or URLSearchParams.
 * Throws RestError PGRST100 (400) on the first syntax error.
 */
export function parseQuery(query: string | URLSearchParams, options: ParseQueryOptions = {}): ParsedQuery {
  const pairs: Array<[string, string | null]> =
    typeof query === 'string' ? splitQueryString(query) : [...query.entries()];
  let select: string | null = null;
  let columns: string | null = null;
  let onConflict: string | null = null;
  const result: ParsedQuery = {
    select: [],
    filters: [],
    logic: [],
    order: [],
    limit: null,
    offset: null,
    embeddedRanges: [],
    columns: null,
    onConflict: null,
    params: [],
  };
  const ranges = new Map<string, RangeParam>();
  const orders = new Map<string, OrderParam>();
  for (const [key, value] of pairs) {
    if (value === null) continue; // PostgREST ignores parameters without "="
    if (key === 'select') {
      select ??= value;
      continue;
    }
    if (key === 'columns') {
      columns ??= value;
      continue;
    }
    if (key === 'on_conflict') {
      onConflict ??= value;
      continue;
    }
    const last = lastSegment(key);
    if (last === 'order') {
      const path = embedPathOf(key);
      const terms = parseOrder(value);
      const k = JSON.stringify(path);
      const existing = orders.get(k);
      if (existing) existing.terms.push(...terms);
      else orders.set(k, { path, terms });
      continue;
    }
    if (last === 'limit' || last === 'offset') {
      const path = embedPathOf(key);
      const n = nonNegativeInt(value, last);
      const k = JSON.stringify(path);
      const r = ranges.get(k) ?? { path, limit: null, offset: null };
      r[last] = n;
      ranges.set(k, r);
      continue;
    }
    if (last === 'and' || last === 'or') {
      const names = splitLogicKey(key);
      const negated = names.slice(0, -1).includes('not');
      const path = names.slice(0, -1).filter((n) => n !== 'not');
      result.logic.push({ path, tree: parseLogicTree(negated ? `not.${last}` : last, value) });
      continue;
    }
    if (options.rpc && !looksLikeFilter(key, value)) {
      result.params.push([key, value]);
      continue;
    }
    const { path, field } = treePath(key);
    result.filters.push({ path, field, expr: parseFilterValue(value) });
  }
  result.select = parseSelect(select ?? '*');
  result.columns = columns === null ? null : parseColumnList(columns, 'columns');
  result.onConflict = onConflict === null ? null : parseColumnList(onConflict, 'on_conflict');
  result.order = [...orders.values()];
  for (const r of ranges.values()) {
    if (r.path.length === 0) {
      result.limit = r.limit;
      result.offset = r.offset;
    } else result.embeddedRanges.push(r);
  }
  return result;
}

function splitLogicKey(key: string): string[] {
  const c = new Cursor(key, `failed to parse logic path (${key})`);
  const names = [c.fieldName()];
  while (c.peek() === '.') {
    c.pos++;
    names.push(c.fieldName());
  }
  if (!c.eof()) c.fail('delimiter (.) or end of input');
  return names;
}

// ---------------------------------------------------------------------------------------------------------
// Prefer header

export interface Preferences {
  return: 'representation' | 'minimal' | 'headers-only' | null;
  count: 'exact' | 'planned' | 'estimated' | null;
  resolution: 'merge-duplicates' | 'ignore-duplicates' | null;
  missing: 'default' | 'null' | null;
  tx: 'commit' | 'rollback' | null;
  handling: 'strict' | 'lenient' | null;
  maxAffected: number | null;
  timezone: string | null;
  /** Preferences that were not understood, verbatim (PostgREST ignores them unless handling=strict). */
  invalid: string[];
}

const PREFERENCE_VALUES: Record<string, readonly string[]> = {
  return: ['representation', 'minimal', 'headers-only'],
  count: ['exact', 'planned', 'estimated'],
  resolution: ['merge-duplicates', 'ignore-duplicates'],
  missing: ['default', 'null'],
  tx: ['commit', 'rollback'],
  handling: ['strict', 'lenient'],
};

/**
 * Parses one or several Prefer headers (postgrest-js appends, so they arrive as "a=b, c=d").
 * The first occurrence of a preference wins. With `handling=strict`, unknown preferences throw
 * PGRST122 (400) as PostgREST does.
 */
export function parsePrefer(header: string | readonly string[] | null | undefined): Preferences {
  const prefs: Preferences = {
    return: null, count: null, resolution: null, missing: null, tx: null, handling: null,
    maxAffected: null, timezone: null, invalid: [],
  };
  const list = header === null || header === undefined ? [] : typeof header === 'string' ? [header] : header;
  const seen = new Set<string>();
  for (const h of list) {
    for (const raw of h.split(',')) {
      const item = raw.trim();
      if (item === '') continue;
      const eq = item.indexOf('=');
      const name = (eq === -1 ? item : item.slice(0, eq)).trim().toLowerCase();
      const val = eq === -1 ? '' : item.slice(eq + 1).trim();
      const allowed = PREFERENCE_VALUES[name];
      if (allowed) {
        if (!allowed.includes(val)) {
          prefs.invalid.push(item);
          continue;
        }
        if (seen.has(name)) continue;
        seen.add(name);
        (prefs as unknown as Record<string, string>)[name] = val;
      } else if (name === 'max-affected') {
        if (!/^[0-9]{1,15}$/.test(val)) {
          prefs.invalid.push(item);
          continue;
        }
        if (prefs.maxAffected === null) prefs.maxAffected = Number(val);
      } else if (name === 'timezone' && val !== '') {
        prefs.timezone ??= val;
      } else {
        prefs.invalid.push(item);
      }
    }
  }
  if (prefs.handling === 'strict' && prefs.invalid.length > 0) {
    throw new RestError(
      400,
      'PGRST122',
      'Invalid preferences given with handling=strict',
      `Invalid preferences: ${prefs.invalid.join(', ')}`,
      null,
    );
  }
  return prefs;
}

/** The `Preference-Applied` response header value for the preferences the server honoured. */
export function preferenceApplied(prefs: Partial<Preferences>): string | null {
  const parts: string[] = [];
  if (prefs.resolution) parts.push(`resolution=${prefs.resolution}`);
  if (prefs.missing) parts.push(`missing=${prefs.missing}`);
  if (prefs.return) parts.push(`return=${prefs.return}`);
  if (prefs.count) parts.push(`count=${prefs.count}`);
  if (prefs.tx) parts.push(`tx=${prefs.tx}`);
  if (prefs.handling) parts.push(`handling=${prefs.handling}`);
  if (prefs.maxAffected !== null && prefs.maxAffected !== undefined) parts.push(`max-affected=${prefs.maxAffected}`);
  return parts.length === 0 ? null : parts.join(', ');
}

// ---------------------------------------------------------------------------------------------------------
// Range header

export interface RowRange {
  offset: number;
  /** null: unbounded. */
  limit: number | null;
}

/**
 * Parses `Range: 0-9` / `Range: 5-` (with `Range-Unit: items`, the only unit; another unit ignores the
 * header). Returns null when absent or not in PostgREST's `first-[last]` form (PostgREST ignores it then).
 * A lower bound above the upper bound is 416 PGRST103.
 */
export function parseRangeHeader(range: string | null | undefined, rangeUnit?: string | null): RowRange | null {
  if (range === null || range === undefined) return null;
  if (rangeUnit !== null && rangeUnit !== undefined && rangeUnit.trim().toLowerCase() !== 'items') return null;
  const m = /^\s*(?:items=)?([0-9]{1,15})-([0-9]{1,15})?\s*$/.exec(range);
  if (!m) return null;
  const lower = Number(m[1]);
  if (m[2] === undefined) return { offset: lower, limit: null };
  const upper = Number(m[2]);
  if (lower > upper) {
    throw new RestError(
      416,
      'PGRST103',
      'Requested range not satisfiable',
      'The lower boundary must be lower than or equal to the upper boundary in the Range header.',
      null,
    );
  }
  return { offset: lower, limit: upper - lower + 1 };
}

/**
 * The rows to return: the intersection of the Range header and the `limit`/`offset` query parameters
 * (as PostgREST restricts one by the other), optionally capped by max_rows.
 */
export function effectiveRange(
  header: RowRange | null,
  limit: number | null,
  offset: number | null,
  maxRows: number | null = null,
): RowRange {
  const qOffset = offset ?? 0;
  const qUpper = limit === null ? Infinity : qOffset + limit - 1;
  const hOffset = header?.offset ?? 0;
  const hUpper = header === null || header.limit === null ? Infinity : hOffset + header.limit - 1;
  const lower = Math.max(qOffset, hOffset);
  const upper = Math.min(qUpper, hUpper);
  // A Range header and limit/offset sharing no row: PostgREST's InvalidRange NegativeLimit (limit=0 is allowed)
  if (header !== null && upper < lower && limit !== 0) {
    throw new RestError(416, 'PGRST103', 'Requested range not satisfiable', 'Limit should be greater than or equal to zero.', null);
  }
  let count: number | null = upper === Infinity ? null : Math.max(0, upper - lower + 1);
  if (maxRows !== null && (count === null || count > maxRows)) count = maxRows;
  return { offset: lower, limit: count };
}
