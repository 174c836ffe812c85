/**
 * Backend (Supabase) configuration: embedded defaults for the local backend, overridable by
 * NEXT_PUBLIC_SUPABASE_URL / NEXT_PUBLIC_SUPABASE_ANON_KEY. A variable that is set but empty is a
 * configuration error naming it — silently falling back would point a deployment at localhost.
 */

/** The local backend (localbase / Supabase CLI) gateway. */
export const DEFAULT_SUPABASE_URL = 'http://127.0.0.1:54321'

/** The public demo anon key of the Supabase CLI (role anon, iss supabase-demo). Not a secret. */
export const DEFAULT_SUPABASE_ANON_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0'

export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ConfigurationError'
  }
}

export type BackendKind = 'local' | 'hosted'

export interface BackendConfig {
  supabaseUrl: string
  supabaseAnonKey: string
  backend: BackendKind
}

export interface BackendEnv {
  NEXT_PUBLIC_SUPABASE_URL?: string | undefined
  NEXT_PUBLIC_SUPABASE_ANON_KEY?: string | undefined
}

function readVariable(name: keyof BackendEnv, value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback
  const trimmed = value.trim()
  if (trimmed === '') {
    throw new ConfigurationError(
      `${name} is set but empty. Unset it to use the local backend default, or set it to a value.`,
    )
  }
  return trimmed
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]', '::1'])

/** True for localhost, ::1 and the whole 127.0.0.0/8 block. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase()
  if (LOOPBACK_HOSTS.has(host) || host.endsWith('.localhost')) return true
  return /^127(\.\d{1,3}){3}$/.test(host)
}

export function readBackendConfig(env: BackendEnv): BackendConfig {
  const supabaseUrl = readVariable('NEXT_PUBLIC_SUPABASE_URL', env.NEXT_PUBLIC_SUPABASE_URL, DEFAULT_SUPABASE_URL)
  const supabaseAnonKey = readVariable(
    'NEXT_PUBLIC_SUPABASE_ANON_KEY',
    env.NEXT_PUBLIC_SUPABASE_ANON_KEY,
    DEFAULT_SUPABASE_ANON_KEY,
  )
  let url: URL
  try {
    url = new URL(supabaseUrl)
  } catch {
    throw new ConfigurationError(`NEXT_PUBLIC_SUPABASE_URL is not a valid URL: "${supabaseUrl}".`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigurationError(`NEXT_PUBLIC_SUPABASE_URL must be an http(s) URL, got "${supabaseUrl}".`)
  }
  return {
    supabaseUrl: supabaseUrl.replace(/\/+$/, ''),
    supabaseAnonKey,
    backend: isLoopbackHost(url.hostname) ? 'local' : 'hosted',
  }
}
