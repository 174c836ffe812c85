import { createBrowserClient } from '@supabase/ssr'
import type { SupabaseClient } from '@supabase/supabase-js'

import { backendConfig } from '../env'
import { SESSION_COOKIE_OPTIONS } from './cookie-options'

/**
 * Builds the browser's Supabase client. Only ever reached through `loadBrowserSupabase()` (./browser.ts), whose
 * dynamic `import()` of this module keeps @supabase/ssr and all of @supabase/supabase-js out of the first-load
 * bundle: webpack puts them in a chunk of their own, fetched right after hydration.
 */
export function createBrowserSupabase(): SupabaseClient {
  return createBrowserClient(backendConfig.supabaseUrl, backendConfig.supabaseAnonKey, {
    cookieOptions: SESSION_COOKIE_OPTIONS,
    isSingleton: true,
    auth: { autoRefreshToken: true, persistSession: true, detectSessionInUrl: false, flowType: 'pkce' },
  })
}
