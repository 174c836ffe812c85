import { createServerClient } from '@supabase/ssr'
import { describe, expect, it } from 'vitest'

import { DEFAULT_SUPABASE_ANON_KEY } from '../env-config'
import { defaultStorageKey } from './browser-client'
import { SESSION_COOKIE_OPTIONS } from './cookie-options'

// The browser's auth client is auth-js alone (ADR 038); the server keeps @supabase/ssr's createServerClient. Both must
// name the session cookie alike, or the server would not see a session the browser signed in (and the other way).
describe('browser auth client', () => {
  for (const url of ['http://127.0.0.1:54321', 'https://abcdefghijklmnop.supabase.co', 'http://localhost:8000/']) {
    it(`uses the server client's cookie name for ${url}`, () => {
      const server = createServerClient(url, DEFAULT_SUPABASE_ANON_KEY, {
        cookieOptions: SESSION_COOKIE_OPTIONS,
        cookies: { getAll: () => [], setAll: () => undefined },
      })
      expect(defaultStorageKey(url)).toBe((server as unknown as { storageKey: string }).storageKey)
    })
  }
})
