/**
 * Small request/response rules of PostgREST that do not need the database: which schema a request targets
 * (Accept-Profile / Content-Profile), which representation it accepts (Accept), and the Content-Range header and
 * status of a read.
 */
import { RestError } from './errors.ts';

/**
 * The schema of a request: `Accept-Profile` for GET/HEAD, `Content-Profile` for the other methods, else the first
 * exposed schema. An unexposed schema is 406 PGRST106.
 */
export function requestSchema(
  method: string,
  headers: { get(name: string): string | null },
  exposed: readonly string[],
): string {
  const read = method === 'GET' || method === 'HEAD';
  const raw = headers.get(read ? 'accept-profile' : 'content-profile');
  if (raw === null || raw.trim() === '') {
    const first = exposed[0];
    if (first === undefined) throw new Error('No schema is exposed: configure at least one REST schema');
    return first;
  }
  const schema = raw.trim();
  if (!exposed.includes(schema)) {
    throw new RestError(406, 'PGRST106', `Invalid schema: ${schema}`, null, `Only the following schemas are exposed: ${exposed.join(', ')}`);
  }
  return schema;
}

export interface Representation {
  /** json: array; object: a single object (PGRST116 unless exactly one row); csv: text/csv. */
  kind: 'json' | 'object' | 'csv';
  /** `;nulls=stripped` on the vnd.pgrst media types. */
  stripNulls: boolean;
  /** The Content-Type to answer with. */
  contentType: string;
}

interface MediaRange {
  type: string;
  params: Map<string, string>;
  q: number;
  index: number;
}

function parseAcceptList(accept: string): MediaRange[] {
  const out: MediaRange[] = [];
  accept.split(',').forEach((part, index) => {
    const [type, ...rawParams] = part.split(';').map((s) => s.trim());
    if (!type) return;
    const params = new Map<string, string>();
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq === -1) continue;
      const k = p.slice(0, eq).trim().toLowerCase();
      const v = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
      if (k === 'q') q = Number.isFinite(Number(v)) ? Number(v) : 0;
      else params.set(k, v.toLowerCase());
    }
    out.push({ type: type.toLowerCase(), params, q, index });
  });
  return out.filter((m) => m.q > 0).sort((a, b) => b.q - a.q || a.index - b.index);
}

/**
 * Chooses the response representation from the Accept header. Unsupported only (e.g. geo+json, the plan media
 * type) → 406 PGRST107 as PostgREST.
 */
export function negotiateRepresentation(accept: string | null | undefined): Representation {
  if (accept === null || accept === undefined || accept.trim() === '') {
    return { kind: 'json', stripNulls: false, contentType: 'application/json; charset=utf-8' };
  }
  for (const m of parseAcceptList(accept)) {
    const stripNulls = m.params.get('nulls') === 'stripped';
    switch (m.type) {
      case '*/*':
      case 'application/*':
      case 'application/json':
        return { kind: 'json', stripNulls: false, contentType: 'application/json; charset=utf-8' };
      case 'application/vnd.pgrst.array+json':
        return { kind: 'json', stripNulls, contentType: `application/vnd.pgrst.array+json${stripNulls ? ';nulls=stripped' : ''}; charset=utf-8` };
      case 'application/vnd.pgrst.object+json':
      case 'application/vnd.pgrst.object':
        return { kind: 'object', stripNulls, contentType: `application/vnd.pgrst.object+json${stripNulls ? ';nulls=stripped' : ''}; charset=utf-8` };
      case 'text/csv':
      case 'text/*':
        return { kind: 'csv', stripNulls: false, contentType: 'text/csv; charset=utf-8' };
    }
  }
  throw new RestError(406, 'PGRST107', `None of these media types are available: ${accept}`, null, null);
}

/** The PGRST116 error of a single-object request that did not get exactly one row. */
export function singleObjectError(rowCount: number): RestError {
  return new RestError(406, 'PGRST116', 'Cannot coerce the result to a single JSON object', `The result contains ${rowCount} rows`, null);
}

/**
 * `Content-Range` of a read: `first-last/total`, `*\/total` when no rows, total `*` when no count was asked.
 */
export function contentRange(offset: number, rowCount: number, total: number | null): string {
  const t = total === null ? '*' : String(total);
  return rowCount === 0 ? `*/${t}` : `${offset}-${offset + rowCount - 1}/${t}`;
}

/**
 * Status of a read as PostgREST computes it: 200 without a count; with a count 416 (PGRST103, thrown) when the
 * offset is past the total, 206 when fewer rows than the total were returned, 200 otherwise.
 */
export function readStatus(offset: number, rowCount: number, total: number | null): 200 | 206 {
  if (total === null) return 200;
  if (offset > total) {
    throw new RestError(
      416,
      'PGRST103',
      'Requested range not satisfiable',
      `An offset of ${offset} was requested, but there are only ${total} rows.`,
      null,
    );
  }
  return rowCount < total ? 206 : 200;
}
