/**
 * /storage/v1, Supabase's storage API (decision 036). Every bucket and object call runs the SQL command Supabase's
 * storage server runs on storage.buckets / storage.objects, in a transaction under the caller's role and JWT claims
 * (the settings /rest/v1 sets: role, request.jwt.claims, request.jwt.claim.sub/role, plus storage.operation), so the
 * project's RLS policies decide; service_role bypasses RLS. Bytes live on disk (files.ts).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { jwtVerify, SignJWT } from 'jose';
import busboy from 'busboy';
import type { Database, Queryable, Row } from '../db/types.ts';
import { isConnectionFailure, isPoolTimeout } from '../db/types.ts';
import { jsonNestingExceeds, MAX_JSON_DEPTH } from '../http/body.ts';
import { fileResponse } from '../http/node-body.ts';
import {
  accessDenied,
  bucketExists,
  bucketNotEmpty,
  bucketNotFound,
  databaseTimeout,
  invalidJwt,
  invalidRequest,
  invalidSignature,
  keyExists,
  objectNotFound,
  rlsDenied,
  StorageError,
  tooLarge,
} from './errors.ts';
import { consume, type ObjectFiles, type WrittenFile } from './files.ts';
import {
  asBoolean,
  asInteger,
  asString,
  checkMimeType,
  contentDisposition,
  inertHeaders,
  mustBeValidBucketName,
  mustBeValidKey,
  parseAllowedMimeTypes,
  parseFileSizeLimit,
  parseRange,
} from './input.ts';
import {
  ImageRenderer,
  parseSignTransform,
  parseTransform,
  transformationSegments,
  transformFromString,
  type ImageTransformationLimits,
  type TransformOptions,
} from './render.ts';

export type ApiKeyRole = 'anon' | 'service_role';

export interface StorageOptions {
  db: Database;
  files: ObjectFiles;
  /** Verifies a user or API-key JWT (the /auth/v1 and /rest/v1 verifier); throws on anything else. */
  verifyJwt: (token: string) => Promise<Record<string, unknown>>;
  /** The fixed API keys (opaque sb_publishable_/sb_secret_ included) and their roles. */
  apiKeys: ReadonlyMap<string, ApiKeyRole>;
  /** The global upload limit in bytes (a bucket's file_size_limit can only lower it). */
  fileSizeLimit: number;
  /** Secret from which the key of signed URL tokens is derived (the project's JWT secret). */
  jwtSecret: string;
  /**
   * `/render/image/*` (decision 046): off (the default, as the Supabase CLI) answers 404 as a server without the
   * feature; true or limits switch it on.
   */
  imageTransformation?: boolean | Partial<ImageTransformationLimits>;
}

interface Caller {
  role: string;
  claims: Record<string, unknown>;
}

interface BucketRow extends Row {
  id: string;
  name: string;
  owner: string | null;
  public: boolean | null;
  file_size_limit: string | number | null;
  allowed_mime_types: string[] | null;
  type: string;
  created_at: Date;
  updated_at: Date;
}

interface ObjectRow extends Row {
  id: string;
  bucket_id: string;
  name: string;
  owner: string | null;
  owner_id: string | null;
  version: string | null;
  metadata: Record<string, unknown> | null;
  user_metadata: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  last_accessed_at: Date;
}

const BEARER = /^bearer\s+(.*)$/i;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_JSON_BYTES = 1024 * 1024;
const MAX_USER_METADATA_BYTES = 1024 * 1024;
/** Signed upload URLs live 2 hours, as on Supabase. */
const SIGNED_UPLOAD_SECONDS = 7200;
const OBJECT_COLUMNS =
  'id::text as id, bucket_id, name, owner::text as owner, owner_id, version, metadata, user_metadata, created_at, updated_at, last_accessed_at';
const BUCKET_COLUMNS =
  "id, name, coalesce(owner::text, '') as owner, public, file_size_limit, allowed_mime_types, type::text as type, created_at, updated_at";

class Rollback extends Error {}

export interface StorageService {
  /**
   * Answers one /storage/v1 request. `body`: the Node request the body is read from (the HTTP server passes it, so
   * that an abandoned body is never torn down under the connection); without it the Request's own body is read.
   * `clientGone`: whether the client has closed the connection, so that no answer can reach it (an upload is then
   * not kept, decision 051).
   */
  handle(request: Request, body?: Readable, clientGone?: () => boolean): Promise<Response>;
  /** Deletes files no row names (after a crash); run at start. */
  sweep(): Promise<{ removed: number }>;
  /** Deletes every stored file (after the database was reset). */
  clear(): Promise<void>;
}

