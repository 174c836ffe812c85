// `localbase gen types typescript`: the schema of a database as a `database.types.ts` (see typescript.ts).
import type { Database } from '../db/types.ts';
import { openPGlite, loadOrBuildTemplate } from '../db/pglite.ts';
import { BOOTSTRAP_SQL } from '../db/bootstrap.ts';
import { runMigrations } from '../db/migrations.ts';
import { introspect } from './introspect.ts';
import type { Queryable } from './introspect.ts';
import { renderTypescript, LOCALBASE_POSTGREST_VERSION } from './typescript.ts';

export { introspect } from './introspect.ts';
export type { Introspection } from './introspect.ts';
export { renderTypescript, LOCALBASE_POSTGREST_VERSION } from './typescript.ts';

export interface GenerateOptions {
  /** Schemas to describe, default ['public']. */
  schemas?: string[];
  /** The `__InternalSupabase.PostgrestVersion` marker, default localbase's ('13'); '' leaves it out. */
  postgrestVersion?: string;
}

/** The TypeScript types of a live database (as it is: nothing is migrated). */
export async function generateTypescript(db: Queryable, opts: GenerateOptions = {}): Promise<string> {
  const schemas = opts.schemas && opts.schemas.length > 0 ? opts.schemas : ['public'];
  const version = opts.postgrestVersion ?? LOCALBASE_POSTGREST_VERSION;
  return renderTypescript(await introspect(db, schemas), { postgrestVersion: version || undefined });
}

/**
 * A throwaway in-memory PGlite with localbase's bootstrap (roles, auth schema, …) and the migrations of
 * `migrationsDir` applied (no seed: data does not change types). Close it when done.
 */
export async function openMigratedMemoryDatabase(opts: { migrationsDir: string; cacheDir: string }): Promise<Database> {
  const tpl = await loadOrBuildTemplate(opts.cacheDir, BOOTSTRAP_SQL);
  const db = await openPGlite({ loadDataDir: tpl.blob });
  try {
    await runMigrations(db, { migrationsDir: opts.migrationsDir });
    return db;
  } catch (err) {
    await db.close();
    throw err;
  }
}

/** The TypeScript types of what `migrationsDir` builds, from a throwaway in-memory PGlite (no server needed). */
export async function generateTypescriptFromMigrations(
  opts: GenerateOptions & { migrationsDir: string; cacheDir: string },
): Promise<string> {
  const db = await openMigratedMemoryDatabase(opts);
  try {
    return await generateTypescript(db, opts);
  } finally {
    await db.close();
  }
}
