import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGlite, loadOrBuildTemplate } from './pglite.ts';
import { BOOTSTRAP_SQL } from './bootstrap.ts';
import { listMigrations, MigrationError, runMigrations } from './migrations.ts';
import type { Database } from './types.ts';
import { findRepoRoot } from '../config.ts';

let db: Database;
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lb-mig-'));
const migrations = path.join(root, 'migrations');
const seed = path.join(root, 'seed.sql');

beforeAll(async () => {
  const tpl = await loadOrBuildTemplate(path.join(findRepoRoot(), 'node_modules', '.cache', 'localbase'), BOOTSTRAP_SQL);
  db = await openPGlite({ loadDataDir: tpl.blob });
  fs.mkdirSync(migrations);
}, 60_000);

afterAll(async () => {
  await db?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('migrations runner', () => {
  it('lists *.sql files in filename order with numeric version and name', () => {
    fs.writeFileSync(path.join(migrations, '20240102000000_second.sql'), 'create table public.b (id int);');
    fs.writeFileSync(path.join(migrations, '20240101000000_first.sql'), 'create table public.a (id int);');
    fs.writeFileSync(path.join(migrations, 'README.md'), 'not a migration');
    expect(listMigrations(migrations).map((m) => [m.version, m.name])).toEqual([
      ['20240101000000', 'first'],
      ['20240102000000', 'second'],
    ]);
    expect(listMigrations(path.join(root, 'missing'))).toEqual([]);
  });

  it('applies each file once, records it, and applies the seed once', async () => {
    // Like Supabase seeds: extension functions (pgcrypto in schema extensions) resolve without a schema.
    fs.writeFileSync(seed, "insert into public.a values (42);\nselect crypt('pw', gen_salt('bf'));");
    const first = await runMigrations(db, { migrationsDir: migrations, seedFile: seed });
    expect(first.applied).toEqual(['20240101000000_first.sql', '20240102000000_second.sql']);
    expect(first.seeded).toBe(true);
    const second = await runMigrations(db, { migrationsDir: migrations, seedFile: seed });
    expect(second.applied).toEqual([]);
    expect(second.seeded).toBe(false);
    const rows = (await db.query<{ version: string; name: string }>(
      'select version, name from supabase_migrations.schema_migrations order by version',
    )).rows;
    expect(rows).toEqual([
      { version: '20240101000000', name: 'first' },
      { version: '20240102000000', name: 'second' },
    ]);
    expect((await db.query<{ n: number }>('select count(*)::int as n from public.a')).rows[0]?.n).toBe(1);
  });

  it('stops at a failing file, names it with PostgreSQL’s message, and keeps nothing of it', async () => {
    fs.writeFileSync(
      path.join(migrations, '20240103000000_broken.sql'),
      'create table public.c (id int);\ninsert into public.c values (1);\nselect * from public.does_not_exist;',
    );
    fs.writeFileSync(path.join(migrations, '20240104000000_after.sql'), 'create table public.d (id int);');
    let err: unknown;
    try {
      await runMigrations(db, { migrationsDir: migrations });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MigrationError);
    expect((err as Error).message).toContain('20240103000000_broken.sql');
    expect((err as Error).message).toContain('relation "public.does_not_exist" does not exist');
    const tables = (await db.query<{ t: string }>(
      "select table_name as t from information_schema.tables where table_schema = 'public' order by 1",
    )).rows.map((r) => r.t);
    expect(tables).toEqual(['a', 'b']);
    const versions = (await db.query('select version from supabase_migrations.schema_migrations')).rows;
    expect(versions).toHaveLength(2);
    // Fixing the file lets the next start continue from there.
    fs.writeFileSync(path.join(migrations, '20240103000000_broken.sql'), 'create table public.c (id int);');
    const fixed = await runMigrations(db, { migrationsDir: migrations });
    expect(fixed.applied).toEqual(['20240103000000_broken.sql', '20240104000000_after.sql']);
  });
});