export function createStorageService(opts: StorageOptions): StorageService {
  const { db, files } = opts;
  const bodies = new WeakMap<Request, Readable>();
  const departures = new WeakMap<Request, () => boolean>();
  /** The request body as a Node stream (never destroyed by the readers, see files.ts consume). */
  const bodyOf = (req: Request): Readable =>
    bodies.get(req) ?? (req.body ? Readable.fromWeb(req.body as import('node:stream/web').ReadableStream<Uint8Array>) : Readable.from([]));
  const signingKey = createHmac('sha256', opts.jwtSecret).update('localbase storage signed URLs').digest();
  const renderer = opts.imageTransformation
    ? new ImageRenderer(opts.imageTransformation === true ? {} : opts.imageTransformation)
    : null;

  // ── who is calling ────────────────────────────────────────────────────────────────────────────
  /** The caller from `Authorization: Bearer` (or, without it, the apikey, as the gateway forwards it). */
  async function callerOf(req: Request, tolerant: boolean): Promise<Caller | null> {
    const header = req.headers.get('authorization');
    const m = header === null ? null : BEARER.exec(header.trim());
    let token = m ? (m[1] ?? '').trim() : '';
    if (token === '') token = (req.headers.get('apikey') ?? '').trim();
    const fail = (message: string): null => {
      if (tolerant) return null;
      throw accessDenied(message);
    };
    const keyRole = opts.apiKeys.get(token);
    if (keyRole && !token.includes('.')) return { role: keyRole, claims: { role: keyRole } };
    if (token === '') return fail('Invalid Compact JWS');
    let claims: Record<string, unknown>;
    try {
      claims = await opts.verifyJwt(token);
    } catch (err) {
      return fail(err instanceof Error ? err.message : String(err));
    }
    // As storage's `payload.role || 'anon'`: a role claim that is not a string (123, an array) is a role of that name
    // in the database, which does not exist; only a missing or empty one is anon.
    const claimed = claims.role;
    const role = !claimed ? 'anon' : typeof claimed === 'string' ? claimed : JSON.stringify(claimed);
    // Decision 018: a token acting for a user must expire.
    if (claims.exp === undefined && role !== 'anon' && role !== 'service_role') return fail('JWT has no "exp" claim');
    return { role, claims };
  }

  const subOf = (who: Caller | null): string | null => (typeof who?.claims.sub === 'string' ? who.claims.sub : null);

  // ── the database, as the caller ───────────────────────────────────────────────────────────────
  /**
   * One transaction: `fn` starts as the server's own user and calls `become(caller)` to switch to the caller's role
   * and claims (transaction-local, as /rest/v1's envelope does). `operation` is what storage.operation() returns.
   */
  async function tx<T>(operation: string, fn: (q: Queryable, become: (who: Caller) => Promise<void>) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(async (q) => {
        await q.query("select set_config('storage.operation', $1, true)", [operation]);
        const become = async (who: Caller) => {
          const claims = JSON.stringify(who.claims);
          await q.query(
            `select set_config('role', $1, true), set_config('request.jwt.claims', $2, true),
                    set_config('request.jwt.claim.sub', $3, true), set_config('request.jwt.claim.role', $4, true),
                    set_config('request.jwt.claim.email', $5, true)`,
            [who.role, claims, subOf(who) ?? '', who.role, typeof who.claims.email === 'string' ? who.claims.email : ''],
          );
        };
        return fn(q, become);
      });
    } catch (err) {
      throw dbError(err);
    }
  }

  /** Runs fn as the caller and undoes everything: the permission check before bytes are read. */
  async function dryRun(operation: string, who: Caller, fn: (q: Queryable) => Promise<void>): Promise<void> {
    try {
      await tx(operation, async (q, become) => {
        await become(who);
        await fn(q);
        throw new Rollback();
      });
    } catch (err) {
      if (!(err instanceof Rollback)) throw err;
    }
  }

  async function findBucket(id: string): Promise<BucketRow | undefined> {
    const { rows } = await db.query<BucketRow>(`select ${BUCKET_COLUMNS} from storage.buckets where id = $1`, [id]);
    return rows[0];
  }

  async function mustFindBucket(id: string): Promise<BucketRow> {
    const b = await findBucket(id);
    if (!b) throw bucketNotFound();
    return b;
  }

  /** The object as the caller sees it (RLS SELECT), or as the server when `who` is null. */
  async function findObject(operation: string, who: Caller | null, bucket: string, key: string): Promise<ObjectRow | undefined> {
    return tx(operation, async (q, become) => {
      if (who) await become(who);
      const { rows } = await q.query<ObjectRow>(
        `select ${OBJECT_COLUMNS} from storage.objects where bucket_id = $1 and name = $2`,
        [bucket, key],
      );
      return rows[0];
    });
  }

  // ── writing objects ───────────────────────────────────────────────────────────────────────────
  interface NewObject {
    bucket: string;
    key: string;
    owner: string | null;
    upsert: boolean;
    metadata: Record<string, unknown>;
    userMetadata: Record<string, unknown>;
  }

  /** INSERT (or INSERT … ON CONFLICT DO UPDATE for upserts): the statement Supabase's RLS policies are written for. */
  async function writeRow(q: Queryable, o: NewObject, id: string, version: string): Promise<void> {
    const ownerUuid = o.owner && UUID_RE.test(o.owner) ? o.owner : null;
    await q.query(
      `insert into storage.objects (id, bucket_id, name, owner, owner_id, metadata, user_metadata, version)
       values ($1, $2, $3, $4, $5, $6, $7, $8)
       ${
         o.upsert
           ? `on conflict (bucket_id, name) do update set owner = excluded.owner, owner_id = excluded.owner_id,
                metadata = excluded.metadata, user_metadata = excluded.user_metadata, version = excluded.version,
                last_accessed_at = now()`
           : ''
       }`,
      [id, o.bucket, o.key, ownerUuid, o.owner, JSON.stringify(o.metadata), JSON.stringify(o.userMetadata), version],
    );
  }

  /**
   * Commits bytes already in a temporary file as the object's new version: in one transaction the row is written
   * (as `who`, so RLS decides; as the server when null), the file renamed into place, then the transaction commits;
   * the replaced version's file is deleted afterwards. An upload (`from`: its request) whose client has closed the
   * connection by then is rolled back: its answer cannot reach the client, which took it for cancelled (decision 051).
   */
  async function storeObject(
    operation: string,
    who: Caller | null,
    o: NewObject,
    file: WrittenFile | { tmp: string },
    from?: Request,
  ): Promise<string> {
    const gone = from ? departures.get(from) : undefined;
    const version = randomUUID();
    let id = '';
    let previous: string | null = null;
    try {
      await tx(operation, async (q, become) => {
        // Writes of one key take turns: without a row to lock yet, concurrent upserts of a new key each chose an id
        // of their own for their bytes, while ON CONFLICT kept the first row's id (an acknowledged object, then 404).
        await lockObjectKey(q, o);
        const { rows } = await q.query<{ id: string; version: string | null }>(
          'select id::text as id, version from storage.objects where bucket_id = $1 and name = $2 for update',
          [o.bucket, o.key],
        );
        const existing = rows[0];
        if (existing && !o.upsert) throw keyExists();
        id = existing?.id ?? randomUUID();
        previous = existing?.version ?? null;
        if (who) await become(who);
        await writeRow(q, o, id, version);
        if (gone?.()) throw invalidRequest('The client closed the connection before the upload was stored');
        await files.commit(file.tmp, id, version);
      });
    } catch (err) {
      await files.discard(file.tmp);
      if (id && version) {
        // renamed, then the transaction failed: its bytes go unless the row committed all the same
        const committed = isConnectionFailure(err) ? await committedAfterAll(o, id, version) : false;
        if (committed !== false) {
          if (committed && previous) await files.remove(id, previous);
          throw err; // kept: a row names them (or nobody can tell yet; an orphan is swept at the next start)
        }
        await files.remove(id, version);
      }
      throw err;
    }
    if (previous) await files.remove(id, previous);
    return id;
  }

  /** Writes of one key take turns on this transaction-scoped lock. */
  async function lockObjectKey(q: Queryable, o: NewObject): Promise<void> {
    await q.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`storage.objects ${JSON.stringify([o.bucket, o.key])}`]);
  }

  /**
   * The connection broke during a store's transaction, perhaps after its COMMIT reached the server (the answer lost):
   * did the row commit? Waits for the key's advisory lock, so the store's transaction is over (committed or rolled
   * back) before its row is read. null when the database cannot tell (still out of reach, or the lock still held).
   */
  async function committedAfterAll(o: NewObject, id: string, version: string): Promise<boolean | null> {
    try {
      return await db.transaction(async (q) => {
        await q.query("set local lock_timeout = '5s'");
        await lockObjectKey(q, o);
        const { rows } = await q.query('select 1 from storage.objects where id = $1 and version = $2', [id, version]);
        return rows.length > 0;
      });
    } catch {
      return null;
    }
  }

  /** Reads an upload body (multipart or raw) into a temporary file, enforcing the size limit and MIME rule while streaming. */
  async function receive(
    req: Request,
    key: string,
    bucket: BucketRow,
  ): Promise<{ file: WrittenFile; contentType: string; cacheControl: string; userMetadata: Record<string, unknown> }> {
    const placeholder = key.endsWith('.emptyFolderPlaceholder');
    const bucketLimit = bucket.file_size_limit === null ? Infinity : Number(bucket.file_size_limit);
    const limit = placeholder ? 0 : Math.min(opts.fileSizeLimit, bucketLimit);
    const declared = Number(req.headers.get('content-length') ?? NaN);
    const ct = req.headers.get('content-type') ?? '';
    const multipart = /^multipart\/form-data/i.test(ct);
    // a raw body longer than the limit is refused before it is read (multipart carries some framing)
    if (!multipart && Number.isFinite(declared) && declared > limit) throw tooLarge();
    const checkMime = (type: string) => {
      if (!placeholder) checkMimeType(type, bucket.allowed_mime_types);
    };
    if (!multipart) {
      const contentType = ct || 'application/octet-stream';
      checkMime(contentType);
      const userMetadata = decodeMetadataHeader(req.headers.get('x-metadata'));
      const file = await files.write(bodyOf(req), limit);
      return { file, contentType, cacheControl: req.headers.get('cache-control') || 'no-cache', userMetadata };
    }
    const source = bodyOf(req);
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        source.unpipe();
        source.pause(); // left for the HTTP layer to drain (never destroyed: the answer must reach the client)
        reject(err instanceof Error && !(err instanceof StorageError) ? invalidRequest(err.message) : err);
      };
      let bb: busboy.Busboy;
      try {
        bb = busboy({ headers: { 'content-type': ct }, limits: { files: 1, fields: 10, fieldSize: MAX_USER_METADATA_BYTES } });
      } catch (err) {
        reject(invalidRequest((err as Error).message));
        return;
      }
      const fields: Record<string, string> = {};
      let pending: Promise<{ file: WrittenFile; contentType: string }> | undefined;
      bb.on('field', (name, value) => {
        fields[name] = value;
      });
      bb.on('file', (_name, stream, info) => {
        if (pending) {
          stream.resume();
          return;
        }
        const contentType = fields.contentType || info.mimeType || 'application/octet-stream';
        try {
          checkMime(contentType);
        } catch (err) {
          stream.resume();
          fail(err);
          return;
        }
        pending = files.write(stream, limit).then((file) => ({ file, contentType }));
        pending.catch(fail);
      });
      bb.on('error', fail);
      bb.on('close', () => {
        if (settled) return;
        if (!pending) return fail(invalidRequest('No content provided'));
        pending.then(({ file, contentType }) => {
          if (settled) return void files.discard(file.tmp);
          let userMetadata: Record<string, unknown>;
          try {
            userMetadata = parseMetadataText(fields.metadata ?? fields.userMetadata);
          } catch (err) {
            void files.discard(file.tmp);
            return fail(err);
          }
          settled = true;
          const cache = fields.cacheControl;
          resolve({ file, contentType, cacheControl: cache ? `max-age=${cache}` : 'no-cache', userMetadata });
        }, fail);
      });
      source.on('error', fail);
      source.pipe(bb);
    });
  }

  function systemMetadata(file: WrittenFile, contentType: string, cacheControl: string): Record<string, unknown> {
    return {
      eTag: file.etag,
      size: file.size,
      mimetype: contentType,
      cacheControl,
      lastModified: new Date().toISOString(),
      contentLength: file.size,
      httpStatusCode: 200,
    };
  }

  // ── serving objects ───────────────────────────────────────────────────────────────────────────
  async function serve(req: Request, row: ObjectRow, url: URL, extra: Record<string, string> = {}): Promise<Response> {
    const meta = row.metadata ?? {};
    const etag = typeof meta.eTag === 'string' ? meta.eTag : undefined;
    let contentType = typeof meta.mimetype === 'string' ? meta.mimetype : 'application/octet-stream';
    if (/^text\/html/i.test(contentType)) contentType = contentType.replace(/^text\/html/i, 'text/plain');
    const stat = row.version ? await files.stat(row.id, row.version) : null;
    if (!stat) throw new StorageError(404, 'NoSuchKey', 'Not found', 'The resource was not found');
    const headers: Record<string, string> = {
      'content-type': contentType,
      'cache-control': typeof meta.cacheControl === 'string' ? meta.cacheControl : 'no-cache',
      'last-modified': new Date(row.updated_at).toUTCString(),
      'accept-ranges': 'bytes',
      'x-robots-tag': 'none',
      ...inertHeaders(contentType),
      ...extra,
    };
    if (etag) headers.etag = etag;
    const disposition = contentDisposition(url.searchParams.get('download') ?? undefined);
    if (disposition) headers['content-disposition'] = disposition;
    // HEAD answers the stored object's headers as storage's HeadRenderer does: 200 and the whole size, whatever
    // Range or the conditional headers say.
    const isHead = req.method === 'HEAD';
    if (!isHead && notModified(req, etag, row.updated_at)) return new Response(null, { status: 304, headers });
    const range = isHead ? null : parseRange(req.headers.get('range') ?? undefined, stat.size);
    if (range === 'unsatisfiable') {
      // storage's file backend (src/storage/range.ts); the Content-Range is RFC 9110's, upstream sends none
      const err = new StorageError(416, 'InvalidRange', 'invalid_range', 'invalid range provided', 416);
      return Response.json(err.body(), { status: 416, headers: { 'content-range': `bytes */${stat.size}` } });
    }
    const status = range ? 206 : 200;
    if (range) headers['content-range'] = `bytes ${range.start}-${range.end}/${stat.size}`;
    headers['content-length'] = String(range ? range.end - range.start + 1 : stat.size);
    if (isHead) return new Response(null, { status, headers });
    const path = files.pathOf(row.id, row.version as string);
    return fileResponse({ path, start: range?.start ?? 0, end: range?.end ?? stat.size - 1 }, { status, headers });
  }

  function info(row: ObjectRow): Record<string, unknown> {
    const meta = row.metadata ?? {};
    return {
      id: row.id,
      name: row.name,
      version: row.version,
      bucket_id: row.bucket_id,
      size: typeof meta.size === 'number' ? meta.size : null,
      content_type: meta.mimetype ?? null,
      cache_control: meta.cacheControl ?? null,
      etag: meta.eTag ?? null,
      metadata: row.user_metadata ?? {},
      last_modified: row.updated_at,
      created_at: row.created_at,
    };
  }

  /** GET/HEAD of an object through the authenticated or public route: Supabase's lookup rules. */
  async function lookup(req: Request, bucketId: string, key: string, mode: 'authenticated' | 'public', operation: string): Promise<ObjectRow> {
    const who = mode === 'authenticated' ? await callerOf(req, true) : null;
    const bucket = await findBucket(bucketId);
    if (!bucket) throw bucketNotFound();
    if (!bucket.public && (mode === 'public' || !who)) throw bucketNotFound();
    const row = await findObject(operation, bucket.public ? null : who, bucketId, key);
    if (!row) throw objectNotFound();
    return row;
  }

  // ── signed URLs ───────────────────────────────────────────────────────────────────────────────
  async function signToken(claims: Record<string, unknown>, expiresIn: number): Promise<string> {
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn)
      .sign(signingKey);
  }

  async function verifyToken(token: string | null, scope: 'download' | 'upload', url: string): Promise<Record<string, unknown>> {
    if (!token) throw invalidRequest("querystring must have required property 'token'", 'Bad Request');
    let claims: Record<string, unknown>;
    try {
      claims = (await jwtVerify(token, signingKey, { algorithms: ['HS256'] })).payload as Record<string, unknown>;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (/exp/.test(message) && /timestamp/.test(message))
        throw new StorageError(400, 'InvalidJWT', 'InvalidJWT', 'jwt expired');
      throw invalidJwt(message);
    }
    // As storage's verifyObjectSignature: the scope first (a token without one is a download token unless it says
    // upsert), then the object
    const tokenScope = claims.scope ?? ('upsert' in claims ? 'upload' : 'download');
    if (tokenScope !== scope) throw invalidSignature(`Token is not scoped for ${scope}`);
    if (claims.url !== url) throw invalidSignature();
    return claims;
  }

  const expiresInOf = (body: Record<string, unknown>): number => {
    if (body.expiresIn === undefined) throw invalidRequest("body must have required property 'expiresIn'", 'Bad Request');
    return bodyInteger(body, 'expiresIn', 1) as number;
  };

  // ── image transformations (render.ts, decision 046) ───────────────────────────────────────────
  /**
   * GET/HEAD /render/image/{authenticated|public|sign}/{bucket}/{key}. Who may read is the storage server's rule per
   * route: authenticated = a valid JWT and RLS SELECT as the caller (whatever the bucket); public = a public bucket,
   * read as the server; sign = the token (its transformations, not the query's), read as the server.
   */
  async function renderImage(req: Request, url: URL, r: ImageRenderer, mode: 'authenticated' | 'public' | 'sign', bucketId: string, key: string): Promise<Response> {
    let row: ObjectRow | undefined;
    let t: TransformOptions;
    const extra: Record<string, string> = {};
    if (mode === 'sign') {
      const claims = await verifyToken(url.searchParams.get('token'), 'download', `${bucketId}/${key}`);
      t = transformFromString(typeof claims.transformations === 'string' ? claims.transformations : '');
      row = await findObject('storage.render.image_sign', null, bucketId, key);
      if (typeof claims.exp === 'number') extra.expires = new Date(claims.exp * 1000).toUTCString();
    } else if (mode === 'public') {
      t = parseTransform((name) => url.searchParams.get(name) ?? undefined, 'querystring');
      const bucket = await findBucket(bucketId);
      if (!bucket?.public) throw bucketNotFound();
      row = await findObject('storage.render.image_public', null, bucketId, key);
    } else {
      const who = (await callerOf(req, false)) as Caller;
      t = parseTransform((name) => url.searchParams.get(name) ?? undefined, 'querystring');
      row = await findObject('storage.render.image_authenticated', who, bucketId, key);
    }
    if (!row) throw objectNotFound();
    const stat = row.version ? await files.stat(row.id, row.version) : null;
    if (!stat || !row.version) throw new StorageError(404, 'NoSuchKey', 'Not found', 'The resource was not found');
    const meta = row.metadata ?? {};
    const etag = typeof meta.eTag === 'string' ? meta.eTag : undefined;
    const headers: Record<string, string> = {
      'last-modified': new Date(row.updated_at).toUTCString(),
      'accept-ranges': 'bytes',
      'x-robots-tag': 'none',
      ...(extra.expires ? extra : { 'cache-control': typeof meta.cacheControl === 'string' ? meta.cacheControl : 'no-cache' }),
    };
    // the object's ETag, as upstream; the rendering for a URL changes only with the object (and Accept: Vary)
    if (etag) headers.etag = etag;
    if (t.format === undefined) headers.vary = 'Accept';
    const disposition = contentDisposition(url.searchParams.get('download') ?? undefined);
    if (disposition) headers['content-disposition'] = disposition;
    if (etagMatches(req.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers });
    const image = await r.render(files.pathOf(row.id, row.version), stat.size, t, req.headers.get('accept'));
    headers['content-type'] = image.contentType;
    Object.assign(headers, inertHeaders(image.contentType));
    headers['content-length'] = String(image.body.byteLength);
    if (image.transformations.length > 0) headers['x-transformations'] = image.transformations.join(',');
    return new Response(req.method === 'HEAD' ? null : new Uint8Array(image.body.buffer as ArrayBuffer, image.body.byteOffset, image.body.byteLength), {
      status: 200,
      headers,
    });
  }

  // ── routes ────────────────────────────────────────────────────────────────────────────────────
  async function route(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const rel = url.pathname.replace(/^\/storage\/v1/, '');
    const segs = rel.split('/').slice(1); // raw, still percent-encoded
    const method = req.method;
    const dec = (s: string | undefined): string => {
      try {
        return decodeURIComponent(s ?? '');
      } catch {
        throw invalidRequest('Invalid percent-encoding in the path');
      }
    };
    /** `{bucket}/{key…}` from segment i on: the bucket and the whole key, slashes included. */
    const target = (i: number): { bucket: string; key: string } => ({
      bucket: dec(segs[i]),
      key: mustBeValidKey(dec(segs.slice(i + 1).join('/'))),
    });
    const [s0, s1, s2] = segs;

    if (s0 === 'bucket') {
      if (segs.length === 1 || (segs.length === 2 && s1 === '')) {
        if (method === 'GET') return listBuckets(req, url);
        if (method === 'POST') return createBucket(req);
      } else if (segs.length === 2) {
        const id = dec(s1);
        if (method === 'GET') return getBucket(req, id);
        if (method === 'PUT') return updateBucket(req, id);
        if (method === 'DELETE') return deleteBucket(req, id);
      } else if (segs.length === 3 && s2 === 'empty' && method === 'POST') {
        return emptyBucket(req, dec(s1));
      }
    } else if (s0 === 'object') {
      if (s1 === 'list' && segs.length === 3 && method === 'POST') return listObjects(req, dec(s2));
      if (s1 === 'list-v2' && segs.length === 3 && method === 'POST') return listObjectsV2(req, dec(s2));
      if (s1 === 'move' && segs.length === 2 && method === 'POST') return moveObject(req);
      if (s1 === 'copy' && segs.length === 2 && method === 'POST') return copyObject(req);
      if (s1 === 'public' && segs.length > 3 && (method === 'GET' || method === 'HEAD')) {
        const t = target(2);
        return serve(req, await lookup(req, t.bucket, t.key, 'public', 'storage.object.get_public'), url);
      }
      if (s1 === 'authenticated' && segs.length > 3 && (method === 'GET' || method === 'HEAD')) {
        const t = target(2);
        return serve(req, await lookup(req, t.bucket, t.key, 'authenticated', 'storage.object.get_authenticated'), url);
      }
      if (s1 === 'info' && segs.length > 3 && method === 'GET') {
        const mode = s2 === 'public' ? 'public' : 'authenticated';
        const t = target(s2 === 'public' || s2 === 'authenticated' ? 3 : 2);
        return json(info(await lookup(req, t.bucket, t.key, mode, 'object.get_authenticated_info')));
      }
      if (s1 === 'sign' && segs.length === 3 && method === 'POST') return signMany(req, dec(s2));
      if (s1 === 'sign' && segs.length > 3) {
        const t = target(2);
        if (method === 'POST') return signOne(req, t.bucket, t.key);
        if (method === 'GET' || method === 'HEAD') {
          const claims = await verifyToken(url.searchParams.get('token'), 'download', `${t.bucket}/${t.key}`);
          const row = await findObject('storage.object.get_signed', null, t.bucket, t.key);
          if (!row) throw objectNotFound();
          const exp = typeof claims.exp === 'number' ? new Date(claims.exp * 1000).toUTCString() : undefined;
          return serve(req, row, url, exp ? { expires: exp } : {});
        }
      }
      if (s1 === 'upload' && s2 === 'sign' && segs.length > 4) {
        const t = target(3);
        if (method === 'POST') return createSignedUpload(req, t.bucket, t.key);
        if (method === 'PUT') return uploadToSigned(req, url, t.bucket, t.key);
      }
      if (segs.length === 2 && method === 'DELETE') return removeMany(req, dec(s1));
      if (segs.length > 2) {
        const t = target(1);
        if (method === 'POST' || method === 'PUT') return upload(req, t.bucket, t.key);
        if (method === 'GET' || method === 'HEAD')
          return serve(req, await lookup(req, t.bucket, t.key, 'authenticated', 'storage.object.get_authenticated'), url);
        if (method === 'DELETE') return removeOne(req, t.bucket, t.key);
      }
    }
    if (s0 === 'render' && s1 === 'image' && renderer && segs.length > 4 && (method === 'GET' || method === 'HEAD')) {
      if (s2 === 'authenticated' || s2 === 'public' || s2 === 'sign') {
        const t = target(3);
        return renderImage(req, url, renderer, s2, t.bucket, t.key);
      }
    }
    // as the storage server's not-found handler (which also answers /render/image/* when transformations are off);
    // the query string is left out of the message: it may carry a signed URL's token
    return Response.json(
      { statusCode: '404', code: 'InvalidRequest', error: 'Not Found', message: `Route ${method}:${rel} not found` },
      { status: 404 },
    );
  }

  // buckets
  async function listBuckets(req: Request, url: URL): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const p = url.searchParams;
    const sortColumn = p.get('sortColumn') ?? 'name';
    const sortOrder = (p.get('sortOrder') ?? 'asc').toLowerCase();
    if (!['id', 'name', 'created_at', 'updated_at'].includes(sortColumn))
      throw invalidRequest('querystring/sortColumn must be equal to one of the allowed values', 'Bad Request');
    if (sortOrder !== 'asc' && sortOrder !== 'desc')
      throw invalidRequest('querystring/sortOrder must be equal to one of the allowed values', 'Bad Request');
    const limit = intParam(p.get('limit'), 1, 'limit');
    const offset = intParam(p.get('offset'), 0, 'offset');
    const search = p.get('search');
    const rows = await tx('storage.bucket.list', async (q, become) => {
      await become(who);
      return (
        await q.query<BucketRow>(
          `select ${BUCKET_COLUMNS} from storage.buckets
            where type = 'STANDARD' and ($1::text is null or name ilike '%' || $1 || '%' escape '\\')
            order by ${sortColumn} ${sortOrder}, id
            limit $2 offset $3`,
          [search === null ? null : escapeLike(search), limit, offset ?? 0],
        )
      ).rows;
    });
    return json(rows.map(bucketJson));
  }

  async function getBucket(req: Request, id: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const row = await tx('storage.bucket.get', async (q, become) => {
      await become(who);
      return (await q.query<BucketRow>(`select ${BUCKET_COLUMNS} from storage.buckets where id = $1`, [id])).rows[0];
    });
    if (!row) throw bucketNotFound();
    const { type: _type, ...rest } = bucketJson(row);
    return json(rest);
  }

  async function createBucket(req: Request): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const body = await readJson(bodyOf(req));
    if (body.name === undefined) throw invalidRequest("body must have required property 'name'", 'Bad Request');
    const name = mustBeValidBucketName(body.name);
    const id = body.id === undefined || body.id === null ? name : mustBeValidBucketName(body.id);
    const isPublic = optionalBool(body.public, 'public') ?? false;
    const limit = body.file_size_limit === undefined ? null : parseFileSizeLimit(body.file_size_limit, opts.fileSizeLimit);
    const mimes = body.allowed_mime_types === undefined ? null : parseAllowedMimeTypes(body.allowed_mime_types);
    if (body.type !== undefined && body.type !== 'STANDARD') throw invalidRequest('Only STANDARD buckets are supported', 'Bad Request');
    const sub = subOf(who);
    try {
      await tx('storage.bucket.create', async (q, become) => {
        await become(who);
        await q.query(
          `insert into storage.buckets (id, name, owner, owner_id, public, file_size_limit, allowed_mime_types)
           values ($1, $2, $3, $4, $5, $6, $7)`,
          [id, name, sub && UUID_RE.test(sub) ? sub : null, sub, isPublic, limit, mimes],
        );
      });
    } catch (err) {
      if (err instanceof StorageError && err.code === 'KeyAlreadyExists') throw bucketExists();
      throw err;
    }
    return json({ name });
  }

  async function updateBucket(req: Request, id: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const body = await readJson(bodyOf(req));
    const sets: string[] = [];
    const params: unknown[] = [id];
    if (body.public !== undefined) {
      params.push(optionalBool(body.public, 'public') ?? false);
      sets.push(`public = $${params.length}`);
    }
    if (body.file_size_limit !== undefined) {
      params.push(parseFileSizeLimit(body.file_size_limit, opts.fileSizeLimit));
      sets.push(`file_size_limit = $${params.length}`);
    }
    if (body.allowed_mime_types !== undefined) {
      params.push(parseAllowedMimeTypes(body.allowed_mime_types));
      sets.push(`allowed_mime_types = $${params.length}`);
    }
    sets.push('updated_at = now()');
    const n = await tx('storage.bucket.update', async (q, become) => {
      await become(who);
      return (await q.query(`update storage.buckets set ${sets.join(', ')} where id = $1 returning id`, params)).rows.length;
    });
    if (n === 0) throw bucketNotFound();
    return json({ message: 'Successfully updated' });
  }

  async function emptyBucket(req: Request, id: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    if (who.role !== 'service_role') throw accessDenied('Access denied: Invalid role', 403);
    await mustFindBucket(id);
    const gone = await tx('storage.bucket.empty', async (q) =>
      (await q.query<{ id: string; version: string | null }>('delete from storage.objects where bucket_id = $1 returning id::text as id, version', [id])).rows,
    );
    for (const r of gone) await files.remove(r.id, r.version);
    return json({ message: 'Empty bucket has been queued. Completion may take up to an hour.' });
  }

  async function deleteBucket(req: Request, id: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    await readJson(bodyOf(req));
    const { rows } = await db.query('select 1 from storage.objects where bucket_id = $1 limit 1', [id]);
    if (rows.length > 0) throw bucketNotEmpty();
    let n: number;
    try {
      n = await tx('storage.bucket.delete', async (q, become) => {
        await become(who);
        return (await q.query('delete from storage.buckets where id = $1 returning id', [id])).rows.length;
      });
    } catch (err) {
      if (err instanceof StorageError && err.code === 'NoSuchBucket') throw bucketNotEmpty(); // an object arrived meanwhile
      throw err;
    }
    if (n === 0) throw bucketNotFound();
    return json({ message: 'Successfully deleted' });
  }

  // objects
  async function upload(req: Request, bucketId: string, key: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const upsert = req.method === 'PUT' || req.headers.get('x-upsert') === 'true';
    const operation = req.method === 'PUT' ? 'storage.object.upload_update' : 'storage.object.upload';
    const bucket = await mustFindBucket(bucketId);
    const o: NewObject = { bucket: bucketId, key, owner: subOf(who), upsert, metadata: {}, userMetadata: {} };
    // The permission check before any byte is read, as Supabase's server does: the real statement, rolled back.
    await dryRun(operation, who, async (q) => {
      if (!upsert) {
        const { rows } = await q.query('select 1 from storage.objects where bucket_id = $1 and name = $2', [bucketId, key]);
        if (rows.length > 0) throw keyExists();
      }
      await writeRow(q, o, randomUUID(), randomUUID());
    });
    const got = await receive(req, key, bucket);
    o.metadata = systemMetadata(got.file, got.contentType, got.cacheControl);
    o.userMetadata = got.userMetadata;
    const id = await storeObject(operation, who, o, got.file, req);
    return json({ Id: id, Key: `${bucketId}/${key}` });
  }

  async function listObjects(req: Request, bucketId: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const body = await readJson(bodyOf(req));
    if (body.prefix === undefined) throw invalidRequest("body must have required property 'prefix'", 'Bad Request');
    let prefix = bodyString(body, 'prefix') as string;
    if (prefix !== '' && !prefix.endsWith('/')) prefix += '/';
    const limit = Math.min(bodyInteger(body, 'limit', 1) ?? 100, 1500);
    const offset = bodyInteger(body, 'offset', 0) ?? 0;
    const sortBy = (body.sortBy ?? {}) as { column?: unknown; order?: unknown };
    const column = sortBy.column ?? 'name';
    const order = typeof sortBy.order === 'string' ? sortBy.order.toLowerCase() : 'asc';
    if (typeof column !== 'string' || !['name', 'updated_at', 'created_at', 'last_accessed_at'].includes(column))
      throw invalidRequest('body/sortBy/column must be equal to one of the allowed values', 'Bad Request');
    if (order !== 'asc' && order !== 'desc') throw invalidRequest('body/sortBy/order must be equal to one of the allowed values', 'Bad Request');
    const search = bodyString(body, 'search') ?? '';
    await mustFindBucket(bucketId);
    const orderSql =
      column === 'name'
        ? `lower(name) ${order}, name ${order}`
        : `(id is null) desc, case when id is null then lower(name) end ${order}, ${column} ${order}, name ${order}`;
    const rows = await tx('storage.object.list', async (q, become) => {
      await become(who);
      return (
        await q.query(
          `with items as (
             select substr(o.name, char_length($2::text) + 1) as rest, o.id, o.updated_at, o.created_at, o.last_accessed_at, o.metadata
               from storage.objects o
              where o.bucket_id = $1 and lower(o.name) like lower($3) || '%' escape '\\'
           ), entries as (
             select split_part(rest, '/', 1) as name, null::uuid as id, null::timestamptz as updated_at,
                    null::timestamptz as created_at, null::timestamptz as last_accessed_at, null::jsonb as metadata
               from items where position('/' in rest) > 0 group by split_part(rest, '/', 1)
             union all
             select rest, id, updated_at, created_at, last_accessed_at, metadata from items where position('/' in rest) = 0
           )
           select name, id::text as id, updated_at, created_at, last_accessed_at, metadata from entries
            where name <> '' and lower(name) like lower($4) || '%' escape '\\'
            order by ${orderSql}
            limit $5 offset $6`,
          [bucketId, prefix, escapeLike(prefix), escapeLike(search), limit, offset],
        )
      ).rows;
    });
    return json(rows);
  }

  /**
   * List v2: a flat (or, with_delimiter, one-level) listing under a raw key prefix, paged by an opaque cursor that
   * carries the sort and the last entry (keyset paging: exact pages while objects are added or removed).
   */
  async function listObjectsV2(req: Request, bucketId: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const body = await readJson(bodyOf(req));
    const prefix = typeof body.prefix === 'string' ? body.prefix : '';
    const limit = Math.min(Math.max(numberOr(body.limit, 1000, 'limit'), 1), 1000);
    const delimiter = body.with_delimiter === true;
    let sortBy = body.sortBy as { column?: unknown; order?: unknown } | undefined;
    let after: V2Cursor | undefined;
    if (typeof body.cursor === 'string' && body.cursor !== '') {
      after = decodeCursor(body.cursor);
      sortBy = { column: after.c, order: after.o };
    }
    const column = sortBy?.column ?? 'name';
    const order = typeof sortBy?.order === 'string' ? sortBy.order.toLowerCase() : 'asc';
    if (typeof column !== 'string' || !['name', 'updated_at', 'created_at'].includes(column))
      throw invalidRequest('body/sortBy/column must be equal to one of the allowed values', 'Bad Request');
    if (order !== 'asc' && order !== 'desc') throw invalidRequest('body/sortBy/order must be equal to one of the allowed values', 'Bad Request');
    await mustFindBucket(bucketId);
    const dir = prefix.slice(0, prefix.lastIndexOf('/') + 1); // the folder part of the prefix
    const cmp = order === 'asc' ? '>' : '<';
    // entries: kind 0 = folder, 1 = object; sortv = the sort column as exact text (folders: -infinity)
    const sortv = column === 'name' ? "''" : `coalesce(${column}, '-infinity')::text`;
    const orderSql = column === 'name' ? `name ${order}` : `kind, sortv::timestamptz ${order}, name ${order}`;
    const afterSql =
      column === 'name'
        ? `name ${cmp} $5`
        : `(kind > $6 or (kind = $6 and (sortv::timestamptz ${cmp} $7::timestamptz or (sortv::timestamptz = $7::timestamptz and name ${cmp} $5))))`;
    const params: unknown[] = [bucketId, prefix, dir, limit + 1];
    if (after) params.push(...(column === 'name' ? [after.n] : [after.n, after.k, after.v]));
    const rows = await tx('storage.object.list_v2', async (q, become) => {
      await become(who);
      return (
        await q.query<Row & { kind: number; name: string; key: string }>(
          `with items as (
             select o.name, substr(o.name, char_length($3::text) + 1) as rest, o.id, o.updated_at, o.created_at,
                    o.last_accessed_at, o.metadata, ${sortv} as sortv
               from storage.objects o
              where o.bucket_id = $1 and left(o.name, char_length($2::text)) = $2
           ), entries as (
             ${
               delimiter
                 ? `select 0 as kind, $3 || split_part(rest, '/', 1) || '/' as name, split_part(rest, '/', 1) as key,
                           null::uuid as id, null::timestamptz as updated_at, null::timestamptz as created_at,
                           null::timestamptz as last_accessed_at, null::jsonb as metadata, '-infinity' as sortv
                      from items where position('/' in rest) > 0 group by split_part(rest, '/', 1)
                    union all
                    select 1, name, rest, id, updated_at, created_at, last_accessed_at, metadata, sortv
                      from items where position('/' in rest) = 0`
                 : `select 1 as kind, name, rest as key, id, updated_at, created_at, last_accessed_at, metadata, sortv from items`
             }
           )
           select kind, name, key, id::text as id, updated_at, created_at, last_accessed_at, metadata, sortv from entries
            ${after ? `where ${afterSql}` : ''}
            order by ${orderSql}
            limit $4`,
          params,
        )
      ).rows;
    });
    const hasNext = rows.length > limit;
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const out: Record<string, unknown> = {
      hasNext,
      folders: page.filter((r) => r.kind === 0).map((r) => ({ key: r.key, name: r.name })),
      objects: page
        .filter((r) => r.kind === 1)
        .map((r) => ({
          key: r.key,
          name: r.name,
          id: r.id,
          updated_at: r.updated_at,
          created_at: r.created_at,
          last_accessed_at: r.last_accessed_at,
          metadata: r.metadata,
        })),
    };
    if (hasNext && last)
      out.nextCursor = encodeCursor({ c: column, o: order, n: last.name, k: last.kind, v: String(last.sortv) });
    return json(out);
  }

  async function moveObject(req: Request): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const body = await readJson(bodyOf(req));
    const { from, to, fromKey, toKey } = moveArgs(body);
    await mustFindBucket(from);
    if (to !== from) await mustFindBucket(to);
    const id = await tx('storage.object.move', async (q, become) => {
      await become(who);
      const { rows } = await q.query<{ id: string }>('select id::text as id from storage.objects where bucket_id = $1 and name = $2', [from, fromKey]);
      const row = rows[0];
      if (!row) throw objectNotFound();
      const { rows: dest } = await q.query('select 1 from storage.objects where bucket_id = $1 and name = $2', [to, toKey]);
      if (dest.length > 0) throw keyExists();
      const res = await q.query('update storage.objects set bucket_id = $2, name = $3 where id = $1 returning 1', [row.id, to, toKey]);
      if (res.rows.length === 0 && res.affectedRows === 0) throw rlsDenied();
      return row.id;
    });
    return json({ message: 'Successfully moved', Id: id, Key: toKey });
  }

  async function copyObject(req: Request): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const body = await readJson(bodyOf(req));
    const { from, to, fromKey, toKey } = moveArgs(body);
    const upsert = req.headers.get('x-upsert') === 'true';
    await mustFindBucket(from);
    if (to !== from) await mustFindBucket(to);
    const source = await findObject('storage.object.copy', who, from, fromKey);
    if (!source || !source.version) throw objectNotFound();
    const o: NewObject = {
      bucket: to,
      key: toKey,
      owner: subOf(who),
      upsert,
      metadata: { ...(source.metadata ?? {}), lastModified: new Date().toISOString() },
      userMetadata: source.user_metadata ?? {},
    };
    await dryRun('storage.object.copy', who, async (q) => {
      if (!upsert) {
        const { rows } = await q.query('select 1 from storage.objects where bucket_id = $1 and name = $2', [to, toKey]);
        if (rows.length > 0) throw keyExists();
      }
      await writeRow(q, o, randomUUID(), randomUUID());
    });
    let tmp: string;
    try {
      tmp = await files.duplicate(source.id, source.version);
    } catch {
      throw new StorageError(404, 'NoSuchKey', 'Not found', 'The resource was not found');
    }
    const id = await storeObject('storage.object.copy', who, o, { tmp });
    const row = await findObject('storage.object.copy', null, to, toKey);
    return json({ ...(row ?? {}), Id: id, Key: `${to}/${toKey}` });
  }

  async function removeMany(req: Request, bucketId: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const body = await readJson(bodyOf(req));
    const prefixes = body.prefixes;
    if (!Array.isArray(prefixes)) throw invalidRequest("body must have required property 'prefixes'", 'Bad Request');
    if (prefixes.length < 1 || prefixes.length > 1000) throw invalidRequest('body/prefixes must have between 1 and 1000 items', 'Bad Request');
    if (prefixes.some((p) => typeof p !== 'string')) throw invalidRequest('body/prefixes/0 must be string', 'Bad Request');
    await mustFindBucket(bucketId);
    const rows = await tx('storage.object.delete_many', async (q, become) => {
      await become(who);
      return (
        await q.query<ObjectRow>(`delete from storage.objects where bucket_id = $1 and name = any($2::text[]) returning ${OBJECT_COLUMNS}`, [
          bucketId,
          prefixes,
        ])
      ).rows;
    });
    for (const r of rows) await files.remove(r.id, r.version);
    return json(rows);
  }

  async function removeOne(req: Request, bucketId: string, key: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    await mustFindBucket(bucketId);
    const rows = await tx('storage.object.delete', async (q, become) => {
      await become(who);
      return (
        await q.query<{ id: string; version: string | null }>(
          'delete from storage.objects where bucket_id = $1 and name = $2 returning id::text as id, version',
          [bucketId, key],
        )
      ).rows;
    });
    if (rows.length === 0) throw objectNotFound();
    for (const r of rows) await files.remove(r.id, r.version);
    return json({ message: 'Successfully deleted' });
  }

  async function signOne(req: Request, bucketId: string, key: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const body = await readJson(bodyOf(req));
    const expiresIn = expiresInOf(body);
    const transform = parseSignTransform(body);
    await mustFindBucket(bucketId);
    const row = await findObject('storage.object.sign', who, bucketId, key);
    if (!row) throw objectNotFound();
    // with transformations on, the token carries them and the URL is the render path (as upstream)
    const transformations = renderer && transform ? transformationSegments(transform, true).join(',') : '';
    const extra: Record<string, string> = transformations ? { transformations } : {};
    if (transformations && transform?.format) extra.format = transform.format;
    const token = await signToken({ ...extra, url: `${bucketId}/${key}`, scope: 'download' }, expiresIn);
    return json({ signedURL: `/${transformations ? 'render/image' : 'object'}/sign/${bucketId}/${key}?token=${token}` });
  }

  async function signMany(req: Request, bucketId: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const body = await readJson(bodyOf(req));
    const expiresIn = expiresInOf(body);
    const paths = body.paths;
    if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string'))
      throw invalidRequest("body must have required property 'paths'", 'Bad Request');
    if (paths.length < 1 || paths.length > 1000) throw invalidRequest('body/paths must have between 1 and 1000 items', 'Bad Request');
    await mustFindBucket(bucketId);
    const visible = await tx('storage.object.sign_many', async (q, become) => {
      await become(who);
      const { rows } = await q.query<{ name: string }>('select name from storage.objects where bucket_id = $1 and name = any($2::text[])', [
        bucketId,
        paths,
      ]);
      return new Set(rows.map((r) => r.name));
    });
    const out = [];
    for (const p of paths as string[]) {
      if (!visible.has(p)) {
        out.push({ error: 'Either the object does not exist or you do not have access to it', path: p, signedURL: null });
        continue;
      }
      const token = await signToken({ url: `${bucketId}/${p}`, scope: 'download' }, expiresIn);
      out.push({ error: null, path: p, signedURL: `/object/sign/${bucketId}/${p}?token=${token}` });
    }
    return json(out);
  }

  async function createSignedUpload(req: Request, bucketId: string, key: string): Promise<Response> {
    const who = (await callerOf(req, false)) as Caller;
    const upsert = req.headers.get('x-upsert') === 'true';
    await mustFindBucket(bucketId);
    const o: NewObject = { bucket: bucketId, key, owner: subOf(who), upsert, metadata: {}, userMetadata: {} };
    await dryRun('storage.object.sign_upload_url', who, async (q) => {
      if (!upsert) {
        const { rows } = await q.query('select 1 from storage.objects where bucket_id = $1 and name = $2', [bucketId, key]);
        if (rows.length > 0) throw keyExists();
      }
      await writeRow(q, o, randomUUID(), randomUUID());
    });
    const token = await signToken({ owner: subOf(who), url: `${bucketId}/${key}`, upsert, scope: 'upload' }, SIGNED_UPLOAD_SECONDS);
    return json({ url: `/object/upload/sign/${bucketId}/${key}?token=${token}`, token });
  }

  async function uploadToSigned(req: Request, url: URL, bucketId: string, key: string): Promise<Response> {
    const claims = await verifyToken(url.searchParams.get('token'), 'upload', `${bucketId}/${key}`);
    const bucket = await mustFindBucket(bucketId);
    const upsert = claims.upsert === true;
    const owner = typeof claims.owner === 'string' ? claims.owner : null;
    if (!upsert) {
      const { rows } = await db.query('select 1 from storage.objects where bucket_id = $1 and name = $2', [bucketId, key]);
      if (rows.length > 0) throw keyExists();
    }
    const got = await receive(req, key, bucket);
    const o: NewObject = {
      bucket: bucketId,
      key,
      owner,
      upsert,
      metadata: systemMetadata(got.file, got.contentType, got.cacheControl),
      userMetadata: got.userMetadata,
    };
    await storeObject('storage.object.upload_signed', null, o, got.file, req);
    return json({ Key: `${bucketId}/${key}` });
  }

  return {
    async handle(request, body, clientGone) {
      if (body) bodies.set(request, body);
      if (clientGone) departures.set(request, clientGone);
      try {
        return await route(request);
      } catch (err) {
        const e = err instanceof StorageError ? err : dbError(err);
        if (e instanceof StorageError) return Response.json(e.body(), { status: e.httpStatus });
        // a database out of reach is told once by the database itself (db/pg.ts), not with a stack per request
        if (!isConnectionFailure(err)) console.error(`[localbase] storage ${request.method} ${new URL(request.url).pathname} failed:`, err);
        // the storage server's answer to an error it has no name for (a refused or broken connection among them)
        return Response.json({ statusCode: '500', code: 'InternalError', error: 'Internal', message: 'Internal Server Error' }, { status: 500 });
      }
    },
    sweep: () => files.sweep(db),
    clear: () => files.clear(),
  };
}

