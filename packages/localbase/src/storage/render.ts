/**
 * /storage/v1/render/image/{authenticated|public|sign}/{bucket}/{key}: Supabase Storage's image transformations
 * (decision 046). Upstream hands the object to imgproxy; here sharp (libvips) renders it in libuv's thread pool, so
 * the event loop never decodes a pixel. The options, their validation messages, the `X-Transformations` header,
 * the limits and the error messages are the storage server's (src/storage/renderer/image.ts, src/http/schemas/
 * transformations.ts) with the imgproxy settings the Supabase CLI starts it with (50 MP, 25 MB sources, webp
 * detection, the `default=width:3000/height:8192` preset, jpeg/webp quality 80 and avif 62).
 *
 * Memory is bounded before any pixel is decoded: the file size is checked against its stat, then only the image's
 * header is read (dimensions); a source above the pixel limit is refused there, and the decoder itself is given
 * the same limit (libvips stops at the header, so a decompression bomb never expands). At most `concurrency`
 * renders run at once and a bounded line waits; output dimensions are clamped (2000 px per side when asked, the
 * preset's 3000 × 8192 box otherwise), so each rendered body held for its Content-Length is bounded too.
 */
import os from 'node:os';
import type { Sharp, SharpOptions } from 'sharp';
import { invalidRequest, StorageError } from './errors.ts';

export interface TransformOptions {
  width?: number;
  height?: number;
  resize?: 'cover' | 'contain' | 'fill';
  format?: 'origin' | 'avif' | 'webp';
  quality?: number;
}

export interface ImageTransformationLimits {
  /** Largest source file, in bytes (the CLI's IMGPROXY_MAX_SRC_FILE_SIZE: 25 000 000). */
  maxSourceBytes: number;
  /** Largest source resolution, in pixels (the CLI's IMGPROXY_MAX_SRC_RESOLUTION: 50 megapixels). */
  maxSourcePixels: number;
  /** Renders at once; the others wait in line (default: CPU cores − 1, between 1 and 2). */
  concurrency: number;
  /** Renders allowed to wait; past that `429 Too many requests`. */
  maxQueued: number;
  /** A render taking longer is stopped (`408 Image request timed out`; imgproxy's request timeout is 15 s). */
  timeoutSeconds: number;
}

export const DEFAULT_IMAGE_LIMITS: ImageTransformationLimits = {
  maxSourceBytes: 25_000_000,
  maxSourcePixels: 50_000_000,
  concurrency: Math.max(1, Math.min(2, os.availableParallelism() - 1)),
  maxQueued: 32,
  timeoutSeconds: 15,
};

/** The storage server's clamp on width and height (IMAGE_TRANSFORMATION_LIMIT_MIN_SIZE / MAX_SIZE defaults). */
const SIZE_MIN = 1;
const SIZE_MAX = 2000;
/** The Supabase CLI's imgproxy preset `default=width:3000/height:8192`: the box when no size is asked for. */
const PRESET_WIDTH = 3000;
const PRESET_HEIGHT = 8192;
/** The CLI's IMGPROXY_FORMAT_QUALITY=jpeg=80,avif=62,webp=80. */
const DEFAULT_QUALITY: Record<string, number> = { jpeg: 80, webp: 80, avif: 62 };
/** Source formats rendered (what imgproxy reads and the prebuilt libvips decodes). */
const INPUT_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'heif', 'avif', 'tiff', 'svg']);
const RESIZE = ['cover', 'contain', 'fill'] as const;
const FORMATS = ['origin', 'avif', 'webp'] as const;

// ── options: parsing and validation as the storage server's JSON schema ───────────────────────────
/**
 * Validates the transformation options from the query string (`where` = "querystring") or a sign body's
 * `transform` (`where` = "body/transform"), with the validator's messages (400 InvalidRequest "Bad Request").
 * Numeric strings are taken as numbers (the server's validator coerces types); unknown keys are ignored, as the
 * server's schema strips them.
 */
