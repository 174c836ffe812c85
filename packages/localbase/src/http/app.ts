import { Hono } from 'hono';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { ResolvedConfig } from '../config.ts';
import { DEFAULT_PUBLISHABLE_KEY, DEFAULT_SECRET_KEY } from '../config.ts';
import { ApiError } from './errors.ts';
import { fileBodyOf, sendFile } from './node-body.ts';
import { CLIENT_CLOSED_REQUEST, clientGone, closesAfterAnswer, discardRest, nodeOf } from './connection.ts';
import type { AuthService } from '../auth/service.ts';
import { authRoutes } from '../auth/routes.ts';
import { deleteOldGuests } from '../auth/cleanup.ts';
import { mailboxRoutes } from '../mail/routes.ts';
import { mailboxGuard } from '../mail/guard.ts';
import type { RestService } from '../rest/service.ts';
import type { StorageService } from '../storage/service.ts';
import type { RealtimeServer } from '../realtime/server.ts';
import { realtimeRoutes } from '../realtime/routes.ts';
import { isConnectionFailure, isPoolTimeout } from '../db/types.ts';

export const API_VERSION = '2024-01-01';
export const MAX_BODY_BYTES = 1024 * 1024;

const ALLOWED_HEADERS =
  'authorization, x-client-info, apikey, content-type, x-supabase-api-version, prefer, accept-profile, content-profile, range, x-retry-count, traceparent, tracestate, baggage, x-upsert, x-metadata, cache-control, if-none-match';
export const EXPOSED_HEADERS =
  'Content-Range, X-Supabase-Api-Version, X-Total-Count, Link, x-sb-error-code, ETag, Accept-Ranges, Content-Disposition';

export type ApiKeyRole = 'anon' | 'service_role';

function errorResponse(c: Context, err: ApiError): Response {
  const body: Record<string, unknown> = { code: err.code, message: err.message, ...err.extra };
  c.header('x-sb-error-code', err.code);
  if (err.retryAfter) c.header('Retry-After', String(err.retryAfter));
  return c.json(body, err.status as 400);
}

/** Hides secrets in the logged path: the query string is dropped entirely. */
function logPath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '?';
  }
}

/** The fixed API keys and the role each stands for. */
export function knownApiKeys(cfg: ResolvedConfig): Map<string, ApiKeyRole> {
  return new Map<string, ApiKeyRole>([
    [cfg.anonKey, 'anon'],
    [cfg.serviceRoleKey, 'service_role'],
    [DEFAULT_PUBLISHABLE_KEY, 'anon'],
    [DEFAULT_SECRET_KEY, 'service_role'],
  ]);
}

/** What the running server can do for the CLI (`localbase db reset` while it runs). */
export interface AdminActions {
  resetDatabase(): Promise<unknown>;
}