// ── helpers ─────────────────────────────────────────────────────────────────────────────────────
/** Whether an If-None-Match header names the object's ETag (weak or strong) or is `*`. */
function etagMatches(inm: string | null, etag: string | undefined): boolean {
  return !!etag && !!inm && inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag || t.trim() === '*');
}

/**
 * A download's conditional headers, as storage's backends answer them: If-None-Match, else If-Modified-Since at or
 * after the object's last change, is 304. If-None-Match, when sent, decides alone (RFC 9110 13.2.2). Last-Modified
 * goes out in whole seconds, so the change time is cut to its second: a client echoing the header back gets its 304.
 */
function notModified(req: Request, etag: string | undefined, updatedAt: Date): boolean {
  const inm = req.headers.get('if-none-match');
  if (inm) return etagMatches(inm, etag);
  const since = Date.parse(req.headers.get('if-modified-since') ?? '');
  if (Number.isNaN(since)) return false;
  return Math.floor(new Date(updatedAt).getTime() / 1000) * 1000 <= since;
}

function json(v: unknown): Response {
  return Response.json(v, { status: 200 });
}

function bucketJson(b: BucketRow): Record<string, unknown> {
  return {
    id: b.id,
    name: b.name,
    owner: b.owner ?? '',
    public: b.public ?? false,
    type: b.type,
    file_size_limit: b.file_size_limit === null ? null : Number(b.file_size_limit),
    allowed_mime_types: b.allowed_mime_types,
    created_at: b.created_at,
    updated_at: b.updated_at,
  };
}

