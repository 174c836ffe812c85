import fs from 'node:fs/promises';
import path from 'node:path';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import {
  DEFAULT_ACCOUNT_PROTECTION,
  DEFAULT_ANON_KEY,
  DEFAULT_EMAIL_MAX_FREQUENCY_SECONDS,
  DEFAULT_JWT_SECRET,
  DEFAULT_RATE_LIMITS,
  DEFAULT_SERVICE_ROLE_KEY,
  findRepoRoot,
  resolveSms,
} from './config.ts';
import type { AccountProtection, RateLimits, ResolvedConfig, SmsSettings } from './config.ts';
import { DEFAULT_CLIENT_IP_HEADER, isHeaderName, parseTrustedProxies } from './http/ip.ts';
import type { Database } from './db/types.ts';
import { checkNewDataFolder, dataFolderOpenError, isInitialisedDataDir, loadOrBuildTemplate, openPGlite } from './db/pglite.ts';
import { openPGliteWorker, PGliteWorkerDatabase } from './db/pglite-worker-client.ts';
import { makeThrowawayFolder } from './throwaway-folders.ts';
import { besideDataFolder } from './data-folder.ts';
import { isPostgresUrl, openPg, redactDatabaseUrl } from './db/pg.ts';
import { lockDataDir } from './db/lock.ts';
import type { DirLock } from './db/lock.ts';
import { BOOTSTRAP_HASH, BOOTSTRAP_SQL } from './db/bootstrap.ts';
import { NO_STATEMENT_TIMEOUT, runMigrations } from './db/migrations.ts';
import type { MigrationReport } from './db/migrations.ts';
import { dropAllSchemas, rebuild } from './db/reset.ts';
import { AuthService } from './auth/service.ts';
import { defaultPasswordHashConcurrency } from './auth/password.ts';
import { JwtKeys } from './auth/tokens.ts';
import { generateKeySet, loadOrCreateKeyFile } from './auth/keys.ts';
import type { StoredJwk } from './auth/keys.ts';
import { createApp, knownApiKeys } from './http/app.ts';
import { createUserFastPath } from './http/fastpath.ts';
import { drainAfterAnswer, installClientErrorHandler } from './http/connection.ts';
import { createRestService } from './rest/service.ts';
import { ObjectFiles } from './storage/files.ts';
import { createStorageService } from './storage/service.ts';
import { RealtimeServer } from './realtime/server.ts';
import { RealtimeTokens } from './realtime/tokens.ts';
import { ChannelAuthorization } from './realtime/authorization.ts';
import { PostgresChanges } from './realtime/changes.ts';

export type { Database, Queryable, QueryResult, Row } from './db/types.ts';
export type { AccountProtection, RateLimits } from './config.ts';
export { DataDirLockedError } from './db/lock.ts';
export { MigrationError } from './db/migrations.ts';
export {
  DEFAULT_SMS,
  DEFAULT_ACCOUNT_PROTECTION,
  DEFAULT_EMAIL_MAX_FREQUENCY_SECONDS,
  DEFAULT_ANON_KEY,
  DEFAULT_JWT_SECRET,
  DEFAULT_RATE_LIMITS,
  DEFAULT_SERVICE_ROLE_KEY,
  DEFAULT_PUBLISHABLE_KEY,
  DEFAULT_SECRET_KEY,
  findRepoRoot,
} from './config.ts';

