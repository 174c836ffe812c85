// Cleanup of old guest (anonymous) users: `localbase auth delete-guests --older-than 30d`, and the statement to
// schedule on any PostgreSQL, hosted Supabase included (docs/decisions/032-anonymous-sign-ins.md).
import type { Queryable } from '../db/types.ts';

/**
 * The statement for hosted Supabase or any PostgreSQL with the auth schema (e.g. scheduled daily with pg_cron).
 * The guests' rows in tables whose foreign key to auth.users is `on delete cascade` go with them.
 */
export const DELETE_GUESTS_SQL = `delete from auth.users where is_anonymous and created_at < now() - interval '30 days';`;

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** "30d", "12h", "90m", "3600s" → seconds; anything else throws. */
export function parseAge(text: string): number {
  const m = /^(\d+)([smhd])$/.exec(text.trim());
  if (!m) throw new Error(`--older-than: "${text}" is not an age like 30d, 12h, 90m or 3600s`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

/**
 * Deletes the anonymous users created more than `olderThanSeconds` ago, and so (by cascade) their sessions,
 * identities and rows. In batches of `batch` that skip rows locked by a running request, as GoTrue's own cleanup,
 * so it is safe next to a running server; a guest locked at that moment is left for the next run. Returns how
 * many users were deleted. The cutoff is fixed when it starts.
 */
export async function deleteOldGuests(db: Queryable, olderThanSeconds: number, batch = 500): Promise<number> {
  if (!Number.isFinite(olderThanSeconds) || olderThanSeconds < 0) throw new Error('the age must be a number of seconds ≥ 0');
  const cutoff = await db.query<{ t: string }>(`select (now() - make_interval(secs => $1))::text as t`, [olderThanSeconds]);
  const t = cutoff.rows[0]!.t;
  let total = 0;
  for (;;) {
    const r = await db.query(
      `delete from auth.users where id in (
         select id from auth.users where is_anonymous and created_at < $1::timestamptz
         limit $2 for update skip locked)`,
      [t, batch],
    );
    const n = r.affectedRows ?? 0;
    total += n;
    if (n === 0) return total;
  }
}