/** PostgreSQL errors that are the client's doing, and the waits the storage server names (DatabaseTimeout). */
function dbError(err: unknown): unknown {
  if (err instanceof StorageError || err instanceof Rollback) return err;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code === '57014' || isPoolTimeout(err)) return databaseTimeout();
  if (code === '42501') return rlsDenied();
  if (code === '23505') return keyExists();
  if (code === '23503') return bucketNotFound();
  if (code === '22023' || code === '42704') return accessDenied(String(e.message));
  if (/^22/.test(code)) return invalidRequest(String(e.message));
  return err;
}

interface V2Cursor {
  c: string;
  o: string;
  n: string;
  k: number;
  v: string;
}

function encodeCursor(c: V2Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

function decodeCursor(text: string): V2Cursor {
  try {
    const v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<V2Cursor>;
    if (typeof v.c === 'string' && typeof v.o === 'string' && typeof v.n === 'string' && typeof v.k === 'number' && typeof v.v === 'string')
      return v as V2Cursor;
  } catch {
    /* below */
  }
  throw invalidRequest('Invalid cursor', 'Bad Request');
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}


/** A JSON object body, at most 1 MiB; an empty body is {}. */
async function readJson(source: Readable): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  await consume(source, (chunk) => {
    size += chunk.byteLength;
    if (size > MAX_JSON_BYTES) throw tooLarge();
    chunks.push(chunk);
  });
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw invalidRequest(`Body is not valid JSON: ${(err as Error).message}`, 'Bad Request');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw invalidRequest('body must be object', 'Bad Request');
  return v as Record<string, unknown>;
}

