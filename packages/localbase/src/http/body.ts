import type { Context } from 'hono';
import { ApiError, badJson, validationFailed } from './errors.ts';

export type Body = Record<string, unknown>;

/**
 * The deepest nesting of arrays and objects an auth request body may have, the body's own object included
 * (decision 121). Deeper metadata could be stored but not put into a token or read back from the database worker.
 */
export const MAX_JSON_DEPTH = 100;

/** Whether JSON text nests arrays and objects more than `max` levels deep (brackets inside strings do not count). */
export function jsonNestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (ch === 0x5b || ch === 0x7b) {
      if (++depth > max) return true;
    } else if (ch === 0x5d || ch === 0x7d) {
      depth--;
    }
  }
  return false;
}

/**
 * Reads a JSON object body. Not JSON, or nested too deeply → 400 bad_json. An empty body is not JSON either, as for
 * GoTrue's `retrieveRequestParams` (Go's "unexpected end of JSON input"); `emptyIsObject` reads it as {} for the
 * few endpoints GoTrue reads a body from only when there is one (decision 175).
 */
export async function readJsonObject(c: Context, opts: { emptyIsObject?: boolean } = {}): Promise<Body> {
  const text = await c.req.text();
  if (text.trim() === '') {
    if (opts.emptyIsObject) return {};
    throw badJson('unexpected end of JSON input');
  }
  if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) throw badJson(`nested more than ${MAX_JSON_DEPTH} levels deep`);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw badJson((err as Error).message);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw badJson('expected a JSON object');
  return v as Body;
}

export function optString(b: Body, key: string): string | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw validationFailed(`${key} must be a string`);
  return v;
}

export function optBool(b: Body, key: string): boolean | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw validationFailed(`${key} must be a boolean`);
  return v;
}

export function optObject(b: Body, key: string): Record<string, unknown> | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw validationFailed(`${key} must be a JSON object`);
  return v as Record<string, unknown>;
}

export function requireString(b: Body, key: string, message: string): string {
  const v = optString(b, key);
  if (!v) throw validationFailed(message);
  return v;
}

export function notFound(message = 'Not found'): ApiError {
  return new ApiError(404, 'not_found', message);
}
