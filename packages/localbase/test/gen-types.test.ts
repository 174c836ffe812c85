// `localbase gen types typescript`: the generated file for a fixture with every feature (test/fixtures/gen-types)
// matches its committed copy on PGlite and on a PostgreSQL server, compiles with tsc and types supabase-js
// queries (usage.ts); and the web app's committed types match what supabase/migrations generate.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createScratchDatabase, nodeBin, repoRoot, runCli } from './cli.ts';
import { testDatabaseUrl } from './helpers.ts';

const fixtureDir = fileURLToPath(new URL('./fixtures/gen-types/', import.meta.url));
const migrationsDir = path.join(fixtureDir, 'migrations');
const committedFixtureTypes = path.join(fixtureDir, 'database.types.ts');
const webTypes = path.join(repoRoot, 'apps/web/src/lib/supabase/database.types.ts');
const REGENERATE_FIXTURE =
  'node packages/localbase/bin/localbase.ts gen types typescript --migrations-dir packages/localbase/test/fixtures/gen-types/migrations ' +
  '--schema public,archive > packages/localbase/test/fixtures/gen-types/database.types.ts';

function gen(args: string[]): string {
  const r = runCli(['gen', 'types', 'typescript', ...args]);
  if (r.code !== 0) throw new Error(`gen types failed (${r.code}):\n${r.stderr}`);
  return r.stdout;
}

describe('localbase gen types typescript', () => {
  it('generates the fixture schema as committed (in-memory PGlite from the migrations)', () => {
    const out = gen(['--local', '--migrations-dir', migrationsDir, '--schema', 'public', '--schema', 'archive']);
    expect(out, `the generator's output changed; if that is intended, regenerate: ${REGENERATE_FIXTURE}`).toBe(
      fs.readFileSync(committedFixtureTypes, 'utf8'),
    );
  });

  it('compiles with tsc and types createClient<Database>() queries, inserts and rpc calls (usage.ts)', () => {
    const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
    const r = spawnSync(
      nodeBin,
      [
        tsc, '--noEmit', '--strict', '--target', 'ES2023', '--module', 'NodeNext', '--moduleResolution', 'NodeNext',
        '--allowImportingTsExtensions', '--skipLibCheck', '--types', 'node', path.join(fixtureDir, 'usage.ts'),
      ],
      { cwd: fixtureDir, encoding: 'utf8' },
    );
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it.runIf(testDatabaseUrl)('reads a PostgreSQL server with --db-url and writes the same file', async () => {
    const scratch = await createScratchDatabase(testDatabaseUrl!);
    try {
      // db reset builds the schema on that server (bootstrap + migrations), then gen types reads it as it is.
      const reset = runCli(['db', 'reset', '--database-url', scratch.url, '--migrations-dir', migrationsDir, '--seed-file', '/nonexistent']);
      expect(reset.code, reset.stderr).toBe(0);
      expect(gen(['--db-url', scratch.url, '--schema', 'public,archive'])).toBe(fs.readFileSync(committedFixtureTypes, 'utf8'));
    } finally {
      await scratch.drop();
    }
  });

  it('keeps the web app types in step with supabase/migrations', () => {
    expect(
      gen(['--local']),
      'apps/web/src/lib/supabase/database.types.ts is not what supabase/migrations generate: run `npm run gen:types` and commit the result',
    ).toBe(fs.readFileSync(webTypes, 'utf8'));
  });

  it('refuses other languages', () => {
    const r = runCli(['gen', 'types', 'go']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('only "typescript"');
  });
});