/** A boolean property, coerced as storage's validator does; undefined when absent (null is false, as there). */
function optionalBool(v: unknown, name: string): boolean | undefined {
  if (v === undefined) return undefined;
  const b = asBoolean(v);
  if (b === undefined) throw invalidRequest(`body/${name} must be boolean`, 'Bad Request');
  return b;
}

function intParam(v: string | null, min: number, name: string): number | null {
  if (v === null) return null;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw invalidRequest(`querystring/${name} must be >= ${min}`, 'Bad Request');
  return n;
}

/** An integer property of a body, coerced as storage's validator does; undefined when absent. */
function bodyInteger(body: Record<string, unknown>, name: string, min: number): number | undefined {
  if (body[name] === undefined) return undefined;
  const n = asInteger(body[name]);
  if (n === undefined) throw invalidRequest(`body/${name} must be integer`, 'Bad Request');
  if (n < min) throw invalidRequest(`body/${name} must be >= ${min}`, 'Bad Request');
  return n;
}

/** A string property of a body, coerced as storage's validator does; undefined when absent. */
function bodyString(body: Record<string, unknown>, name: string): string | undefined {
  if (body[name] === undefined) return undefined;
  const v = asString(body[name]);
  if (v === undefined) throw invalidRequest(`body/${name} must be string`, 'Bad Request');
  return v;
}