/** Loopback peer and the service_role / secret key as apikey: the checks of the /localbase/v1 endpoints. */
function requireLocalAdmin(c: Context, keys: Map<string, ApiKeyRole>, what: string): void {
  const peer = nodeOf(c)?.incoming.socket?.remoteAddress ?? '';
  if (!LOOPBACK.test(peer)) throw new ApiError(403, 'forbidden', `${what} is only accepted from this machine`);
  if (keys.get(c.req.header('apikey') ?? '') !== 'service_role')
    throw new ApiError(401, 'no_authorization', `${what} needs the service_role (or secret) key as apikey`);
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

export function createApp(
  cfg: ResolvedConfig,
  auth: AuthService,
  rest?: RestService,
  admin?: AdminActions,
  storage?: StorageService,
  realtime?: RealtimeServer,
): Hono {
  const app = new Hono();
  const keys = knownApiKeys(cfg);

  // The connection around each request (decision 020), and the request log: method, path (no query: it may carry
  // tokens), status, ms.
  app.use('*', async (c, next) => {
    const started = performance.now();
    const node = nodeOf(c);
    await next();
    // An answer that is ready before the request body has all arrived (413, 401, 404, a preflight …) on a connection
    // that closes after it (the client sent `Connection: close`): Node would close the socket with the rest of the
    // body unread, and a client that writes its whole body before it reads (curl, undici) would get a reset instead
    // of the answer. Read and discard the rest first, within bounds. (On a keep-alive connection the answer goes out
    // at once and drainAfterAnswer, installed on the server, reads the rest.)
    if (node && !node.incoming.complete && !clientGone(node) && closesAfterAnswer(node.incoming)) {
      await discardRest(node.incoming);
    }
    // A client that went away (aborted mid-body, closed before the answer) is not a server error: one log line with
    // status 499 "client closed request", and nothing is written to the closed connection.
    const gone = node !== undefined && clientGone(node);
    if (!cfg.quiet) {
      const ms = (performance.now() - started).toFixed(1);
      const status = gone ? `${CLIENT_CLOSED_REQUEST} (client closed the connection)` : String(c.res.status);
      console.log(`${c.req.method} ${logPath(c.req.url)} ${status} ${ms}ms`);
    }
    if (gone) {
      // Assigning over an existing response would merge the two (hono copies the old headers into a new one).
      c.res = undefined;
      c.res = RESPONSE_ALREADY_SENT;
      return;
    }
    // A stored file (storage downloads): piped from disk into the socket, with the answer's final headers, rather
    // than read through its web stream (ADR 179).
    const file = node && c.req.method !== 'HEAD' ? fileBodyOf(c.res) : undefined;
    if (node && file) {
      const head: Record<string, string> = {};
      c.res.headers.forEach((v, k) => {
        head[k] = v;
      });
      node.outgoing.writeHead(c.res.status, head);
      sendFile(file, node.outgoing).catch((err: unknown) => {
        // the head is out: the connection is closed, the client sees a short body
        console.error(`[localbase] ${c.req.method} ${logPath(c.req.url)}: the file could not be sent:`, err);
      });
      c.res = undefined;
      c.res = RESPONSE_ALREADY_SENT;
    }
  });

  // The mailbox is same-origin only (decision 021): its own guard, and no CORS headers at all.
  const isMailbox = (path: string): boolean => path === '/mailbox' || path.startsWith('/mailbox/');
  app.use('/mailbox/*', mailboxGuard(cfg.host)); // also matches /mailbox itself

  // CORS for the Supabase APIs: any origin, the headers the Supabase clients send, exposing what they read.
  app.use('*', async (c, next) => {
    if (isMailbox(c.req.path)) return next();
    const origin = c.req.header('origin');
    if (c.req.method === 'OPTIONS') {
      return new Response(null, {
        status: 204,
        headers: {
          'Access-Control-Allow-Origin': origin ?? '*',
          'Access-Control-Allow-Methods': 'GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS',
          'Access-Control-Allow-Headers': c.req.header('access-control-request-headers') ?? ALLOWED_HEADERS,
          'Access-Control-Max-Age': '3600',
          'Access-Control-Allow-Credentials': 'true',
          Vary: 'Origin, Access-Control-Request-Headers',
        },
      });
    }
    // Set before the handler runs (c.header), so that responses keep the node adapter's fast path;
    // error responses built by onError use the same context and get them too.
    c.header('Access-Control-Allow-Origin', origin ?? '*');
    c.header('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    if (origin) {
      c.header('Access-Control-Allow-Credentials', 'true');
      c.header('Vary', 'Origin');
    }
    await next();
  });

  // /storage/v1 streams uploads to disk under its own limits (the bucket's and --storage-file-size-limit).
  const limitBody = bodyLimit({
      maxSize: MAX_BODY_BYTES,
      // The rest of the body is read and discarded (bounded, decision 020), so the connection stays usable.
      onError: (c) =>
        errorResponse(c, new ApiError(413, 'request_too_large', `Request body is larger than ${MAX_BODY_BYTES} bytes`)),
  });
  app.use('*', (c, next) => (c.req.path.startsWith('/storage/v1/') ? next() : limitBody(c, next)));

  // Auth responses carry the API version header (auth-js reads error codes only when it is present).
  app.use('/auth/v1/*', async (c, next) => {
    c.header('X-Supabase-Api-Version', API_VERSION);
    await next();
  });

  // apikey check for the Supabase APIs (hosted Supabase requires one). Open, as the gateway's open routes
  // (auth-v1-open*): email links (GET /verify), /callback, /authorize, /health, and the signing keys
  // (/.well-known/jwks.json, "for anyone to see": verifiers such as jose's createRemoteJWKSet send no apikey).
  const requireApiKey = async (c: Context, next: () => Promise<void>) => {
    if (c.req.method === 'GET' && /\/auth\/v1\/(verify|callback|authorize|health|\.well-known\/jwks\.json)\/?$/.test(c.req.path))
      return next();
    const key = c.req.header('apikey') ?? c.req.query('apikey');
    if (!key) throw new ApiError(401, 'no_api_key', 'No API key found in request');
    let role = keys.get(key);
    if (!role) {
      // Any JWT signed with the legacy secret or a signing key for anon/service_role is accepted too (custom keys).
      try {
        const payload = await auth.keys.verify(key);
        if (payload.role === 'anon' || payload.role === 'service_role') role = payload.role;
      } catch {
        /* falls through to invalid_api_key */
      }
    }
    if (!role) throw new ApiError(401, 'invalid_api_key', 'Invalid API key');
    c.set('apiKeyRole' as never, role as never);
    return next();
  };
  app.use('/auth/v1/*', requireApiKey);
  app.use('/auth/v1', requireApiKey);
  app.use('/rest/v1/*', requireApiKey);
  app.use('/rest/v1', requireApiKey);
  app.use('/realtime/v1/*', requireApiKey);

  app.route('/auth/v1', authRoutes(auth));
  if (rest) {
    const restHandler = async (c: Context): Promise<Response> => {
      let req = c.req.raw;
      // ?apikey= is a credential, not a filter: drop it as Supabase's gateway does (hide_credentials).
      if (req.url.includes('apikey=')) {
        const u = new URL(req.url);
        if (u.searchParams.has('apikey')) {
          u.searchParams.delete('apikey');
          const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer();
          req = new Request(u, { method: req.method, headers: req.headers, body });
        }
      }
      // The CORS headers set by the middleware above live in hono's context and would not reach a Response built
      // by the handler: hand them over so they are part of it.
      const origin = c.req.header('origin');
      const cors: Record<string, string> = { 'access-control-allow-origin': origin ?? '*', 'access-control-expose-headers': EXPOSED_HEADERS };
      if (origin) {
        cors['access-control-allow-credentials'] = 'true';
        cors.vary = 'Origin';
      }
      return rest.handle(req, c.get('apiKeyRole' as never) as ApiKeyRole, cors);
    };
    app.all('/rest/v1/*', restHandler);
    app.all('/rest/v1', restHandler);
  }
  if (storage) {
    // No apikey check: as on Supabase, whose gateway sends /storage/v1 straight to the storage server, which reads the
    // caller from the Authorization JWT (public objects and signed URLs need no key at all: <img src> sends none).
    app.all('/storage/v1/*', async (c) => {
      // the body is read from the Node request itself when there is one (see StorageService.handle)
      const node = nodeOf(c);
      const res = await storage.handle(c.req.raw, node?.incoming, node ? () => clientGone(node) : undefined);
      // hand the CORS headers set on the context over to the Response built by the service
      c.res.headers.forEach((v, k) => {
        if (k.startsWith('access-control-') || k === 'vary') res.headers.set(k, v);
      });
      return res;
    });
  }
  // The WebSocket itself is served by the HTTP server's upgrade handler (src/realtime/server.ts).
  if (realtime) app.route('/realtime/v1', realtimeRoutes(realtime));
  app.route('/mailbox', mailboxRoutes(auth.db, auth.mailbox));
  // `localbase db reset` while the server runs (it holds the data folder): only with the service_role / secret key,
  // only from this machine. Not part of Supabase's API.
  if (admin)
    app.post('/localbase/v1/db/reset', async (c) => {
      requireLocalAdmin(c, keys, 'db reset');
      return c.json(await admin.resetDatabase());
    });
  // `localbase auth delete-guests` while the server holds a PGlite folder (the single writer): the server deletes.
  app.post('/localbase/v1/auth/delete-guests', async (c) => {
    requireLocalAdmin(c, keys, 'auth delete-guests');
    const body = (await c.req.json().catch(() => null)) as { older_than_seconds?: unknown } | null;
    const secs = body?.older_than_seconds;
    if (typeof secs !== 'number' || !Number.isFinite(secs) || secs < 0)
      throw new ApiError(400, 'validation_failed', 'older_than_seconds must be a number of seconds ≥ 0');
    const deleted = await deleteOldGuests(auth.db, secs);
    auth.invalidate();
    return c.json({ deleted });
  });
  app.get('/', (c) =>
    c.json({ name: 'localbase', auth: '/auth/v1', rest: '/rest/v1', storage: '/storage/v1', realtime: '/realtime/v1', mailbox: '/mailbox' }),
  );

  app.notFound((c) => {
    const path = c.req.path;
    if (path.startsWith('/rest/v1'))
      return c.json({ code: 'PGRST125', message: `Invalid path specified in request URL`, details: null, hint: null }, 404);
    const err = new ApiError(404, 'not_found', `No route for ${c.req.method} ${path}`);
    return errorResponse(c, err);
  });

  app.onError((err, c) => {
    // The client closed the connection (reading its body failed with "aborted"): nobody to answer, nothing to log
    // here (the first middleware logs the request as 499).
    const node = nodeOf(c);
    if (node && clientGone(node)) return RESPONSE_ALREADY_SENT;
    if (err instanceof ApiError) return errorResponse(c, err);
    if (err instanceof HTTPException) {
      const status = err.status;
      return errorResponse(c, new ApiError(status, status === 413 ? 'request_too_large' : 'bad_request', err.message));
    }
    const sqlstate = (err as { code?: unknown }).code;
    // A statement past --statement-timeout (waiting on a lock another client holds, say) or no free pooled connection
    // within the connect timeout: GoTrue's answer to a request past its time limit, which auth-js retries.
    if (sqlstate === '57014' || isPoolTimeout(err))
      return errorResponse(c, new ApiError(504, 'request_timeout', 'Processing this request timed out, please retry after a moment.'));
    // PostgreSQL rejected a value the request carried (e.g. "\u0000" in JSON, out-of-range numbers): a client error.
    if (typeof sqlstate === 'string' && /^22[0-9A-Z]{3}$/.test(sqlstate))
      return errorResponse(c, new ApiError(400, 'validation_failed', `Invalid value: ${err.message}`));
    // Unexpected: log it, never leak the stack to the client. A database out of reach is told once by the database
    // itself (db/pg.ts), not with a stack per request.
    if (!isConnectionFailure(err)) console.error(`[localbase] ${c.req.method} ${logPath(c.req.url)} failed:`, err);
    return errorResponse(c, new ApiError(500, 'unexpected_failure', 'Unexpected failure, please check server logs for more information'));
  });

  return app;
}
