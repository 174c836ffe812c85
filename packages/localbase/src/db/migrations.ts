import fs from 'node:fs';
import path from 'node:path';
import type { Database } from './types.ts';

/** Supabase's search_path for the postgres role, so that e.g. crypt()/gen_salt() from extensions resolve. */
/** Migrations, the seed, bootstrap and reset may take long or wait for another server's: no request's limit. */
export const NO_STATEMENT_TIMEOUT = 'set local statement_timeout = 0';

const SUPABASE_SEARCH_PATH = `select set_config('search_path', '"$user", public, extensions', true)`;

export class MigrationError extends Error {
  readonly file: string;
  constructor(file: string, cause: unknown) {
    const pgMessage = cause instanceof Error ? cause.message : String(cause);
    super(`Migration failed: ${file}: ${pgMessage}`);
    this.name = 'MigrationError';
    this.file = file;
  }
}

export interface MigrationFile {
  file: string;
  /** The numeric prefix, e.g. 20240101120000 for 20240101120000_create_notes.sql */
  version: string;
  /** The part after the first underscore, without .sql */
  name: string;
}

/** Lists *.sql files of a folder in filename order; a missing folder has no migrations. */
export function listMigrations(dir: string): MigrationFile[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort()
    .map((f) => {
      const base = f.slice(0, -'.sql'.length);
      const m = /^(\d+)_?(.*)$/.exec(base);
      return { file: path.join(dir, f), version: m ? m[1]! : base, name: m ? m[2]! : base };
    });
}

export interface MigrationReport {
  applied: string[];
  skipped: string[];
  seeded: boolean;
}

/**
 * Applies every migration not yet recorded in supabase_migrations.schema_migrations, each in its own
 * transaction (a failure leaves nothing of that file behind and stops with MigrationError naming it).
 * Then applies the seed file once, if this database has never been seeded.
 */
export async function runMigrations(
  db: Database,
  opts: { migrationsDir?: string; seedFile?: string; log?: (msg: string) => void },
): Promise<MigrationReport> {
  const log = opts.log ?? (() => {});
  const report: MigrationReport = { applied: [], skipped: [], seeded: false };
  const done = new Set(
    (await db.query<{ version: string }>('select version from supabase_migrations.schema_migrations')).rows.map(
      (r) => r.version,
    ),
  );
  for (const m of opts.migrationsDir ? listMigrations(opts.migrationsDir) : []) {
    if (done.has(m.version)) {
      report.skipped.push(path.basename(m.file));
      continue;
    }
    const sql = fs.readFileSync(m.file, 'utf8');
    try {
      const appliedNow = await db.transaction(async (tx) => {
        // Another server on the same database may be migrating at the same moment: take turns, then re-check.
        await tx.exec(NO_STATEMENT_TIMEOUT);
        await tx.query('select pg_advisory_xact_lock(54321002)');
        const again = await tx.query('select 1 from supabase_migrations.schema_migrations where version = $1', [
          m.version,
        ]);
        if (again.rows.length > 0) return false;
        await tx.query(SUPABASE_SEARCH_PATH);
        await tx.exec(sql);
        await tx.query(
          'insert into supabase_migrations.schema_migrations (version, name, statements) values ($1, $2, $3)',
          [m.version, m.name, [sql]],
        );
        return true;
      });
      if (!appliedNow) {
        report.skipped.push(path.basename(m.file));
        continue;
      }
    } catch (err) {
      throw new MigrationError(path.basename(m.file), err);
    }
    done.add(m.version);
    report.applied.push(path.basename(m.file));
    log(`Applied migration ${path.basename(m.file)}`);
  }

  if (opts.seedFile && fs.existsSync(opts.seedFile)) {
    const seeded = await db.query("select 1 from localbase.meta where key = 'seeded_at'");
    if (seeded.rows.length === 0) {
      const sql = fs.readFileSync(opts.seedFile, 'utf8');
      try {
        await db.transaction(async (tx) => {
          await tx.exec(NO_STATEMENT_TIMEOUT);
        await tx.query('select pg_advisory_xact_lock(54321002)');
          const again = await tx.query("select 1 from localbase.meta where key = 'seeded_at'");
          if (again.rows.length > 0) return;
          await tx.query(SUPABASE_SEARCH_PATH);
          await tx.exec(sql);
          await tx.query("insert into localbase.meta (key, value) values ('seeded_at', now()::text)");
          report.seeded = true;
        });
      } catch (err) {
        throw new MigrationError(path.basename(opts.seedFile), err);
      }
      if (report.seeded) log(`Applied seed ${path.basename(opts.seedFile)}`);
    }
  }
  return report;
}