function numberOr(v: unknown, dflt: number, name: string): number {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw invalidRequest(`body/${name} must be an integer >= 0`, 'Bad Request');
  return v;
}

function moveArgs(body: Record<string, unknown>): { from: string; to: string; fromKey: string; toKey: string } {
  // as storage's schema: the required properties first, then each one's type (coerced: a number is its text)
  for (const k of ['bucketId', 'sourceKey', 'destinationKey'])
    if (body[k] === undefined) throw invalidRequest(`body must have required property '${k}'`, 'Bad Request');
  const from = bodyString(body, 'bucketId') as string;
  const sourceKey = bodyString(body, 'sourceKey') as string;
  const to = bodyString(body, 'destinationBucket') || from;
  const destinationKey = bodyString(body, 'destinationKey') as string;
  return { from, to, fromKey: mustBeValidKey(sourceKey), toKey: mustBeValidKey(destinationKey) };
}

function parseMetadataText(text: string | undefined): Record<string, unknown> {
  if (!text || text.length > MAX_USER_METADATA_BYTES) return {};
  // Deeper metadata could be stored but not read back (decision 121): refused, not dropped like unreadable text.
  if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) throw invalidRequest(`metadata is nested more than ${MAX_JSON_DEPTH} levels deep`);
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function decodeMetadataHeader(value: string | null): Record<string, unknown> {
  if (!value) return {};
  return parseMetadataText(Buffer.from(value, 'base64').toString('utf8'));
}
