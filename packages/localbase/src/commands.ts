// The CLI's everyday commands besides `start`: `db reset`, `migration new`, `status` (the Supabase CLI's names).
// `gen types typescript` lives in src/gen. Each takes the config `start` resolves (resolveConfig), so flags and
// LOCALBASE_* variables mean the same thing for every command.
import fs from 'node:fs';
import path from 'node:path';
import type { ResolvedConfig } from './config.ts';
import { DEFAULT_PUBLISHABLE_KEY, DEFAULT_SECRET_KEY } from './config.ts';
import { BOOTSTRAP_SQL } from './db/bootstrap.ts';
import { DataDirLockedError, lockDataDir } from './db/lock.ts';
import { dropAllSchemas, rebuild } from './db/reset.ts';
import { checkNewDataFolder, isInitialisedDataDir, loadOrBuildTemplate, openPGlite } from './db/pglite.ts';
import { openPg, redactDatabaseUrl } from './db/pg.ts';
import type { MigrationReport } from './db/migrations.ts';
import { deleteOldGuests } from './auth/cleanup.ts';

export interface ResetReport extends MigrationReport {
  /** The data folder or the (redacted) database URL that was reset. */
  location: string;
}

/**
 * `localbase db reset`: the database as new — every schema and all data (users included) dropped, then localbase's
 * bootstrap, the migrations and the seed. On PGlite the data folder is replaced; when a running server holds it
 * (its lock), that server is asked to reset its own database (POST /localbase/v1/db/reset with the service_role
 * key), as the Supabase CLI resets the running local database. On a PostgreSQL server every non-system schema of
 * the database is dropped, so point it only at a database localbase owns.
 */
export async function resetDatabase(cfg: ResolvedConfig, log: (m: string) => void = () => {}): Promise<ResetReport> {
  if (cfg.databaseUrl) {
    const db = await openPg(cfg.databaseUrl, 1);
    try {
      await dropAllSchemas(db);
      return { ...(await rebuild(db, { ...cfg, log })), location: redactDatabaseUrl(cfg.databaseUrl) };
    } finally {
      await db.close();
    }
  }
  let lock;
  try {
    lock = lockDataDir(cfg.dataDir);
  } catch (err) {
    // A server holds the folder: ask it to reset its database itself (POST /localbase/v1/db/reset).
    if (err instanceof DataDirLockedError) return resetThroughServer(cfg, err);
    throw err;
  }
  try {
    if (!isInitialisedDataDir(cfg.dataDir)) checkNewDataFolder(cfg.dataDir);
    fs.rmSync(cfg.dataDir, { recursive: true, force: true });
    const tpl = await loadOrBuildTemplate(cfg.cacheDir, BOOTSTRAP_SQL, log);
    const db = await openPGlite({ dataDir: cfg.dataDir, loadDataDir: tpl.blob });
    try {
      return { ...(await rebuild(db, { ...cfg, log })), location: cfg.dataDir };
    } finally {
      await db.close();
    }
  } finally {
    lock.release();
  }
}

/**
 * The running server that holds the data folder resets its own database; it is found at the configured host and
 * port and must accept the configured service_role key. Otherwise the lock's error stands, with what to do.
 */
async function resetThroughServer(cfg: ResolvedConfig, locked: DataDirLockedError): Promise<ResetReport> {
  const host = cfg.host === '0.0.0.0' ? '127.0.0.1' : cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
  const url = `http://${host}:${cfg.port}/localbase/v1/db/reset`;
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { apikey: cfg.serviceRoleKey } });
  } catch {
    throw new DataDirLockedError(locked.message.match(/Lock file: (.*)$/)?.[1] ?? cfg.dataDir + '.lock', locked.pid, notReachable(url));
  }
  const body = (await res.json().catch(() => ({}))) as Partial<ResetReport> & { msg?: string };
  if (res.status !== 200)
    throw new Error(`the running server (pid ${locked.pid}) refused the reset at ${url}: ${res.status} ${body.msg ?? ''}`.trim());
  return { applied: body.applied ?? [], skipped: body.skipped ?? [], seeded: body.seeded ?? false, location: `${body.location} (running server, pid ${locked.pid})` };
}

function notReachable(url: string, action = 'reset'): string {
  return `No localbase answered at ${url} (is it on another --port?). Stop it (Ctrl-C) and ${action}, or pass its --port.`;
}

/**
 * `localbase auth delete-guests --older-than 30d`: deletes the anonymous users created before the cutoff (and, by
 * cascade, their rows). On PostgreSQL directly (batches that skip locked rows, so safe while the server runs). On a
 * PGlite folder, PGlite's single writer decides: a folder held by a running server is cleaned by that server
 * (POST /localbase/v1/auth/delete-guests with the service_role key, found at --port, as `db reset`); a free folder
 * is opened and cleaned in place.
 */
export async function deleteGuests(cfg: ResolvedConfig, olderThanSeconds: number): Promise<{ deleted: number; location: string }> {
  if (cfg.databaseUrl) {
    const db = await openPg(cfg.databaseUrl, 1);
    try {
      return { deleted: await deleteOldGuests(db, olderThanSeconds), location: redactDatabaseUrl(cfg.databaseUrl) };
    } finally {
      await db.close();
    }
  }
  if (cfg.memory) throw new Error('auth delete-guests: --memory keeps no data; pass --data-dir or --database-url');
  let lock;
  try {
    lock = lockDataDir(cfg.dataDir);
  } catch (err) {
    if (err instanceof DataDirLockedError) return deleteGuestsThroughServer(cfg, err, olderThanSeconds);
    throw err;
  }
  try {
    if (!fs.existsSync(path.join(cfg.dataDir, 'PG_VERSION')))
      throw new Error(`auth delete-guests: no database in ${cfg.dataDir} (start localbase once, or pass --data-dir)`);
    const db = await openPGlite({ dataDir: cfg.dataDir });
    try {
      return { deleted: await deleteOldGuests(db, olderThanSeconds), location: cfg.dataDir };
    } finally {
      await db.close();
    }
  } finally {
    lock.release();
  }
}