export function parseTransform(get: (name: string) => unknown, where: string): TransformOptions {
  const out: TransformOptions = {};
  const bad = (message: string): StorageError => invalidRequest(`${where}/${message}`, 'Bad Request');
  const integer = (name: 'width' | 'height' | 'quality', min: number, max?: number): number | undefined => {
    const raw = get(name);
    if (raw === undefined || raw === null) return undefined;
    let n: number;
    if (typeof raw === 'number') n = raw;
    else if (typeof raw === 'string') n = raw.trim() === '' ? 0 : Number(raw);
    else throw bad(`${name} must be integer`);
    if (!Number.isInteger(n)) throw bad(`${name} must be integer`);
    if (n < min) throw bad(`${name} must be >= ${min}`);
    if (max !== undefined && n > max) throw bad(`${name} must be <= ${max}`);
    return n;
  };
  const oneOf = <T extends string>(name: 'resize' | 'format', allowed: readonly T[]): T | undefined => {
    const raw = get(name);
    if (raw === undefined || raw === null) return undefined;
    if (typeof raw !== 'string') throw bad(`${name} must be string`);
    if (!(allowed as readonly string[]).includes(raw)) throw bad(`${name} must be equal to one of the allowed values`);
    return raw as T;
  };
  const height = integer('height', 0);
  const width = integer('width', 0);
  const resize = oneOf('resize', RESIZE);
  const format = oneOf('format', FORMATS);
  const quality = integer('quality', 20, 100);
  if (height !== undefined) out.height = height;
  if (width !== undefined) out.width = width;
  if (resize !== undefined) out.resize = resize;
  if (format !== undefined) out.format = format;
  if (quality !== undefined) out.quality = quality;
  return out;
}

/** A sign request's `transform` member (absent or null: none). */
export function parseSignTransform(body: Record<string, unknown>): TransformOptions | undefined {
  const t = body.transform;
  if (t === undefined || t === null) return undefined;
  if (typeof t !== 'object' || Array.isArray(t)) throw invalidRequest('body/transform must be object', 'Bad Request');
  return parseTransform((name) => (t as Record<string, unknown>)[name], 'body/transform');
}

const clamp = (n: number): number => Math.min(Math.max(n, SIZE_MIN), SIZE_MAX);
const imgproxyResize = (r: TransformOptions['resize']): string => (r === 'contain' ? 'fit' : r === 'fill' ? 'force' : 'fill');

/**
 * The transformations as the storage server lists them: `X-Transformations` (imgproxy's names) or, with
 * `forToken`, the string a signed URL's token carries (`resize:` with the option's own name).
 */
export function transformationSegments(t: TransformOptions, forToken = false): string[] {
  const s: string[] = [];
  if (t.height) s.push(`height:${clamp(t.height)}`);
  if (t.width) s.push(`width:${clamp(t.width)}`);
  if (t.width || t.height) s.push(forToken ? `resize:${t.resize ?? 'cover'}` : `resizing_type:${imgproxyResize(t.resize)}`);
  if (t.quality) s.push(`quality:${t.quality}`);
  if (t.format && t.format !== 'origin') s.push(`format:${t.format}`);
  return s;
}

/** The options back from a token's `transformations` string (entries not understood are skipped, as upstream). */
export function transformFromString(text: string): TransformOptions {
  const t: TransformOptions = {};
  for (const part of text.split(',')) {
    const [name, value] = part.split(':');
    if (value === undefined || value === '') continue;
    const n = Number.parseInt(value, 10);
    if (name === 'height' && n > 0) t.height = n;
    else if (name === 'width' && n > 0) t.width = n;
    else if (name === 'quality' && n >= 20 && n <= 100) t.quality = n;
    else if (name === 'resize' && (RESIZE as readonly string[]).includes(value)) t.resize = value as TransformOptions['resize'];
    else if (name === 'format' && (FORMATS as readonly string[]).includes(value)) t.format = value as TransformOptions['format'];
  }
  return t;
}

// ── rendering ─────────────────────────────────────────────────────────────────────────────────────
type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif' | 'gif' | 'tiff';
/** `format=origin`: the source's own format (libvips reports AVIF as heif; SVG is rasterised to PNG). */
const ORIGIN_OUTPUT: Record<string, OutputFormat> = {
  jpeg: 'jpeg',
  png: 'png',
  webp: 'webp',
  gif: 'gif',
  heif: 'avif',
  avif: 'avif',
  tiff: 'tiff',
  svg: 'png',
};

function encode(p: Sharp, format: OutputFormat, quality: number | undefined): Sharp {
  switch (format) {
    case 'jpeg':
      return p.jpeg({ quality });
    case 'webp':
      return p.webp({ quality });
    case 'avif':
      return p.avif({ quality });
    case 'tiff':
      return p.tiff({ quality });
    case 'gif':
      return p.gif();
    case 'png':
      return p.png();
  }
}
/** The storage server's ImageProcessingError: code InvalidRequest (InternalError from 500), HTTP 400 or 500. */
const imageError = (status: number, message: string): StorageError =>
  new StorageError(status, status > 499 ? 'InternalError' : 'InvalidRequest', status > 499 ? 'InternalError' : 'InvalidRequest', message);
