import { readBackendConfig, type BackendConfig } from './env-config'

export { ConfigurationError, readBackendConfig, type BackendConfig, type BackendKind } from './env-config'

/**
 * The backend configuration of this build/process. The variables are spelled out literally so Next.js
 * inlines them into the browser bundle; evaluated when this module loads, so a bad value fails at start.
 */
export const backendConfig: BackendConfig = readBackendConfig({
  NEXT_PUBLIC_SUPABASE_URL: process.env.NEXT_PUBLIC_SUPABASE_URL,
  NEXT_PUBLIC_SUPABASE_ANON_KEY: process.env.NEXT_PUBLIC_SUPABASE_ANON_KEY,
})
