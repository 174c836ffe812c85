/**
 * PostgREST's in-database configuration: `ALTER ROLE authenticator SET pgrst.<name> = '…'` (how Supabase projects
 * change PostgREST settings, e.g. `pgrst.db_tx_end`). Read when the schema cache is (re)loaded; a setting for the
 * current database wins over one for all databases. Only the settings localbase honours are interpreted here.
 */
import type { Queryable } from './schema-cache.ts';

/** PostgREST's db-tx-end: whether requests commit or roll back, and whether `Prefer: tx=…` may override it. */
export type TxEnd = 'commit' | 'commit-allow-override' | 'rollback' | 'rollback-allow-override';

export const DB_CONFIG_SQL = `
select distinct on (key) substr(setting, 7, strpos(setting, '=') - 7) as key, substr(setting, strpos(setting, '=') + 1) as value
from pg_catalog.pg_db_role_setting s, unnest(s.setconfig) setting
where s.setrole = (select oid from pg_catalog.pg_roles where rolname = 'authenticator')
  and s.setdatabase in (0, (select oid from pg_catalog.pg_database where datname = current_database()))
  and setting like 'pgrst.%=%'
order by key, s.setdatabase desc
`;

/** The `pgrst.*` settings of the authenticator role, keyed without the prefix (`db_tx_end`). */
export async function loadDbConfig(db: Queryable): Promise<Record<string, string>> {
  const r = await db.query<{ key: string; value: string }>(DB_CONFIG_SQL);
  return Object.fromEntries(r.rows.map((row) => [row.key, row.value]));
}

const TX_ENDS: readonly TxEnd[] = ['commit', 'commit-allow-override', 'rollback', 'rollback-allow-override'];

/** db-tx-end from the settings; PostgREST's default `commit` (tx=… ignored) when unset or unknown. */
export function txEndOf(config: Readonly<Record<string, string>>): TxEnd {
  const v = (config.db_tx_end ?? '').trim() as TxEnd;
  return TX_ENDS.includes(v) ? v : 'commit';
}

/**
 * What a request's `Prefer: tx=…` amounts to under db-tx-end: the preference PostgREST reports as applied (only
 * when overriding is allowed) and whether the transaction is rolled back.
 */
export function transactionEnd(txEnd: TxEnd, preferred: 'commit' | 'rollback' | null): { applied: 'commit' | 'rollback' | null; rollback: boolean } {
  const applied = txEnd.endsWith('-allow-override') ? preferred : null;
  return { applied, rollback: applied === 'rollback' || (txEnd.startsWith('rollback') && applied !== 'commit') };
}

/** db-plan-enabled (`pgrst.db_plan_enabled`): answer `Accept: application/vnd.pgrst.plan…`; PostgREST's default off. */
export function planEnabledOf(config: Readonly<Record<string, string>>): boolean {
  return ['true', 'on', '1', 'yes'].includes((config.db_plan_enabled ?? '').trim().toLowerCase());
}