const UNSUPPORTED = 'The source image is invalid or unsupported for rendering';
const TOO_MANY_PIXELS = 'The source image resolution is too large to process';
const TOO_BIG_FILE = 'The source image file is too large to process';

export interface RenderedImage {
  body: Buffer;
  contentType: string;
  /** What `X-Transformations` says (empty: no header). */
  transformations: string[];
}

type SharpFactory = (input?: string, options?: SharpOptions) => Sharp;
let sharpModule: Promise<SharpFactory> | undefined;
/** sharp (a native addon) is loaded on the first render only, so servers with the feature off never load it. */
function loadSharp(): Promise<SharpFactory> {
  sharpModule ??= import('sharp').then((m) => {
    const sharp = m.default;
    sharp.cache(false); // no libvips operation cache: every render's memory is returned when it ends
    return sharp as unknown as SharpFactory;
  });
  return sharpModule;
}

/** Accept lists image/webp with a non-zero q. */
function acceptsWebp(accept: string | null): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    if (type?.trim() !== 'image/webp') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

export class ImageRenderer {
  readonly limits: ImageTransformationLimits;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(limits: Partial<ImageTransformationLimits> = {}) {
    this.limits = { ...DEFAULT_IMAGE_LIMITS, ...limits };
  }

  /** One render slot; past the line's length, 429 as imgproxy's "Too many requests". */
  async #slot<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#running >= this.limits.concurrency) {
      if (this.#waiting.length >= this.limits.maxQueued) throw imageError(429, 'Too many requests');
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }

  /**
   * Renders the file of a stored version (`size` from its stat) with `t`. `accept` is the request's Accept header:
   * without an explicit `format`, a client that takes webp gets webp (imgproxy's webp detection, on in the CLI).
   */
  async render(file: string, size: number, t: TransformOptions, accept: string | null): Promise<RenderedImage> {
    if (size > this.limits.maxSourceBytes) throw imageError(400, TOO_BIG_FILE);
    const sharp = await loadSharp();
    return this.#slot(async () => {
      // the header only: format and dimensions, nothing decoded yet
      let meta;
      try {
        meta = await sharp(file, { limitInputPixels: false }).metadata();
      } catch {
        throw imageError(400, UNSUPPORTED);
      }
      if (!meta.format || !INPUT_FORMATS.has(meta.format) || !meta.width || !meta.height) throw imageError(400, UNSUPPORTED);
      if (meta.width * meta.height > this.limits.maxSourcePixels) throw imageError(400, TOO_MANY_PIXELS);

      // an explicit webp/avif wins; without a format the Accept header decides (so the answer varies with it)
      const negotiated = t.format === undefined;
      let format: OutputFormat;
      if (t.format === 'webp' || t.format === 'avif') format = t.format;
      else if (negotiated && acceptsWebp(accept)) format = 'webp';
      else format = ORIGIN_OUTPUT[meta.format] ?? 'png';

      const width = t.width ? clamp(t.width) : undefined;
      const height = t.height ? clamp(t.height) : undefined;
      const fit = t.resize === 'contain' ? 'inside' : t.resize === 'fill' ? 'fill' : 'cover';
      const quality = t.quality ?? DEFAULT_QUALITY[format];
      let pipeline = sharp(file, { limitInputPixels: this.limits.maxSourcePixels, failOn: 'error' })
        .rotate() // EXIF orientation applied, as imgproxy does
        .resize(
          width || height
            ? { width, height, fit, withoutEnlargement: true }
            : { width: PRESET_WIDTH, height: PRESET_HEIGHT, fit: 'inside', withoutEnlargement: true },
        )
        .timeout({ seconds: this.limits.timeoutSeconds });
      pipeline = encode(pipeline, format, quality);
      let body: Buffer;
      try {
        body = await pipeline.toBuffer();
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (/timeout/i.test(message)) throw imageError(408, 'Image request timed out');
        if (/pixel limit/i.test(message)) throw imageError(400, TOO_MANY_PIXELS);
        throw imageError(400, UNSUPPORTED);
      }
      const contentType = `image/${format}`;
      return { body, contentType, transformations: transformationSegments(t) };
    });
  }
}
