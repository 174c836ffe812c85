import type { SupabaseClient } from '@supabase/supabase-js'

import type { Database } from './database.types'

export type { Database, Tables, TablesInsert, TablesUpdate } from './database.types'

/**
 * The app's Supabase client: typed by `Database`, generated from supabase/migrations (`npm run gen:types`), so
 * `.from('notes').select('id,title')` returns `{ id: string; title: string }[]` and inserts must carry the
 * required columns. Every client the app creates (browser, server) has this type.
 */
export type AppSupabaseClient = SupabaseClient<Database>

/**
 * What table queries need of a client: `from`, `rpc` and `schema`, typed by `Database`. The full client has them;
 * so has the lighter per-request data client of the tRPC server (lib/supabase/server.ts `createDataClient`).
 */
export type AppDataClient = Pick<AppSupabaseClient, 'from' | 'rpc' | 'schema'>
