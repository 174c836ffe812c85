// The scenario of issue 10: 170 users whose access token has expired call the API at once. The web server
// refreshes each session with Supabase Auth, which limits refreshes per client address (150 per 5 minutes). Without
// the user's address passed on, all 170 refreshes count against the web server's address: 20 users get 401 and are
// signed out (their cookies cleared). With it, each user has their own budget — through a trusted proxy
// (X-Forwarded-For) and through hosted Supabase's IP forwarding (Sb-Forwarded-For with the secret key).
// Real parts only: localbase (PGlite) with its default refresh limit, the app's tRPC router and context on a Node
// HTTP server, @supabase/ssr reading and writing the cookies.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

import type { Session } from '@supabase/supabase-js'
import { createHTTPHandler } from '@trpc/server/adapters/standalone'
import { DEFAULT_SECRET_KEY, type Localbase } from 'localbase'
import { serviceClient, startTestServer, anonClient } from 'localbase/testing'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'

const USERS = 170

interface Stack {
  lb: Localbase
  web: http.Server
  webUrl: string
}

const stacks = new Map<boolean, Stack>()
afterEach(() => {
  delete process.env.FOYER_TRUSTED_PROXIES
  delete process.env.SUPABASE_SECRET_KEY
})
afterAll(async () => {
  for (const s of stacks.values()) {
    s.web.closeAllConnections()
    await new Promise((resolve) => s.web.close(resolve))
    await s.lb.stop()
  }
})

/** localbase with GoTrue's refresh limit (150 per 5 min) and the app's API in front of it, one of each kind. */
async function stack(localbaseTrustsWebServer: boolean): Promise<Stack> {
  const existing = stacks.get(localbaseTrustsWebServer)
  if (existing) return existing
  const lb = await startTestServer({
    rateLimits: { tokenRefresh: 150 },
    ...(localbaseTrustsWebServer ? { trustedProxies: ['127.0.0.1'] } : {}),
  })
  process.env.NEXT_PUBLIC_SUPABASE_URL = lb.url
  process.env.NEXT_PUBLIC_SUPABASE_ANON_KEY = lb.anonKey
  // Loaded after the backend variables are set: the app reads them when its modules load (fresh for each stack).
  vi.resetModules()
  const { appRouter } = await import('../../server/root')
  const { createContext } = await import('../../server/trpc')
  const handler = createHTTPHandler({
    router: appRouter,
    basePath: '/api/trpc/',
    createContext: ({ req, res }) => createContext({ req, res } as never),
  })
  const web = http.createServer((req, res) => void handler(req, res))
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve))
  const s = { lb, web, webUrl: `http://127.0.0.1:${(web.address() as AddressInfo).port}` }
  stacks.set(localbaseTrustsWebServer, s)
  return s
}

/** `USERS` fresh sessions (one account each), from email links: no password hashing, so it takes seconds. */
async function signedInUsers(lb: Localbase): Promise<Session[]> {
  const admin = serviceClient(lb)
  const sessions: Session[] = []
  for (let i = 0; i < USERS; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, USERS - i) }, async (_, j) => {
        const email = `fwd-${Date.now()}-${i + j}@example.com`
        const link = await admin.auth.admin.generateLink({ type: 'magiclink', email })
        expect(link.error).toBeNull()
        const { data, error } = await anonClient(lb).auth.verifyOtp({ token_hash: link.data.properties!.hashed_token, type: 'magiclink' })
        expect(error).toBeNull()
        return data.session!
      }),
    )
    sessions.push(...batch)
  }
  return sessions
}

/** The session cookie @supabase/ssr writes, for a session whose access token has expired (so the server refreshes). */
function expiredSessionCookie(session: Session): string {
  const expired = { ...session, expires_at: Math.floor(Date.now() / 1000) - 60 }
  return `sb-127-auth-token=base64-${Buffer.from(JSON.stringify(expired)).toString('base64url')}`
}

/** Every user calls `auth.me` at once, each from their own address (as a load balancer in front reports it). */
async function everyoneCallsMe(s: Stack, network: string): Promise<{ statuses: number[]; signedOut: number }> {
  const sessions = await signedInUsers(s.lb)
  const results = await Promise.all(
    sessions.map(async (session, i) => {
      const res = await fetch(`${s.webUrl}/api/trpc/auth.me`, {
        headers: { cookie: expiredSessionCookie(session), 'x-forwarded-for': `${network}.${i}` },
      })
      const cleared = res.headers.getSetCookie().some((c) => /^sb-127-auth-token(\.\d+)?=;/.test(c) || /Max-Age=0/i.test(c))
      return { status: res.status, cleared }
    }),
  )
  return { statuses: results.map((r) => r.status), signedOut: results.filter((r) => r.cleared).length }
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length

describe(`${USERS} users with expired access tokens behind the web server`, () => {
  it('without the users\' addresses passed on, they share the server\'s refresh budget and 20 are signed out', async () => {
    // The app trusts no proxy: every user is the test's own address, so every refresh counts against one budget.
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {}) // auth-js reports each refused refresh
    const s = await stack(true)
    const { statuses, signedOut } = await everyoneCallsMe(s, '198.51.100')
    expect(count(statuses, 200)).toBe(150)
    expect(count(statuses, 401)).toBe(20)
    expect(signedOut).toBe(20)
    expect(logged.mock.calls.some(([error]) => String(error).includes('Request rate limit reached'))).toBe(true)
  }, 180_000)

  it('through a trusted proxy (X-Forwarded-For at both hops) nobody is signed out', async () => {
    const s = await stack(true)
    process.env.FOYER_TRUSTED_PROXIES = '127.0.0.1'
    const { statuses, signedOut } = await everyoneCallsMe(s, '203.0.113')
    expect(count(statuses, 200)).toBe(USERS)
    expect(signedOut).toBe(0)
  }, 180_000)

  it('with the secret key (Sb-Forwarded-For, hosted Supabase\'s IP forwarding) nobody is signed out', async () => {
    const s = await stack(false) // localbase trusts no proxy: only the secret key makes it believe the address
    process.env.FOYER_TRUSTED_PROXIES = '127.0.0.1'
    process.env.SUPABASE_SECRET_KEY = DEFAULT_SECRET_KEY
    const { statuses, signedOut } = await everyoneCallsMe(s, '192.0.2')
    expect(count(statuses, 200)).toBe(USERS)
    expect(signedOut).toBe(0)
  }, 180_000)
})
