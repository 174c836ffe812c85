import fs from 'node:fs';
import crypto from 'node:crypto';

/** The bootstrap SQL (roles, schemas auth/extensions/supabase_migrations/localbase, grants, helpers). */
export const BOOTSTRAP_SQL: string = fs.readFileSync(new URL('./bootstrap.sql', import.meta.url), 'utf8');

export const BOOTSTRAP_HASH: string = crypto.createHash('sha256').update(BOOTSTRAP_SQL).digest('hex').slice(0, 16);