export interface LocalbaseOptions {
  host?: string;
  port?: number;
  memory?: boolean;
  dataDir?: string;
  databaseUrl?: string;
  migrationsDir?: string;
  seedFile?: string;
  quiet?: boolean;
  jwtSecret?: string;
  /** JWK set file of the signing keys (default: <data-dir>.signing_keys.json, none with memory). */
  signingKeysPath?: string;
  /** The signing keys themselves (instead of a file). */
  signingKeys?: StoredJwk[];
  anonKey?: string;
  serviceRoleKey?: string;
  jwtExpiry?: number;
  minPasswordLength?: number;
  enableConfirmations?: boolean;
  /** Refuse new users from /signup and OTP sign-ins, as GOTRUE_DISABLE_SIGNUP (admin create, invite and generate_link still work). */
  disableSignup?: boolean;
  /** Anonymous (guest) sign-ins: POST /signup without email and phone, as GOTRUE_EXTERNAL_ANONYMOUS_USERS_ENABLED. */
  enableAnonymousSignIns?: boolean;
  /** Let users unlink identities (DELETE /user/identities/{id}), as GOTRUE_SECURITY_MANUAL_LINKING_ENABLED. */
  enableManualLinking?: boolean;
  /**
   * The OAuth 2.1 server's client management (/auth/v1/admin/oauth/clients), as GOTRUE_OAUTH_SERVER_ENABLED; off by
   * default (GoTrue's and the Supabase CLI's default), answering 404 feature_disabled. Decision 035.
   */
  enableOAuthServer?: boolean;
  siteUrl?: string;
  additionalRedirectUrls?: string[];
  rateLimits?: Partial<RateLimits>;
  /**
   * Least seconds between two mails of one kind to one user, as GOTRUE_SMTP_MAX_FREQUENCY (default 60; 0 = none):
   * sooner is 429 over_email_send_rate_limit "For security purposes, you can only request this after N seconds."
   */
  emailMaxFrequencySeconds?: number;
  /** Phone sign-ups / sign-ins and their SMS codes (default: off, as the Supabase CLI's [auth.sms] enable_signup). */
  sms?: Partial<SmsSettings>;
  /**
   * Addresses of reverse proxies / gateways (IPs and CIDRs, IPv4 and IPv6) whose client-IP header is believed.
   * Default none: every TCP peer is a client. See packages/localbase/README.md "Client addresses".
   */
  trustedProxies?: string[];
  /** The header trusted proxies put the client's address in (default X-Forwarded-For). */
  clientIpHeader?: string;
  /** Honour Sb-Forwarded-For on requests whose apikey is a secret / service_role key (default true). */
  sbForwardedFor?: boolean;
  /** Per-account delays after failed sign-ins and codes, and the wrong-code limit of email codes. */
  accountProtection?: Partial<AccountProtection>;
  /** Clock of the per-account delays, ms since the epoch (tests; default Date.now). */
  clock?: () => number;
  /**
   * /rest/v1 statement timeout in ms (default 8000; 0 = none). A PostgreSQL server cancels the statement; PGlite
   * (run in a worker thread) is stopped and reopened from its data folder. Both answer SQLSTATE 57014.
   */
  statementTimeoutMs?: number;
  /**
   * Run PGlite in a worker thread (default true). false runs it on the main thread as before: a little less
   * latency per statement, but no statement timeout and a long query stalls every request. Memory mode then keeps
   * the database in WASM memory instead of a throwaway folder.
   */
  pgliteWorker?: boolean;
  /** /rest/v1 row cap per request (default 1000; null or 0 = no cap). */
  maxRows?: number | null;
  /** /rest/v1 exposed schemas (default ['public']); the first is the default for requests without a profile header. */
  restSchemas?: string[];
  smtp?: { host: string; port: number; from: string };
  /**
   * How many bcrypt computations (sign-in checks, new password hashes) run at once in libuv's thread pool; the rest
   * wait in line. Default: one fewer than the CPU cores (at least 1, at most 3), so the HTTP thread and the database
   * keep a core while sign-ins are hashing.
   */
  passwordHashConcurrency?: number;
  /**
   * /storage/v1: where the objects' bytes are kept (default: beside the data folder, `<data-dir>.storage`; with
   * memory, a throwaway folder deleted on stop, or by the next memory-mode start if this one was killed: see
   * throwaway-folders.ts). Never inside the data folder: `db reset` empties that.
   */
  storageDir?: string;
  /** /storage/v1: the largest object in bytes (default 50 MiB, as the Supabase CLI's storage.file_size_limit). */
  storageFileSizeLimit?: number;
  /**
   * /storage/v1/render/image: image transformations with sharp (decision 046). Off by default, as the Supabase CLI's
   * `[storage.image_transformation] enabled`; off, the render routes answer 404 as a server without the feature.
   */
  imageTransformation?: boolean;
}

