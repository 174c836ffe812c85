import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGlite } from '@electric-sql/pglite';
import { loadDbConfig, transactionEnd, txEndOf } from './db-config.ts';

let db: PGlite;
beforeAll(async () => {
  db = new PGlite();
  await db.exec(`create role authenticator nologin; create role someone_else nologin;`);
});
afterAll(async () => {
  await db.close();
});

describe('in-database configuration', () => {
  it('reads the authenticator role’s pgrst.* settings; the database-specific one wins', async () => {
    expect(await loadDbConfig(db)).toEqual({});
    await db.exec(`alter role authenticator set pgrst.db_tx_end = 'rollback'`);
    await db.exec(`alter role someone_else set pgrst.db_tx_end = 'commit'`);
    expect(await loadDbConfig(db)).toEqual({ db_tx_end: 'rollback' });
    const dbName = (await db.query<{ d: string }>('select current_database() as d')).rows[0]!.d;
    await db.exec(`alter role authenticator in database "${dbName}" set pgrst.db_tx_end = 'commit-allow-override'`);
    expect(txEndOf(await loadDbConfig(db))).toBe('commit-allow-override');
  });

  it('db-tx-end decides what Prefer: tx does', () => {
    expect(txEndOf({})).toBe('commit');
    expect(txEndOf({ db_tx_end: 'bogus' })).toBe('commit');
    expect(transactionEnd('commit', 'rollback')).toEqual({ applied: null, rollback: false });
    expect(transactionEnd('commit-allow-override', 'rollback')).toEqual({ applied: 'rollback', rollback: true });
    expect(transactionEnd('commit-allow-override', null)).toEqual({ applied: null, rollback: false });
    expect(transactionEnd('rollback', 'commit')).toEqual({ applied: null, rollback: true });
    expect(transactionEnd('rollback-allow-override', 'commit')).toEqual({ applied: 'commit', rollback: false });
    expect(transactionEnd('rollback-allow-override', null)).toEqual({ applied: null, rollback: true });
  });
});
