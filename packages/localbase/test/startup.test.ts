// Start-up with migrations and a seed on a file-backed folder: applied once each, recorded; a failing migration
// stops start-up naming the file and PostgreSQL's message, and leaves the database as it was.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalbase } from '../src/index.ts';
import pg from 'pg';
import { createScratchDatabase } from './cli.ts';
import { anonClient, removeDataFolder, startTestServer, testDatabaseUrl, uniqueEmail, PASSWORD } from './helpers.ts';

const fixture = (p: string): string => fileURLToPath(new URL(`./fixtures/${p}`, import.meta.url));
const good = fixture('migrations-good');
const bad = fixture('migrations-bad');
const seed = fixture('seed-things.sql');
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'localbase-startup-'));
});

afterAll(async () => {
  removeDataFolder(dataDir);
});

function open(migrationsDir: string) {
  return startLocalbase({ dataDir, port: 0, quiet: true, migrationsDir, seedFile: seed });
}

// A real PostgreSQL server is shared between runs; these tests need a database of their own (a data folder).
describe.skipIf(Boolean(testDatabaseUrl))('migrations and seed on a data folder', () => {
  it('applies migrations and the seed once, records them, and keeps users across restarts', async () => {
    const email = uniqueEmail('startup');
    let lb = await open(good);
    try {
      const things = await lb.db.query<{ name: string }>('select name from public.things');
      expect(things.rows.map((r) => r.name)).toEqual(['seeded']);
      const recorded = await lb.db.query<{ version: string }>(
        'select version from supabase_migrations.schema_migrations order by version',
      );
      expect(recorded.rows.map((r) => r.version)).toEqual(['20240101000000']);
      expect((await anonClient(lb).auth.signUp({ email, password: PASSWORD })).error).toBeNull();
    } finally {
      await lb.stop();
    }
    lb = await open(good);
    try {
      // Neither the migration nor the seed ran again.
      expect((await lb.db.query('select name from public.things')).rows).toHaveLength(1);
      expect((await anonClient(lb).auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    } finally {
      await lb.stop();
    }
  });

  it('a failing migration stops start-up with the file name and the PostgreSQL message, changing nothing', async () => {
    await expect(open(bad)).rejects.toThrow(/20240102000000_broken\.sql[\s\S]*table_that_does_not_exist/);

    // The folder is unlocked again and intact: the broken file left nothing behind.
    const lb = await open(good);
    try {
      const halfDone = await lb.db.query<{ t: string | null }>("select to_regclass('public.half_done')::text as t");
      expect(halfDone.rows[0]?.t).toBeNull();
      const recorded = await lb.db.query<{ version: string }>('select version from supabase_migrations.schema_migrations');
      expect(recorded.rows.map((r) => r.version)).toEqual(['20240101000000']);
      expect((await lb.db.query('select name from public.things')).rows).toHaveLength(1);
    } finally {
      await lb.stop();
    }
  });
});

describe.skipIf(!testDatabaseUrl)('a PostgreSQL user without the rights localbase needs', () => {
  it('stops the start saying what the user lacks and what to connect as', async () => {
    const role = `lb_limited_${process.pid}_${Date.now().toString(36)}`;
    const scratch = await createScratchDatabase(testDatabaseUrl!);
    const admin = new pg.Client({ connectionString: testDatabaseUrl });
    await admin.connect();
    try {
      await admin.query(`create role ${role} login`);
      await admin.query(`alter database ${new URL(scratch.url).pathname.slice(1)} owner to ${role}`);
      const url = new URL(scratch.url);
      url.username = role;
      await expect(startTestServer({ databaseUrl: url.toString() })).rejects.toThrow(
        new RegExp(`cannot set up the database as ${role}: .+\\. localbase creates roles, schemas and extensions: connect as a superuser`),
      );
    } finally {
      await scratch.drop();
      await admin.query(`drop role if exists ${role}`);
      await admin.end();
    }
  });
});

describe.skipIf(!testDatabaseUrl)('TLS settings in the database URL, read as libpq reads them', () => {
  it('sslmode=prefer uses TLS when the server offers it and connects without it when it does not (the test server has none)', async () => {
    const url = new URL(testDatabaseUrl!);
    url.searchParams.set('sslmode', 'prefer');
    const lb = await startTestServer({ databaseUrl: url.toString() });
    try {
      const { error } = await anonClient(lb).auth.signUp({ email: uniqueEmail('prefer'), password: PASSWORD });
      expect(error).toBeNull();
    } finally {
      await lb.stop();
    }
  });

  it('sslmode=require against a server without TLS stops the start, naming the database', async () => {
    const url = new URL(testDatabaseUrl!);
    url.searchParams.set('sslmode', 'require');
    await expect(startTestServer({ databaseUrl: url.toString() })).rejects.toThrow(/cannot connect to the database .*does not support SSL/);
  });
});