export interface Localbase {
  url: string;
  /** The Realtime endpoint supabase-js derives from `url` (ws://…/realtime/v1; the socket is …/websocket). */
  realtimeUrl: string;
  anonKey: string;
  serviceRoleKey: string;
  jwtSecret: string;
  /** /storage/v1's folder of object bytes. */
  storageDir: string;
  /** The signing keys' file (undefined: generated in memory for this run). */
  signingKeysPath: string | undefined;
  mailboxUrl: string;
  dataLocation: string;
  /** How the /rest/v1 statement timeout is enforced, for the banner (e.g. "8000 ms (PGlite in a worker thread …)"). */
  statementTimeout: string;
  db: Database;
  /** Re-reads the /rest/v1 schema cache (call it after DDL run outside localbase's migrations). */
  reloadSchema(): Promise<void>;
  /**
   * `db reset` of the running server: drops every schema and all data, runs bootstrap, migrations and seed again,
   * then reloads /rest/v1. Requests that arrive meanwhile may fail.
   */
  resetDatabase(): Promise<MigrationReport & { location: string }>;
  /** Start-up timings in ms (database open, bootstrap/migrations, total). */
  timings: { dbOpenMs: number; migrateMs: number; totalMs: number; templateBuilt: boolean };
  stop(): Promise<void>;
}

export function resolveConfig(opts: LocalbaseOptions = {}): ResolvedConfig {
  const repoRoot = findRepoRoot();
  // Settings that would make the server count clients wrongly fail at start, before the database opens.
  parseTrustedProxies(opts.trustedProxies ?? []);
  if (opts.clientIpHeader !== undefined && !isHeaderName(opts.clientIpHeader))
    throw new Error(`client IP header: "${opts.clientIpHeader}" is not a header name`);
  if (opts.databaseUrl && !isPostgresUrl(opts.databaseUrl))
    throw new Error('the database URL (--database-url / DATABASE_URL) is not a postgres:// or postgresql:// URL');
  return {
    host: opts.host ?? '127.0.0.1',
    port: opts.port ?? 54321,
    memory: opts.memory ?? false,
    dataDir: path.resolve(opts.dataDir ?? path.join(repoRoot, '.localbase', 'data')),
    databaseUrl: opts.databaseUrl || undefined,
    migrationsDir: path.resolve(opts.migrationsDir ?? path.join(repoRoot, 'supabase', 'migrations')),
    seedFile: path.resolve(opts.seedFile ?? path.join(repoRoot, 'supabase', 'seed.sql')),
    quiet: opts.quiet ?? false,
    jwtSecret: opts.jwtSecret ?? DEFAULT_JWT_SECRET,
    signingKeysPath: defaultSigningKeysPath(opts),
    signingKeys: opts.signingKeys,
    anonKey: opts.anonKey ?? DEFAULT_ANON_KEY,
    serviceRoleKey: opts.serviceRoleKey ?? DEFAULT_SERVICE_ROLE_KEY,
    jwtExpiry: opts.jwtExpiry ?? 3600,
    // GoTrue raises a configured minimum below 6 to 6.
    minPasswordLength: Math.max(6, opts.minPasswordLength ?? 6),
    enableConfirmations: opts.enableConfirmations ?? false,
    disableSignup: opts.disableSignup ?? false,
    enableManualLinking: opts.enableManualLinking ?? false,
    enableOAuthServer: opts.enableOAuthServer ?? false,
    enableAnonymousSignIns: opts.enableAnonymousSignIns ?? false,
    siteUrl: opts.siteUrl ?? 'http://127.0.0.1:3000',
    additionalRedirectUrls: opts.additionalRedirectUrls ?? [],
    rateLimits: { ...DEFAULT_RATE_LIMITS, ...(opts.rateLimits ?? {}) },
    sms: resolveSms(opts.sms),
    trustedProxies: opts.trustedProxies ?? [],
    clientIpHeader: opts.clientIpHeader ?? DEFAULT_CLIENT_IP_HEADER,
    sbForwardedFor: opts.sbForwardedFor ?? true,
    accountProtection: { ...DEFAULT_ACCOUNT_PROTECTION, ...(opts.accountProtection ?? {}) },
    clock: opts.clock ?? Date.now,
    statementTimeoutMs: opts.statementTimeoutMs ?? 8000,
    pgliteWorker: opts.pgliteWorker ?? true,
    maxRows: opts.maxRows === null || opts.maxRows === 0 ? null : (opts.maxRows ?? 1000),
    restSchemas: opts.restSchemas && opts.restSchemas.length > 0 ? opts.restSchemas : ['public'],
    smtp: opts.smtp,
    passwordHashConcurrency: opts.passwordHashConcurrency ?? defaultPasswordHashConcurrency(),
    storageDir: defaultStorageDir(opts),
    storageFileSizeLimit: opts.storageFileSizeLimit ?? DEFAULT_STORAGE_FILE_SIZE_LIMIT,
    imageTransformation: opts.imageTransformation ?? false,
    repoRoot,
    cacheDir: path.join(repoRoot, 'node_modules', '.cache', 'localbase'),
    otpExpiry: 3600,
    emailMaxFrequencySeconds:
      opts.emailMaxFrequencySeconds !== undefined && opts.emailMaxFrequencySeconds >= 0
        ? opts.emailMaxFrequencySeconds
        : DEFAULT_EMAIL_MAX_FREQUENCY_SECONDS,
    refreshTokenReuseInterval: 10,
    mfaMaxEnrolledFactors: 10,
  };
}

