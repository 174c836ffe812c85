import { createServerClient } from '@supabase/ssr'
import { afterEach, describe, expect, it, vi } from 'vitest'

import { DEFAULT_SUPABASE_ANON_KEY } from '../env-config'
import { createBrowserSupabase, defaultStorageKey } from './browser-client'
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

describe('the session cookies the browser writes', () => {
  afterEach(() => vi.unstubAllGlobals())

  // What the browser client writes to document.cookie when it stores a session, on a page of `protocol`.
  async function cookiesWrittenOn(protocol: string): Promise<string[]> {
    const written: string[] = []
    const document = {
      get cookie() {
        return ''
      },
      set cookie(line: string) {
        written.push(line)
      },
    }
    vi.stubGlobal('location', { protocol })
    vi.stubGlobal('document', document)
    vi.stubGlobal('window', { document, location: { protocol }, addEventListener() {}, removeEventListener() {} })
    const { auth } = createBrowserSupabase()
    const storage = (auth as unknown as { storage: { setItem(key: string, value: string): Promise<void> } }).storage
    await storage.setItem('sb-127-auth-token', JSON.stringify({ access_token: 'a.b.c', refresh_token: 'r' }))
    await auth.stopAutoRefresh()
    return written.filter((line) => line.startsWith('sb-127-auth-token'))
  }

  it('are Secure on an https page, so the session never travels over plain http', async () => {
    const lines = await cookiesWrittenOn('https:')
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(line).toMatch(/; Secure(;|$)/)
  })

  it('are not Secure on an http page (local development), where a Secure cookie would not be kept', async () => {
    const lines = await cookiesWrittenOn('http:')
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(line).not.toMatch(/; Secure(;|$)/i)
  })
})
