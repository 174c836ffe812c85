/**
 * Where a view's columns come from: reads the view's stored rewrite rule (`pg_rewrite.ev_action`, PostgreSQL's
 * node-tree text) and returns, for every output column of the top-level query, the table column it is a plain
 * reference to (`TARGETENTRY :resorigtbl / :resorigcol`, which PostgreSQL fills in for exactly those columns).
 * PostgREST derives the relationships of views from the same information; schema-cache.ts uses this to give
 * views the foreign keys of the tables they select from.
 *
 * The node-tree text is a small S-expression format (see PostgreSQL's outfuncs.c / read.c): `{NODE :field value
 * ...}` nodes, `( ... )` lists, and whitespace-separated tokens in which `\` escapes the next character.
 */

/** A view column (by position = attnum) that is a plain reference to column `column` (attnum) of relation `relation` (oid). */
export interface ColumnOrigin {
  position: number;
  relation: string;
  column: number;
}

interface TreeNode {
  type: string;
  fields: Map<string, TreeValue[]>;
}
type TreeValue = string | TreeNode | TreeValue[];

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === ' ' || ch === '\n' || ch === '\t' || ch === '\r') {
      i++;
    } else if (ch === '(' || ch === ')' || ch === '{' || ch === '}') {
      tokens.push(ch);
      i++;
    } else {
      const start = i;
      while (i < text.length) {
        const c = text[i]!;
        if (c === ' ' || c === '\n' || c === '\t' || c === '\r' || c === '(' || c === ')' || c === '{' || c === '}') break;
        i += c === '\\' && i + 1 < text.length ? 2 : 1;
      }
      tokens.push(text.slice(start, i));
    }
  }
  return tokens;
}

class TreeReader {
  private pos = 0;
  private readonly tokens: string[];
  constructor(tokens: string[]) {
    this.tokens = tokens;
  }

  /** Items up to the closing bracket (not consumed); inside a node, also stops before the next `:field`. */
  items(inNode: boolean): TreeValue[] {
    const out: TreeValue[] = [];
    while (this.pos < this.tokens.length) {
      const t = this.tokens[this.pos]!;
      if (t === ')' || t === '}') break;
      if (inNode && t.startsWith(':')) break;
      this.pos++;
      if (t === '{') out.push(this.node());
      else if (t === '(') out.push(this.list());
      else out.push(t);
    }
    return out;
  }

  private node(): TreeNode {
    const type = this.tokens[this.pos] ?? '';
    if (type !== '}') this.pos++;
    const fields = new Map<string, TreeValue[]>();
    while (this.pos < this.tokens.length && this.tokens[this.pos] !== '}') {
      const t = this.tokens[this.pos]!;
      if (t === ')') {
        this.pos++; // unbalanced: skip
        continue;
      }
      if (t.startsWith(':')) {
        this.pos++;
        fields.set(t.slice(1), this.items(true));
      } else {
        this.items(true); // stray values before the first field
        if (this.tokens[this.pos] === t) this.pos++;
      }
    }
    this.pos++; // '}'
    return { type, fields };
  }

  private list(): TreeValue[] {
    const out = this.items(false);
    while (this.pos < this.tokens.length && this.tokens[this.pos] !== ')') {
      this.pos++; // a stray '}' inside a list
      out.push(...this.items(false));
    }
    this.pos++; // ')'
    return out;
  }
}

const isNode = (v: TreeValue | undefined): v is TreeNode => typeof v === 'object' && v !== null && !Array.isArray(v);

function scalar(node: TreeNode, field: string): string | undefined {
  const v = node.fields.get(field)?.[0];
  return typeof v === 'string' ? v : undefined;
}

/**
 * The column origins of a view from its `ev_action` text. Columns that are expressions, come from a set
 * operation or a function have no origin and are left out. Unreadable input gives an empty list.
 */
export function viewColumnOrigins(evAction: string): ColumnOrigin[] {
  const top = new TreeReader(tokenize(evAction)).items(false);
  // ev_action is a list holding the one Query of the view's _RETURN rule
  const list = Array.isArray(top[0]) ? top[0] : top;
  const query = list.find(isNode);
  if (!query || query.type !== 'QUERY') return [];
  const targets = query.fields.get('targetList')?.[0];
  if (!Array.isArray(targets)) return [];
  const out: ColumnOrigin[] = [];
  for (const entry of targets) {
    if (!isNode(entry) || entry.type !== 'TARGETENTRY') continue;
    if (scalar(entry, 'resjunk') === 'true') continue;
    const position = Number(scalar(entry, 'resno'));
    const relation = scalar(entry, 'resorigtbl');
    const column = Number(scalar(entry, 'resorigcol'));
    if (!Number.isInteger(position) || relation === undefined || !/^[0-9]+$/.test(relation) || relation === '0') continue;
    if (!Number.isInteger(column) || column <= 0) continue;
    out.push({ position, relation, column });
  }
  return out;
}