async function openDatabase(
  cfg: ResolvedConfig,
  log: (m: string) => void,
): Promise<{ db: Database; lock?: DirLock; location: string; fromTemplate: boolean; templateBuilt: boolean }> {
  if (cfg.databaseUrl) {
    const location = redactDatabaseUrl(cfg.databaseUrl);
    return {
      db: await openPg(
        cfg.databaseUrl,
        10,
        (m) => {
          if (!cfg.quiet) console.warn(`[localbase] ${m}`);
        },
        cfg.statementTimeoutMs,
      ),
      location,
      fromTemplate: false,
      templateBuilt: false,
    };
  }
  // PGlite runs in a worker thread (see db/pglite-worker-client.ts) unless pgliteWorker is false.
  const onRestart = (reason: string) => {
    if (!cfg.quiet) console.warn(`[localbase] ${reason}: the database worker was stopped and the database reopened`);
  };
  if (cfg.memory) {
    const tpl = await loadOrBuildTemplate(cfg.cacheDir, BOOTSTRAP_SQL, log);
    // In a worker, "memory" is a throwaway folder under the OS temp dir (deleted on stop): a worker restart after a
    // statement timeout must not lose the data, and on disk it is as fast as WASM memory (the page cache holds it).
    const db = cfg.pgliteWorker
      ? await openPGliteWorker({ memory: true, templateFile: tpl.file, onRestart })
      : await openPGlite({ loadDataDir: tpl.blob });
    const location = db instanceof PGliteWorkerDatabase ? `:memory: (a throwaway folder, deleted on stop: ${db.dataDir})` : ':memory:';
    return { db, location, fromTemplate: true, templateBuilt: tpl.built };
  }
  const lock = lockDataDir(cfg.dataDir);
  try {
    if (isInitialisedDataDir(cfg.dataDir)) {
      const db = await (cfg.pgliteWorker
        ? openPGliteWorker({ dataDir: cfg.dataDir, onRestart })
        : openPGlite({ dataDir: cfg.dataDir })
      ).catch((err: unknown) => {
        throw dataFolderOpenError(cfg.dataDir, err);
      });
      return { db, lock, location: cfg.dataDir, fromTemplate: false, templateBuilt: false };
    }
    checkNewDataFolder(cfg.dataDir);
    // A new folder starts from the template snapshot too (initdb is the slow part).
    const tpl = await loadOrBuildTemplate(cfg.cacheDir, BOOTSTRAP_SQL, log);
    const db = cfg.pgliteWorker
      ? await openPGliteWorker({ dataDir: cfg.dataDir, templateFile: tpl.file, onRestart })
      : await openPGlite({ dataDir: cfg.dataDir, loadDataDir: tpl.blob });
    return { db, lock, location: cfg.dataDir, fromTemplate: true, templateBuilt: tpl.built };
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** Runs the bootstrap SQL unless this database already has the current version of it. */
async function bootstrap(db: Database, fromTemplate: boolean): Promise<void> {
  if (!fromTemplate) {
    let current: string | undefined;
    try {
      current = (
        await db.query<{ value: string }>("select value from localbase.meta where key = 'bootstrap_hash'")
      ).rows[0]?.value;
    } catch {
      current = undefined; // schema localbase does not exist yet
    }
    if (current === BOOTSTRAP_HASH) return;
    // Several servers may start on one PostgreSQL server at once (parallel test files): serialise.
    await db
      .transaction(async (tx) => {
        await tx.exec(NO_STATEMENT_TIMEOUT);
        await tx.query('select pg_advisory_xact_lock(54321001)');
        await tx.exec(BOOTSTRAP_SQL);
      })
      .catch(async (err: unknown) => {
        // insufficient_privilege: say what the user lacks rather than only PostgreSQL's "must have admin option…".
        if (db.kind !== 'pg' || (err as { code?: unknown }).code !== '42501') throw err;
        const { rows } = await db.query<{ who: string }>('select current_user as who').catch(() => ({ rows: [] }));
        const who = rows[0]?.who ?? 'this user';
        throw new Error(
          `cannot set up the database as ${who}: ${(err as Error).message}. localbase creates roles, schemas and ` +
            'extensions: connect as a superuser (postgres on Supabase and Debian)',
          { cause: err },
        );
      });
  }
  await db.query(
    "insert into localbase.meta (key, value) values ('bootstrap_hash', $1) on conflict (key) do update set value = excluded.value",
    [BOOTSTRAP_HASH],
  );
}

function describeTimeout(cfg: ResolvedConfig): string {
  const ms = cfg.statementTimeoutMs;
  if (ms <= 0) return 'off (--statement-timeout 0)';
  if (cfg.databaseUrl) return `${ms} ms (PostgreSQL statement_timeout)`;
  if (!cfg.pgliteWorker) return 'not enforced (--pglite-main-thread: PGlite cannot be interrupted there)';
  return `${ms} ms (PGlite in a worker thread: stopped and reopened from its data on timeout)`;
}

/** Largest request head accepted, in bytes (the web app's server accepts the same). */
export const MAX_HEADER_BYTES = 64 * 1024;
/** How long an idle keep-alive connection stays open, in ms. */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** The default global upload limit: 50 MiB, as the Supabase CLI's config.toml. */
export const DEFAULT_STORAGE_FILE_SIZE_LIMIT = 50 * 1024 * 1024;

/** Where the storage bytes are kept: the given folder, else beside the data folder (undefined: a throwaway folder). */
function defaultStorageDir(opts: LocalbaseOptions): string | undefined {
  if (opts.storageDir) return path.resolve(opts.storageDir);
  if (opts.memory) return undefined;
  return besideDataFolder(opts.dataDir ?? path.join(findRepoRoot(), '.localbase', 'data')).storage;
}

/** Where the signing keys are kept: the given file, else beside the data folder (never inside it: db reset empties it). */
function defaultSigningKeysPath(opts: LocalbaseOptions): string | undefined {
  if (opts.signingKeysPath) return path.resolve(opts.signingKeysPath);
  if (opts.signingKeys || opts.memory) return undefined;
  return besideDataFolder(opts.dataDir ?? path.join(findRepoRoot(), '.localbase', 'data')).signingKeys;
}

/**
 * Fails with the listen error (EADDRINUSE, EACCES…) if the address cannot be listened on now: a bind that is closed
 * again at once. The real listen comes after the database is ready, so a program taking the port in between still
 * gets the same error there.
 */
async function checkPortFree(host: string, port: number): Promise<void> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ port, host, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

export async function startLocalbase(opts: LocalbaseOptions = {}): Promise<Localbase> {
  const t0 = performance.now();
  const cfg = resolveConfig(opts);
  const log = (m: string) => {
    if (!cfg.quiet) console.log(`[localbase] ${m}`);
  };
  // A port another program holds stops the start before anything is opened or written (a new data folder took
  // seconds to make and migrate before the listen below found out).
  if (cfg.port !== 0) await checkPortFree(cfg.host, cfg.port);
  // A key file that cannot be read stops the start before anything else.
  cfg.signingKeys ??= cfg.signingKeysPath ? await loadOrCreateKeyFile(cfg.signingKeysPath) : await generateKeySet('ES256');
  const opened = await openDatabase(cfg, log);
  const { db, lock } = opened;
  const t1 = performance.now();
  let server: Server | undefined;
  let stopRealtime: (() => Promise<void>) | undefined;
  /** memory mode's storage folder, made below: removed again when the start fails */
  let throwawayStorage: string | undefined;
  try {
    await bootstrap(db, opened.fromTemplate);
    await runMigrations(db, { migrationsDir: cfg.migrationsDir, seedFile: cfg.seedFile, log });
    // Realtime's capture triggers follow the publication (the event trigger does it too, when it could be created).
    await PostgresChanges.sync(db);
    // /rest/v1: the envelope function and the schema cache, read after the migrations.
    const jwt = new JwtKeys(cfg.jwtSecret, cfg.signingKeys);
    const rest = await createRestService({
      db,
      schemas: cfg.restSchemas,
      maxRows: cfg.maxRows,
      statementTimeoutMs: cfg.statementTimeoutMs,
      verifyJwt: async (token) => (await jwt.verify(token)) as Record<string, unknown>,
    });
    // /storage/v1: the bytes' folder; files a crash left behind (no row names them) are deleted before serving.
    const storageDir = cfg.storageDir ?? makeThrowawayFolder('storage');
    throwawayStorage = cfg.storageDir ? undefined : storageDir;
    const files = new ObjectFiles(storageDir);
    await files.init();
    const storage = createStorageService({
      db,
      files,
      verifyJwt: async (token) => (await jwt.verify(token, { joseMessages: true })) as Record<string, unknown>,
      apiKeys: knownApiKeys(cfg),
      fileSizeLimit: cfg.storageFileSizeLimit,
      jwtSecret: cfg.jwtSecret,
      imageTransformation: cfg.imageTransformation,
    });
    const swept = await storage.sweep();
    if (swept.removed > 0) log(`storage: deleted ${swept.removed} file(s) no object names (left by a crash or a db reset)`);
    const t2 = performance.now();

    // The URL is known only once listening (port 0 = random), so the service and app are created then.
    const ready: {
      app?: ReturnType<typeof createApp>;
      fastPath?: (req: IncomingMessage, res: ServerResponse) => boolean;
    } = {};
    const listener = getRequestListener(
      (req, env) => {
        if (!ready.app) return new Response('starting', { status: 503 });
        return ready.app.fetch(req, env);
      },
      // Unread request bodies are drained by drainAfterAnswer (bounded in bytes and time), not by the adapter.
      { autoCleanupIncoming: false },
    );
    // Request heads up to 64 KiB (Node: 16 KiB): a browser's email-link navigation carries the app's session cookies
    // (cookies ignore ports), and a user with large metadata has a large token. Idle keep-alive connections stay
    // open 65 s, longer than clients in front keep theirs, so none sends a request into a connection being closed.
    const s = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
      drainAfterAnswer(req, res);
      if (ready.fastPath?.(req, res)) return;
      void listener(req, res);
    });
    s.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
    s.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 5_000;
    installClientErrorHandler(s);
    // /realtime/v1/websocket on the same port (decision 041).
    // Postgres changes (decision 042): the dispatcher wakes on the capture trigger's NOTIFY.
    const changes = new PostgresChanges(db, { quiet: cfg.quiet });
    await changes.start();
    const realtime = new RealtimeServer({
      tokens: new RealtimeTokens(jwt, knownApiKeys(cfg)),
      authorization: new ChannelAuthorization(db, { quiet: cfg.quiet }),
      changes,
      quiet: cfg.quiet,
    });
    stopRealtime = async () => {
      await realtime.close();
      await changes.close();
    };
    s.on('upgrade', (req, socket, head) => realtime.handleUpgrade(req, socket, head));
    server = s;
    const address = await new Promise<AddressInfo>((resolve, reject) => {
      s.once('error', reject);
      s.listen(cfg.port, cfg.host, () => resolve(s.address() as AddressInfo));
    });
    const host = cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
    const url = `http://${host}:${address.port}`;
    const svc = new AuthService(db, cfg, url);
    let resetting: Promise<MigrationReport & { location: string }> | undefined;
    const resetDatabase = () =>
      (resetting ??= (async () => {
        try {
          log('db reset: dropping every schema, then bootstrap, migrations and seed');
          await dropAllSchemas(db);
          const report = await rebuild(db, { migrationsDir: cfg.migrationsDir, seedFile: cfg.seedFile, log });
          await rest.reinstall();
          await storage.clear();
          return { ...report, location: opened.location };
        } finally {
          resetting = undefined;
        }
      })());
    ready.app = createApp(cfg, svc, rest, { resetDatabase }, storage, realtime);
    ready.fastPath = createUserFastPath(svc, new Set(knownApiKeys(cfg).keys()), cfg.quiet);
    const t3 = performance.now();
    let stopped: Promise<void> | undefined;
    return {
      url,
      realtimeUrl: `${url.replace(/^http/, 'ws')}/realtime/v1`,
      anonKey: cfg.anonKey,
      serviceRoleKey: cfg.serviceRoleKey,
      jwtSecret: cfg.jwtSecret,
      signingKeysPath: cfg.signingKeysPath,
      mailboxUrl: `${url}/mailbox`,
      storageDir,
      dataLocation: opened.location,
      statementTimeout: describeTimeout(cfg),
      db,
      reloadSchema: () => rest.reload(),
      resetDatabase,
      timings: { dbOpenMs: t1 - t0, migrateMs: t2 - t1, totalMs: t3 - t0, templateBuilt: opened.templateBuilt },
      stop() {
        stopped ??= (async () => {
          await stopRealtime?.();
          await new Promise<void>((resolve) => {
            const s = server;
            if (!s) return resolve();
            s.close(() => resolve());
            s.closeAllConnections?.();
          });
          await db.close();
          await files.close();
          lock?.release();
          if (!cfg.storageDir) await fs.rm(storageDir, { recursive: true, force: true });
        })();
        return stopped;
      },
    };
  } catch (err) {
    server?.close();
    await db.close().catch(() => {});
    lock?.release();
    // a server that did not start keeps nothing (a port in use, a bad setting found late)
    if (throwawayStorage) await fs.rm(throwawayStorage, { recursive: true, force: true });
    throw err;
  }
}
