/** Validation of what clients send to /storage/v1: keys, bucket names, size limits, MIME types. */
import { badMime, invalidKey, invalidRequest, StorageError, tooLarge } from './errors.ts';

// Supabase's storage server accepts S3's safe characters (ASCII only) in keys and bucket names.
const KEY_RE = /^[A-Za-z0-9_/!.*'() &$=@;:+,?-]*$/;
const BUCKET_RE = /^[A-Za-z0-9_!.*'() &$=@;:+,?-]*$/;
/** Longest key accepted, in bytes (S3's limit). */
export const MAX_KEY_BYTES = 1024;

export function mustBeValidKey(key: string | undefined): string {
  if (!key || !KEY_RE.test(key) || Buffer.byteLength(key) > MAX_KEY_BYTES) throw invalidKey(key ?? '');
  return key;
}

export function mustBeValidBucketName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 100 || name.trim() !== name || !BUCKET_RE.test(name))
    throw new StorageError(400, 'InvalidBucketName', 'Invalid Input', 'Bucket name invalid');
  return name;
}

/** `file_size_limit`: bytes as a number, or "20MB"-style text (decimal units); null = none. Above the global limit → 413. */
export function parseFileSizeLimit(v: unknown, globalLimit: number): number | null {
  if (v === null) return null;
  let bytes: number;
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0) throw invalidRequest('file_size_limit must be an integer number of bytes ≥ 0');
    bytes = v;
  } else if (typeof v === 'string') {
    const m = /^(\d+(?:\.\d+)?)(gb|mb|kb|b)$/i.exec(v.trim());
    if (!m) throw invalidRequest('Invalid file size format, hint: use 20GB / 20MB / 30KB / 3B');
    const unit = { gb: 1e9, mb: 1e6, kb: 1e3, b: 1 }[(m[2] ?? 'b').toLowerCase() as 'gb' | 'mb' | 'kb' | 'b'];
    bytes = Math.round(Number(m[1]) * unit);
  } else {
    throw invalidRequest('file_size_limit must be a number or a string such as "20MB"');
  }
  if (bytes > globalLimit) throw tooLarge();
  return bytes;
}

const MIME_ENTRY = /^([a-z0-9!#$&^_.+-]+)\/([a-z0-9!#$&^_.+-]+|\*)\s*(;.*)?$/i;

/** `allowed_mime_types`: entries `type/subtype`, `type/*` (optionally with parameters); empty strings are dropped. */
export function parseAllowedMimeTypes(v: unknown): string[] | null {
  if (v === null) return null;
  if (!Array.isArray(v) || v.some((t) => typeof t !== 'string')) throw invalidRequest('allowed_mime_types must be an array of strings');
  const list = (v as string[]).filter((t) => t !== '');
  for (const t of list) if (!MIME_ENTRY.test(t) && !t.endsWith('*')) throw badMime(t);
  return list;
}

/** The bucket's MIME rule: any type when the list is null or empty; else `type/subtype` or `type/*` must match. */
export function checkMimeType(contentType: string, allowed: readonly string[] | null): void {
  if (!allowed || allowed.length === 0) return;
  const essence = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  const [type, subtype] = essence.split('/');
  if (!type || subtype === undefined || subtype === '') throw badMime(contentType);
  for (const entry of allowed) {
    const [t, s] = (entry.split(';')[0] ?? '').trim().toLowerCase().split('/');
    if (entry.trim() === '*' || entry.trim() === '*/*') return;
    if (t === type && (s === '*' || s === subtype)) return;
  }
  throw badMime(contentType);
}

/** Content-Disposition for `?download` (absent: none; empty: attachment; a name: attachment with that file name). */
/**
 * Headers that keep a stored file inert when a browser opens it at the top level (ADR 063). Every stored file is
 * served from localbase's own origin, the origin of its mailbox (sign-in links, codes): an SVG or XHTML file with a
 * script would otherwise run as that origin and read them. `sandbox` gives such a document an opaque origin and no
 * scripts; `nosniff` stops a browser from guessing a runnable type. Images in `<img>`, media and downloads are not
 * affected. PDF is left out: Chromium refuses to show a sandboxed PDF, and its viewer runs in an origin of its own.
 */
export function inertHeaders(contentType: string): Record<string, string> {
  const inert: Record<string, string> = { 'x-content-type-options': 'nosniff' };
  if (!/^application\/pdf\b/i.test(contentType)) inert['content-security-policy'] = 'sandbox';
  return inert;
}

export function contentDisposition(download: string | undefined): string | undefined {
  if (download === undefined) return undefined;
  if (download === '') return 'attachment;';
  const enc = encodeURIComponent(download);
  return `attachment; filename=${enc}; filename*=UTF-8''${enc}`;
}

/**
 * Parses a `Range` header against a size as storage's file backend does (src/storage/range.ts): one `bytes=` range,
 * the unit in any case; null (no header) = serve everything; anything else it cannot serve (malformed, reversed,
 * several ranges, another unit, a zero suffix, an empty object, a start past the end) = 'unsatisfiable' (416). An
 * end past the object is clamped. Decision 187.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | null | 'unsatisfiable' {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!m || size <= 0) return 'unsatisfiable';
  const [, a = '', b = ''] = m;
  if (a === '' && b === '') return 'unsatisfiable';
  if (a === '') {
    const n = Number(b);
    if (!Number.isSafeInteger(n) || n <= 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(a);
  const end = b === '' ? size - 1 : Number(b);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start || start >= size) return 'unsatisfiable';
  return { start, end: Math.min(end, size - 1) };
}

// ── body values as storage's validator reads them ─────────────────────────────────────────────────
// Storage validates bodies with Fastify's Ajv, which coerces types (coerceTypes: 'array'): a one-item list is its
// item; to an integer: a boolean or null (+v) or a string holding an integer; to a string: a number or a boolean
// ("" + v) or null (""). undefined = cannot be coerced (the caller answers "<path> must be integer|string").

const unwrap = (v: unknown): unknown => (Array.isArray(v) && v.length === 1 ? v[0] : v);

/** An integer as Ajv coerces one, or undefined. */
export function asInteger(value: unknown): number | undefined {
  const v = unwrap(value);
  if (typeof v === 'number') return Number.isInteger(v) ? v : undefined;
  if (typeof v === 'boolean' || v === null) return Number(v);
  if (typeof v === 'string' && v !== '' && Number.isInteger(Number(v))) return Number(v);
  return undefined;
}

/** A string as Ajv coerces one, or undefined. */
export function asString(value: unknown): string | undefined {
  const v = unwrap(value);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null) return '';
  return undefined;
}

/** A boolean as Ajv coerces one ("true"/1 → true, "false"/0/null → false), or undefined. */
export function asBoolean(value: unknown): boolean | undefined {
  const v = unwrap(value);
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 1) return true;
  if (v === 'false' || v === 0 || v === null) return false;
  return undefined;
}
