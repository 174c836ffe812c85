import { describe, expect, it } from 'vitest'

import {
  ConfigurationError,
  DEFAULT_SUPABASE_ANON_KEY,
  DEFAULT_SUPABASE_URL,
  isLoopbackHost,
  readBackendConfig,
} from './env-config'

describe('backend configuration', () => {
  it('uses the embedded local backend defaults when nothing is set', () => {
    const config = readBackendConfig({})
    expect(config).toEqual({
      supabaseUrl: 'http://127.0.0.1:54321',
      supabaseAnonKey: DEFAULT_SUPABASE_ANON_KEY,
      backend: 'local',
    })
    expect(DEFAULT_SUPABASE_URL).toBe('http://127.0.0.1:54321')
    // The demo anon key of the Supabase CLI: role anon.
    const payload = JSON.parse(Buffer.from(DEFAULT_SUPABASE_ANON_KEY.split('.')[1] ?? '', 'base64url').toString())
    expect(payload).toEqual({ iss: 'supabase-demo', role: 'anon', exp: 1983812996 })
  })

  it('lets both variables override the defaults and reports a hosted backend', () => {
    const config = readBackendConfig({
      NEXT_PUBLIC_SUPABASE_URL: 'https://abc.supabase.co/',
      NEXT_PUBLIC_SUPABASE_ANON_KEY: 'public-key',
    })
    expect(config).toEqual({ supabaseUrl: 'https://abc.supabase.co', supabaseAnonKey: 'public-key', backend: 'hosted' })
  })

  it.each(['NEXT_PUBLIC_SUPABASE_URL', 'NEXT_PUBLIC_SUPABASE_ANON_KEY'] as const)(
    'throws a configuration error naming %s when it is set but empty',
    (name) => {
      for (const empty of ['', '   ']) {
        const run = () => readBackendConfig({ [name]: empty })
        expect(run).toThrow(ConfigurationError)
        expect(run).toThrow(new RegExp(`^${name} is set but empty`))
      }
    },
  )

  it('rejects a URL that does not parse or is not http(s), naming the variable', () => {
    expect(() => readBackendConfig({ NEXT_PUBLIC_SUPABASE_URL: 'not a url' })).toThrow(/NEXT_PUBLIC_SUPABASE_URL/)
    expect(() => readBackendConfig({ NEXT_PUBLIC_SUPABASE_URL: 'ftp://example.com' })).toThrow(
      /NEXT_PUBLIC_SUPABASE_URL must be an http\(s\) URL/,
    )
  })

  it('treats loopback addresses as local', () => {
    for (const host of ['127.0.0.1', '127.8.9.10', 'localhost', 'api.localhost', '[::1]']) {
      expect(isLoopbackHost(host)).toBe(true)
    }
    for (const host of ['128.0.0.1', 'example.com', '10.0.0.1', '127.example.com']) {
      expect(isLoopbackHost(host)).toBe(false)
    }
    expect(readBackendConfig({ NEXT_PUBLIC_SUPABASE_URL: 'http://localhost:8000' }).backend).toBe('local')
  })
})