async function deleteGuestsThroughServer(
  cfg: ResolvedConfig,
  locked: DataDirLockedError,
  olderThanSeconds: number,
): Promise<{ deleted: number; location: string }> {
  const host = cfg.host === '0.0.0.0' ? '127.0.0.1' : cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
  const url = `http://${host}:${cfg.port}/localbase/v1/auth/delete-guests`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { apikey: cfg.serviceRoleKey, 'content-type': 'application/json' },
      body: JSON.stringify({ older_than_seconds: olderThanSeconds }),
    });
  } catch {
    throw new DataDirLockedError(locked.message.match(/Lock file: (.*)$/)?.[1] ?? cfg.dataDir + '.lock', locked.pid, notReachable(url, 'run the command again'));
  }
  const body = (await res.json().catch(() => ({}))) as { deleted?: number; message?: string };
  if (res.status !== 200)
    throw new Error(`the running server (pid ${locked.pid}) refused at ${url}: ${res.status} ${body.message ?? ''}`.trim());
  return { deleted: body.deleted ?? 0, location: `${cfg.dataDir} (running server, pid ${locked.pid})` };
}

/** `20261124031500` for 2026-11-24 03:15:00 UTC: the Supabase CLI's migration version. */
export function migrationTimestamp(now: Date = new Date()): string {
  return now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

/**
 * `localbase migration new <name>`: an empty `<migrationsDir>/<YYYYMMDDHHMMSS>_<name>.sql` (UTC), created with
 * O_EXCL so an existing file is never overwritten. Returns its path.
 */
export function newMigration(migrationsDir: string, name: string, now: Date = new Date()): string {
  if (!/^[A-Za-z0-9_-]+$/.test(name))
    throw new Error(`migration name "${name}": use letters, digits, _ and - only (it becomes part of the file name)`);
  fs.mkdirSync(migrationsDir, { recursive: true });
  const file = path.join(migrationsDir, `${migrationTimestamp(now)}_${name}.sql`);
  fs.writeFileSync(file, '', { flag: 'wx' });
  return file;
}

export interface Status {
  running: boolean;
  /** What answered (or did not) at the health endpoint. */
  detail: string;
  values: Array<{ label: string; env: string; value: string }>;
}

/**
 * `localbase status`: the URLs and keys of the configured server, and whether it answers on its health endpoint
 * (`GET /auth/v1/health` at the configured host and port).
 */
export async function statusOf(cfg: ResolvedConfig, timeoutMs = 2000): Promise<Status> {
  const host = cfg.host === '0.0.0.0' ? '127.0.0.1' : cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host;
  const url = `http://${host}:${cfg.port}`;
  let running = false;
  let detail: string;
  try {
    const res = await fetch(`${url}/auth/v1/health`, {
      headers: { apikey: cfg.anonKey },
      signal: AbortSignal.timeout(timeoutMs),
    });
    running = res.status === 200;
    detail = running ? `running at ${url}` : `${url}/auth/v1/health answered ${res.status}: is it localbase?`;
  } catch {
    detail = `not running (nothing answers at ${url}); start it with \`localbase start\` (npm run backend)`;
  }
  const dbUrl = cfg.databaseUrl ? redactDatabaseUrl(cfg.databaseUrl) : '';
  const values = [
    { label: 'API URL', env: 'API_URL', value: url },
    { label: 'REST URL', env: 'REST_URL', value: `${url}/rest/v1` },
    { label: 'Auth URL', env: 'AUTH_URL', value: `${url}/auth/v1` },
    { label: 'Storage URL', env: 'STORAGE_URL', value: `${url}/storage/v1` },
    { label: 'Realtime URL', env: 'REALTIME_URL', value: `${url.replace(/^http/, 'ws')}/realtime/v1` },
    { label: 'GraphQL URL', env: 'GRAPHQL_URL', value: '' },
    { label: 'DB URL', env: 'DB_URL', value: dbUrl },
    { label: 'Mailbox URL', env: 'MAILBOX_URL', value: `${url}/mailbox` },
    { label: 'Data location', env: 'DATA_LOCATION', value: cfg.databaseUrl ? dbUrl : cfg.memory ? ':memory:' : cfg.dataDir },
    { label: 'JWT secret', env: 'JWT_SECRET', value: cfg.jwtSecret },
    { label: 'anon key', env: 'ANON_KEY', value: cfg.anonKey },
    { label: 'service_role key', env: 'SERVICE_ROLE_KEY', value: cfg.serviceRoleKey },
    { label: 'Publishable key', env: 'PUBLISHABLE_KEY', value: DEFAULT_PUBLISHABLE_KEY },
    { label: 'Secret key', env: 'SECRET_KEY', value: DEFAULT_SECRET_KEY },
  ];
  return { running, detail, values };
}

/** `status -o pretty|env|json`. */
export function formatStatus(status: Status, output: 'pretty' | 'env' | 'json'): string {
  if (output === 'env') return status.values.map((v) => `${v.env}=${JSON.stringify(v.value)}`).join('\n') + '\n';
  if (output === 'json')
    return JSON.stringify(Object.fromEntries(status.values.map((v) => [v.env, v.value])), null, 2) + '\n';
  const width = Math.max(...status.values.map((v) => v.label.length));
  return (
    `localbase is ${status.detail}.\n\n` +
    status.values.map((v) => `${v.label.padStart(width)}: ${v.value || '(not provided)'}`).join('\n') +
    '\n'
  );
}
