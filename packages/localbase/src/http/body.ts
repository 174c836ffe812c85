import type { Context } from 'hono';
import { ApiError, badJson, validationFailed } from './errors.ts';

export type Body = Record<string, unknown>;

/** Reads a JSON object body. Empty body = {}. Not JSON → 400 bad_json. */
export async function readJsonObject(c: Context): Promise<Body> {
  const text = await c.req.text();
  if (text.trim() === '') return {};
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
