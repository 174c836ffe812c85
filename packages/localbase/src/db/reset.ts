// `db reset` on an open database: drop every non-system schema, then bootstrap, migrations and seed again.
// Used by the CLI on a stopped server's data (src/commands.ts) and by a running server (Localbase.resetDatabase).
import type { Database } from './types.ts';
import { BOOTSTRAP_HASH, BOOTSTRAP_SQL } from './bootstrap.ts';
import { NO_STATEMENT_TIMEOUT, runMigrations } from './migrations.ts';
import type { MigrationReport } from './migrations.ts';

/** Drops every schema but PostgreSQL's own (public, auth, user schemas, localbase's) and creates an empty public. */
export async function dropAllSchemas(db: Database): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.exec(NO_STATEMENT_TIMEOUT);
    await tx.query('select pg_advisory_xact_lock(54321001)');
    const { rows } = await tx.query<{ nspname: string }>(
      `select nspname from pg_namespace
        where nspname not in ('pg_catalog', 'information_schema', 'pg_toast')
          and nspname not like 'pg\\_temp\\_%' and nspname not like 'pg\\_toast\\_temp\\_%'`,
    );
    for (const { nspname } of rows) await tx.exec(`drop schema "${nspname.replaceAll('"', '""')}" cascade`);
    await tx.exec('create schema public');
  });
}

/** Bootstrap (recording its version), then the migrations and the seed. */
export async function rebuild(
  db: Database,
  opts: { migrationsDir: string; seedFile: string; log?: (m: string) => void },
): Promise<MigrationReport> {
  await db.transaction(async (tx) => {
    await tx.exec(NO_STATEMENT_TIMEOUT);
    await tx.query('select pg_advisory_xact_lock(54321001)');
    await tx.exec(BOOTSTRAP_SQL);
    await tx.query(
      "insert into localbase.meta (key, value) values ('bootstrap_hash', $1) on conflict (key) do update set value = excluded.value",
      [BOOTSTRAP_HASH],
    );
  });
  const report = await runMigrations(db, opts);
  // Realtime's capture triggers follow the publication (the event trigger does it too, when it could be created).
  await db.transaction(async (tx) => {
    await tx.exec(NO_STATEMENT_TIMEOUT);
    await tx.query('select localbase.realtime_sync()');
  });
  return report;
}
