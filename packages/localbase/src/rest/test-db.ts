/**
 * Unit-test fixture for the rest room: an in-memory PGlite with a schema applied and its schema cache, opened before
 * a file's tests and closed after them. `use` receives both (e.g. `(fx) => ({ db, cache } = fx)`).
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll } from 'vitest';
import { loadSchemaCache, type SchemaCache } from './schema-cache.ts';

export function openSchemaDb(schema: string, use: (fx: { db: PGlite; cache: SchemaCache }) => void): void {
  let db: PGlite | undefined;
  beforeAll(async () => {
    db = new PGlite();
    await db.exec(schema);
    use({ db, cache: await loadSchemaCache(db) });
  });
  afterAll(async () => {
    await db?.close();
  });
}
