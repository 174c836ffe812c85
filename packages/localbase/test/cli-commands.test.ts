// The one-shot commands beside `localbase start`, as a developer types them: --help, migration new, status,
// db reset (on a PGlite data folder, refused while a server holds it; and on a PostgreSQL server).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_ANON_KEY, DEMO_SERVICE_KEY, createScratchDatabase, freePort, runCli, spawnCli, stopCli, waitReady, type CliProcess } from './cli.ts';
import { fixturesDir, testDatabaseUrl, uniqueEmail } from './helpers.ts';

const running: CliProcess[] = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'localbase-cli-commands-'));
afterAll(async () => {
  for (const proc of running) await stopCli(proc, 'SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

const migrationsDir = path.join(fixturesDir, 'migrations-good');
const seedFile = path.join(fixturesDir, 'seed-things.sql');
const headers = { apikey: DEMO_ANON_KEY, 'content-type': 'application/json' };

async function start(args: string[]): Promise<CliProcess> {
  const proc = spawnCli(['--quiet', ...args], await freePort());
  running.push(proc);
  await waitReady(proc, 90_000);
  return proc;
}

async function things(url: string): Promise<string[]> {
  const res = await fetch(`${url}/rest/v1/things?select=name&order=id`, {
    headers: { apikey: DEMO_SERVICE_KEY, authorization: `Bearer ${DEMO_SERVICE_KEY}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as Array<{ name: string }>).map((r) => r.name);
}

describe('localbase commands', () => {
  it('--help lists every command', () => {
    const r = runCli(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['start', 'status', 'db reset', 'migration new <name>', 'gen types typescript', '--schema', '--db-url', 'auth delete-guests', '--older-than'])
      expect(r.stdout).toContain(c);
    const unknown = runCli(['frobnicate']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });

  it('a mistyped command or option is named in a few lines, with the way to the help, not buried under the help', () => {
    const cases: [string[], string][] = [
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['--bogus'], "Unknown option '--bogus'"],
      [['auth', 'delete-guests', '--older-than', '-5d'], "use '--older-than=-XYZ'"],
    ];
    for (const [args, message] of cases) {
      const r = runCli(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain('Run `localbase --help` to see the commands and options.');
      expect(r.stderr).not.toContain('Usage:');
      expect(r.stderr.trim().split('\n').length).toBeLessThanOrEqual(6);
    }
  });

  it('db reset, auth delete-guests and gen types --db-url on a database out of reach name it (password hidden) and exit 1', async () => {
    const url = `postgres://postgres:s3cret-pw@127.0.0.1:${await freePort()}/app`;
    for (const args of [['db', 'reset', '--database-url', url], ['auth', 'delete-guests', '--database-url', url], ['gen', 'types', 'typescript', '--db-url', url]]) {
      const r = runCli(args);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('cannot connect to the database postgres://postgres:***@127.0.0.1:');
      expect(r.stderr + r.stdout).not.toContain('s3cret-pw');
    }
  });

  it('migration new creates <dir>/<YYYYMMDDHHMMSS>_<name>.sql and prints its path', () => {
    const dir = path.join(tmp, 'migrations');
    const before = new Date();
    const r = runCli(['migration', 'new', 'add_tags', '--migrations-dir', dir]);
    const after = new Date();
    expect(r.code, r.stderr).toBe(0);
    const files = fs.readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^\d{14}_add_tags\.sql$/);
    const stamp = files[0]!.slice(0, 14);
    // The UTC time of the command, as the Supabase CLI writes it: between the clock before and after it (a run that
    // crosses midnight gets the new date).
    const utcStamp = (d: Date) => d.toISOString().replace(/[-:T]/g, '').slice(0, 14);
    expect(stamp >= utcStamp(before) && stamp <= utcStamp(after), `${utcStamp(before)} ≤ ${stamp} ≤ ${utcStamp(after)}`).toBe(true);
    expect(r.stdout).toContain('Created new migration at');
    expect(r.stdout.trim().endsWith(files[0]!)).toBe(true);
    expect(fs.readFileSync(path.join(dir, files[0]!), 'utf8')).toBe('');

    expect(runCli(['migration', 'new', '--migrations-dir', dir]).stderr).toContain('usage: localbase migration new <name>');
    const bad = runCli(['migration', 'new', '../escape', '--migrations-dir', dir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('letters, digits');
  });

  it('status reports a stopped server (exit 1) and a running one (URLs, keys, -o env / json)', async () => {
    const port = await freePort();
    const down = runCli(['status', '--port', String(port)]);
    expect(down.code).toBe(1);
    expect(down.stdout).toContain('not running');
    expect(down.stdout).toContain(`http://127.0.0.1:${port}/rest/v1`);

    const proc = await start(['--memory']);
    const livePort = new URL(proc.url).port;
    const up = runCli(['status', '--port', livePort]);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain(`running at ${proc.url}`);
    for (const s of ['API URL', 'REST URL', 'Auth URL', 'Mailbox URL', 'anon key', 'service_role key', 'Publishable key', 'Secret key'])
      expect(up.stdout).toContain(s);
    expect(up.stdout).toContain(DEMO_ANON_KEY);

    const env = runCli(['status', '-o', 'env'], { LOCALBASE_PORT: livePort });
    expect(env.code).toBe(0);
    expect(env.stdout).toContain(`API_URL="${proc.url}"`);
    expect(env.stdout).toContain(`REST_URL="${proc.url}/rest/v1"`);
    expect(env.stdout).toContain(`REALTIME_URL="${proc.url.replace(/^http/, 'ws')}/realtime/v1"`);
    expect(env.stdout).toContain(`ANON_KEY="${DEMO_ANON_KEY}"`);
    expect(env.stdout).toContain(`SERVICE_ROLE_KEY="${DEMO_SERVICE_KEY}"`);
    const json = JSON.parse(runCli(['status', '-o', 'json', '--port', livePort]).stdout) as Record<string, string>;
    expect(json.API_URL).toBe(proc.url);
    await stopCli(proc);
  }, 120_000);

  it('db reset on a PGlite folder: a running server resets its own database; a stopped one is reset in place', async () => {
    const dataDir = path.join(tmp, 'data');
    const args = ['--data-dir', dataDir, '--migrations-dir', migrationsDir, '--seed-file', seedFile];
    const proc = await start(args);
    const port = new URL(proc.url).port;
    const email = uniqueEmail('reset');
    const signUp = () => fetch(`${proc.url}/auth/v1/signup`, { method: 'POST', headers, body: JSON.stringify({ email, password: 'reset-password-1' }) });
    const signIn = (url: string) =>
      fetch(`${url}/auth/v1/token?grant_type=password`, { method: 'POST', headers, body: JSON.stringify({ email, password: 'reset-password-1' }) });
    const addThing = () =>
      fetch(`${proc.url}/rest/v1/things`, {
        method: 'POST',
        headers: { ...headers, apikey: DEMO_SERVICE_KEY, authorization: `Bearer ${DEMO_SERVICE_KEY}` },
        body: JSON.stringify({ name: 'added later' }),
      });
    expect((await signUp()).status).toBe(200);
    expect((await addThing()).status).toBe(201);
    expect(await things(proc.url)).toEqual(['seeded', 'added later']);

    // Running: the server holds the folder and does the reset itself; it keeps serving afterwards.
    const live = runCli(['db', 'reset', ...args, '--port', port]);
    expect(live.code, live.stderr).toBe(0);
    expect(live.stdout).toContain('running server');
    expect(live.stdout).toContain('1 migration(s) applied, seed applied');
    expect(await things(proc.url)).toEqual(['seeded']);
    expect((await signIn(proc.url)).status).toBe(400); // the user went with the rest of the data
    expect((await signUp()).status).toBe(200);
    expect((await addThing()).status).toBe(201);

    // Held by a server that is not where --port says: refused, nothing touched.
    const elsewhere = runCli(['db', 'reset', ...args, '--port', String(await freePort())]);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toContain('already in use by another localbase process');
    expect(elsewhere.stderr).toContain('No localbase answered');
    expect(await things(proc.url)).toEqual(['seeded', 'added later']);

    // The endpoint wants the service_role key.
    const anon = await fetch(`${proc.url}/localbase/v1/db/reset`, { method: 'POST', headers });
    expect(anon.status).toBe(401);

    // Stopped: the folder is replaced.
    await stopCli(proc);
    const reset = runCli(['db', 'reset', ...args]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain('1 migration(s) applied, seed applied');
    const again = await start(args);
    expect(await things(again.url)).toEqual(['seeded']);
    expect((await signIn(again.url)).status).toBe(400);
    await stopCli(again);
  }, 180_000);

  it('auth delete-guests on a PGlite folder: a running server deletes its own old guests; a stopped folder is cleaned in place', async () => {
    const dataDir = path.join(tmp, 'guests');
    const args = ['--data-dir', dataDir, '--migrations-dir', migrationsDir, '--seed-file', seedFile];
    const proc = await start([...args, '--enable-anonymous-sign-ins']);
    const port = new URL(proc.url).port;
    const signInAnonymously = async (url: string) => {
      const res = await fetch(`${url}/auth/v1/signup`, { method: 'POST', headers, body: JSON.stringify({ data: {} }) });
      expect(res.status).toBe(200);
      return (await res.json()) as { refresh_token: string; user: { is_anonymous: boolean } };
    };
    const refresh = (url: string, token: string) =>
      fetch(`${url}/auth/v1/token?grant_type=refresh_token`, { method: 'POST', headers, body: JSON.stringify({ refresh_token: token }) });
    const a = await signInAnonymously(proc.url);
    expect(a.user.is_anonymous).toBe(true);
    await signInAnonymously(proc.url);

    const none = runCli(['auth', 'delete-guests', '--older-than', '1h', ...args, '--port', port]);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toContain('Deleted 0 guest user(s) created more than 1h ago');
    const live = runCli(['auth', 'delete-guests', '--older-than', '0s', ...args, '--port', port]);
    expect(live.code, live.stderr).toBe(0);
    expect(live.stdout).toContain('Deleted 2 guest user(s)');
    expect(live.stdout).toContain('running server');
    expect((await refresh(proc.url, a.refresh_token)).status).toBe(400);
    const c = await signInAnonymously(proc.url); // the server keeps serving

    await stopCli(proc);
    const inPlace = runCli(['auth', 'delete-guests', '--older-than', '0s', ...args]);
    expect(inPlace.code, inPlace.stderr).toBe(0);
    expect(inPlace.stdout).toContain(`Deleted 1 guest user(s) created more than 0s ago from ${dataDir}.`);
    const again = await start(args);
    expect((await refresh(again.url, c.refresh_token)).status).toBe(400);
    await stopCli(again);

    const bad = runCli(['auth', 'delete-guests', '--older-than', '30', ...args]);
    expect([bad.code, bad.stderr.trim()]).toEqual([1, 'localbase: --older-than: "30" is not an age like 30d, 12h, 90m or 3600s']);
    const memory = runCli(['auth', 'delete-guests', '--memory']);
    expect(memory.code).toBe(1);
    expect(memory.stderr).toContain('--memory keeps no data');
  }, 240_000);

  it.runIf(testDatabaseUrl)('db reset on a PostgreSQL server drops every schema and rebuilds it', async () => {
    const scratch = await createScratchDatabase(testDatabaseUrl!);
    const client = new pg.Client({ connectionString: scratch.url });
    try {
      const args = ['--database-url', scratch.url, '--migrations-dir', migrationsDir, '--seed-file', seedFile];
      expect(runCli(['db', 'reset', ...args]).code).toBe(0);
      await client.connect();
      await client.query(`insert into public.things (name) values ('added later')`);
      await client.query('create schema leftovers; create table public.stray (id int)');
      const reset = runCli(['db', 'reset', ...args]);
      expect(reset.code, reset.stderr).toBe(0);
      expect((await client.query('select name from public.things order by id')).rows).toEqual([{ name: 'seeded' }]);
      const gone = await client.query(
        `select to_regclass('public.stray') as stray, (select count(*)::int from pg_namespace where nspname = 'leftovers') as schemas`,
      );
      expect(gone.rows[0]).toEqual({ stray: null, schemas: 0 });
      expect((await client.query('select count(*)::int as n from supabase_migrations.schema_migrations')).rows[0]).toEqual({ n: 1 });
    } finally {
      await client.end().catch(() => {});
      await scratch.drop();
    }
  }, 120_000);
});
