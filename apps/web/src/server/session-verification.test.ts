// How the web server verifies a session (docs/decisions/031-local-session-verification.md), against real localbase
// servers: ES256 tokens are verified by their signature with the published keys (no GET /auth/v1/user per page or
// procedure, the key set fetched once), HS256 tokens by the auth server, forged / tampered / dead tokens are refused,
// an expired access token is still refreshed through the cookie, and the freshness-critical pages (account and
// security settings, /mfa) refuse a session signed out elsewhere at once.
// Real parts only: localbase (PGlite, or PostgreSQL with LOCALBASE_TEST_DATABASE_URL), the app's tRPC router and
// context on a Node HTTP server, the pages' own getServerSideProps, @supabase/ssr reading and writing the cookies.
import http from 'node:http'
import path from 'node:path'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes, randomUUID } from 'node:crypto'

import type { Session } from '@supabase/supabase-js'
import { decodeJwt, generateKeyPair, SignJWT } from 'jose'
import { findRepoRoot, type Localbase, type LocalbaseOptions } from 'localbase'
import { anonClient, serviceClient, signedInClient, sleep, startTestServer, totpCode } from 'localbase/testing'
import type { GetServerSideProps, GetServerSidePropsContext } from 'next'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'

import type { withSession as WithSession } from './with-session'

type Kind = 'es256' | 'hs256' | 'short-lived' | 'stopped'

interface Stack {
  lb: Localbase
  stopped?: boolean
  web: http.Server
  webUrl: string
  /** withSession from this stack's modules (loaded with its backend URL) */
  withSession: typeof WithSession
  securityPage: GetServerSideProps
  accountPage: GetServerSideProps
  mfaPage: GetServerSideProps
}

/** Every outgoing request of this process (the app's server clients and the test's own), by URL. */
const calls: string[] = []
const realFetch = globalThis.fetch
beforeAll(() => {
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    calls.push(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url)
    return realFetch(input, init)
  }
})

const stacks = new Map<Kind, Stack>()
afterAll(async () => {
  globalThis.fetch = realFetch
  for (const s of stacks.values()) {
    s.web.closeAllConnections()
    await new Promise((resolve) => s.web.close(resolve))
    if (!s.stopped) await s.lb.stop()
  }
})

const HS256_KEY = { kty: 'oct', k: randomBytes(32).toString('base64url'), kid: 'hs256-test', alg: 'HS256', key_ops: ['sign', 'verify'] }

/** A localbase of the kind and the app's API and pages in front of it (modules loaded for its URL). */
async function stack(kind: Kind): Promise<Stack> {
  const existing = stacks.get(kind)
  if (existing) return existing
  const optionsOf: Record<Kind, LocalbaseOptions> = {
    // the product's tables, for the table queries of the ES256 sessions
    es256: { migrationsDir: path.join(findRepoRoot(), 'supabase', 'migrations') },
    hs256: { signingKeys: [HS256_KEY] },
    'short-lived': { jwtExpiry: 2 },
    stopped: {},
  }
  const options = optionsOf[kind]
  const lb = await startTestServer(options)
  // The HS256 stack's API budgets are small, to see what a caller past its budget still costs (read when loaded).
  if (kind === 'hs256') process.env.FOYER_API_QUERY_LIMIT = '6/0.001'
  else delete process.env.FOYER_API_QUERY_LIMIT
  process.env.NEXT_PUBLIC_SUPABASE_URL = lb.url
  process.env.NEXT_PUBLIC_SUPABASE_ANON_KEY = lb.anonKey
  // Loaded after the backend variables are set: the app reads them when its modules load (fresh for each stack).
  vi.resetModules()
  const { apiHandler } = await import('./api-handler')
  const { atBasePath } = await import('./trpc-handler')
  const { withSession } = await import('./with-session')
  const web = http.createServer(atBasePath(apiHandler, '/api/trpc/'))
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve))
  const s: Stack = {
    lb,
    web,
    webUrl: `http://127.0.0.1:${(web.address() as AddressInfo).port}`,
    withSession,
    securityPage: (await import('../pages/settings/security')).getServerSideProps,
    accountPage: (await import('../pages/settings/account')).getServerSideProps,
    mfaPage: (await import('../pages/mfa')).getServerSideProps,
  }
  stacks.set(kind, s)
  return s
}

async function signIn(s: Stack): Promise<Session> {
  const { client } = await signedInClient(s.lb)
  const { data } = await client.auth.getSession()
  return data.session!
}

/** The session cookie as @supabase/ssr writes it. */
function cookieOf(session: Session): string {
  return `sb-127-auth-token=base64-${Buffer.from(JSON.stringify(session)).toString('base64url')}`
}

const userCalls = (s: Stack) => calls.filter((url) => url.startsWith(`${s.lb.url}/auth/v1/user`)).length
const jwksCalls = (s: Stack) => calls.filter((url) => url.startsWith(`${s.lb.url}/auth/v1/.well-known/jwks.json`)).length

/** auth.me over HTTP with the cookie, as the browser calls it. */
async function me(s: Stack, cookie: string): Promise<{ status: number; id?: string; email?: string | null; setCookies: string[] }> {
  const res = await realFetch(`${s.webUrl}/api/trpc/auth.me`, { headers: { cookie } })
  const body = (await res.json()) as { result?: { data?: { json?: { id: string; email: string | null } } } }
  const user = body.result?.data?.json
  return { status: res.status, id: user?.id, email: user?.email, setCookies: res.headers.getSetCookie() }
}

/** A page's getServerSideProps for a request with the cookie; the response's Set-Cookie lines beside. */
async function renderPage(gssp: GetServerSideProps, resolvedUrl: string, cookie: string) {
  const headers = new Map<string, unknown>()
  const res = {
    headersSent: false,
    getHeader: (name: string) => headers.get(name.toLowerCase()),
    setHeader(name: string, value: unknown) {
      headers.set(name.toLowerCase(), value)
      return this
    },
  }
  const ctx = {
    req: { headers: { cookie } } as IncomingMessage,
    res: res as unknown as ServerResponse,
    resolvedUrl,
    query: {},
  } as unknown as GetServerSidePropsContext
  const result = (await gssp(ctx)) as {
    props?: { initialSession: Session | null }
    redirect?: { destination: string }
  }
  return { result, setCookies: (headers.get('set-cookie') as string[] | undefined) ?? [] }
}

const signInRedirect = (path: string) => ({ redirect: { destination: `/sign-in?next=${encodeURIComponent(path)}` } })

/** A token with the payload changed and the header and signature kept. */
function tampered(token: string, change: Record<string, unknown>): string {
  const [header, payload, signature] = token.split('.')
  const claims = { ...(JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as object), ...change }
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`
}

describe('ES256 sessions: verified by their signature', { timeout: 30_000 }, () => {
  let s: Stack
  beforeAll(async () => {
    s = await stack('es256')
  }, 120_000)

  it('a protected procedure and a protected page make no /auth/v1/user call; the key set is fetched once', async () => {
    const session = await signIn(s)
    const cookie = cookieOf(session)
    const protectedPage = s.withSession({ protected: true })
    const jwksBefore = jwksCalls(s)
    // The first request with an aal1 token asks the auth server whether its user has a verified factor.
    expect(await me(s, cookie)).toMatchObject({ status: 200, id: session.user.id, email: session.user.email })
    const usersBefore = userCalls(s)
    for (let i = 0; i < 5; i++) expect(await me(s, cookie)).toMatchObject({ status: 200, id: session.user.id })
    for (let i = 0; i < 3; i++) {
      const { result } = await renderPage(protectedPage, '/notes/x', cookie)
      expect(result.props?.initialSession?.user).toMatchObject({ id: session.user.id, email: session.user.email })
      expect(result.props?.initialSession?.access_token).toBe(session.access_token)
    }
    expect(userCalls(s) - usersBefore).toBe(0)
    // Each request has its own Supabase client; the published keys are shared by all of them.
    expect(jwksCalls(s) - jwksBefore).toBeLessThanOrEqual(1)
  })

  it("two users' table queries, interleaved on one server, each see only that user's notes", async () => {
    // The server keeps a data client per access token (lib/supabase/server.ts createDataClient): each request must
    // still query with its own caller's token.
    const sessions: Session[] = []
    const titles: string[] = []
    for (let i = 0; i < 2; i++) {
      const { client } = await signedInClient(s.lb)
      const session = (await client.auth.getSession()).data.session!
      titles.push(`interleaved ${i} ${session.user.id}`)
      const { error } = await client.from('notes').insert({ user_id: session.user.id, title: titles[i]!, body: '' })
      expect(error).toBeNull()
      sessions.push(session)
    }
    const list = async (session: Session) => {
      const input = encodeURIComponent(JSON.stringify({ 0: { json: { sort: 'updated_at', page: 1, pageSize: 20 } } }))
      const res = await realFetch(`${s.webUrl}/api/trpc/notes.list?batch=1&input=${input}`, { headers: { cookie: cookieOf(session) } })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { result: { data: { json: { items: { title: string }[]; total: number } } } }[]
      return body[0]!.result.data.json
    }
    for (let round = 0; round < 3; round++)
      for (const [i, session] of sessions.entries()) {
        const page = await list(session)
        expect(page.total).toBe(1)
        expect(page.items.map((item) => item.title)).toEqual([titles[i]])
      }
  })

  it("what a page shows about who is signed in comes from the verified token, not the cookie's copy of the user", async () => {
    const session = await signIn(s)
    await me(s, cookieOf(session))
    const edited = { ...session, user: { ...session.user, id: randomUUID(), email: 'mallory@example.com', user_metadata: { display_name: 'Mallory' } } }
    const { result } = await renderPage(s.withSession({ protected: true }), '/', cookieOf(edited))
    expect(result.props?.initialSession?.user.id).toBe(session.user.id)
    expect(result.props?.initialSession?.user.email).toBe(session.user.email)
    expect(result.props?.initialSession?.user.user_metadata).toEqual(session.user.user_metadata)
    expect(result.props?.initialSession?.user.user_metadata).not.toHaveProperty('display_name')
    expect(await me(s, cookieOf(edited))).toMatchObject({ status: 200, id: session.user.id, email: session.user.email })
  })

  it('a token verified before is still refreshed when its session is due (auth-js refreshes within 90 s of expiry)', async () => {
    const session = await signIn(s)
    expect((await me(s, cookieOf(session))).status).toBe(200) // verified: known to this process from now on
    const due = { ...session, expires_at: Math.floor(Date.now() / 1000) + 30 }
    const answer = await me(s, cookieOf(due))
    expect(answer).toMatchObject({ status: 200, id: session.user.id })
    // refreshed through the refresh token: the new session goes back in the cookie
    expect(answer.setCookies.some((line) => line.startsWith('sb-127-auth-token'))).toBe(true)
    // the same token with its session far from expiry: taken as verified, nothing written
    expect((await me(s, cookieOf(session))).setCookies).toEqual([])
  })

  it('refuses a token signed by a key the auth server does not publish, and a tampered one', async () => {
    const session = await signIn(s)
    const other = await signIn(s)
    const { privateKey } = await generateKeyPair('ES256')
    const forged = await new SignJWT(decodeJwt(session.access_token))
      .setProtectedHeader({ alg: 'ES256', kid: randomUUID(), typ: 'JWT' })
      .sign(privateKey)
    // The kid of the real key, a signature of another key.
    const realKid = JSON.parse(Buffer.from(session.access_token.split('.')[0]!, 'base64url').toString('utf8')) as { kid: string }
    const wrongKey = await new SignJWT(decodeJwt(session.access_token))
      .setProtectedHeader({ alg: 'ES256', kid: realKid.kid, typ: 'JWT' })
      .sign(privateKey)
    const swapped = tampered(session.access_token, { sub: other.user.id, email: other.user.email })
    const lifted = tampered(session.access_token, { aal: 'aal2' })
    for (const token of [forged, wrongKey, swapped, lifted]) {
      const cookie = cookieOf({ ...session, access_token: token })
      expect((await me(s, cookie)).status).toBe(401)
      const { result } = await renderPage(s.withSession({ protected: true }), '/notes/x', cookie)
      expect(result).toMatchObject(signInRedirect('/notes/x'))
    }
  })

  it('a session signed out elsewhere: procedures answer until the token expires, the fresh pages refuse it at once', async () => {
    const { client, email, password } = await signedInClient(s.lb)
    const session = (await client.auth.getSession()).data.session!
    const cookie = cookieOf(session)
    expect((await me(s, cookie)).status).toBe(200)
    for (const [page, path] of [
      [s.securityPage, '/settings/security'],
      [s.accountPage, '/settings/account'],
    ] as const)
      expect((await renderPage(page, path, cookie)).result.props?.initialSession?.user.id).toBe(session.user.id)

    // "Sign out other sessions" from a second sign-in of the same user.
    const second = anonClient(s.lb)
    expect((await second.auth.signInWithPassword({ email, password })).error).toBeNull()
    expect((await second.auth.signOut({ scope: 'others' })).error).toBeNull()

    // The window ADR 031 describes: the access token stays valid for reading what it could read until `exp`.
    expect(await me(s, cookie)).toMatchObject({ status: 200, id: session.user.id })
    // Where freshness matters, the auth server is asked and the session is gone.
    const usersBefore = userCalls(s)
    expect((await renderPage(s.securityPage, '/settings/security', cookie)).result).toMatchObject(signInRedirect('/settings/security'))
    expect((await renderPage(s.accountPage, '/settings/account', cookie)).result).toMatchObject(signInRedirect('/settings/account'))
    expect((await renderPage(s.mfaPage, '/mfa', cookie)).result).toMatchObject(signInRedirect('/mfa'))
    expect(userCalls(s) - usersBefore).toBe(3)
  })

  it('an aal1 token of a user who has just enrolled a factor is sent to /mfa, though the last one was let through', async () => {
    const { client, email, password } = await signedInClient(s.lb)
    const first = (await client.auth.getSession()).data.session!
    expect((await me(s, cookieOf(first))).status).toBe(200)
    const enrolled = await client.auth.mfa.enroll({ factorType: 'totp' })
    expect(enrolled.error).toBeNull()
    const verified = await client.auth.mfa.challengeAndVerify({ factorId: enrolled.data!.id, code: totpCode(enrolled.data!.totp!.secret) })
    expect(verified.error).toBeNull()
    const aal2 = (await client.auth.getSession()).data.session!
    expect((await me(s, cookieOf(aal2))).status).toBe(200)

    const again = anonClient(s.lb)
    expect((await again.auth.signInWithPassword({ email, password })).error).toBeNull()
    const aal1 = (await again.auth.getSession()).data.session!
    const refused = await realFetch(`${s.webUrl}/api/trpc/auth.me`, { headers: { cookie: cookieOf(aal1) } })
    expect(refused.status).toBe(403)
    expect(JSON.stringify(await refused.json())).toContain('"secondFactorRequired":true')
    expect((await renderPage(s.withSession({ protected: true }), '/notes/x', cookieOf(aal1))).result).toMatchObject({
      redirect: { destination: `/mfa?next=${encodeURIComponent('/notes/x')}` },
    })
  })

  it('a deleted user: the fresh pages refuse at once', async () => {
    const session = await signIn(s)
    const cookie = cookieOf(session)
    expect((await me(s, cookie)).status).toBe(200)
    expect((await serviceClient(s.lb).auth.admin.deleteUser(session.user.id)).error).toBeNull()
    expect((await renderPage(s.securityPage, '/settings/security', cookie)).result).toMatchObject(signInRedirect('/settings/security'))
  })
})

describe('HS256 sessions (a project on the legacy secret): verified by the auth server', { timeout: 30_000 }, () => {
  let s: Stack
  beforeAll(async () => {
    s = await stack('hs256')
  }, 120_000)

  it('a protected procedure and a protected page work, each with one /auth/v1/user call', async () => {
    const session = await signIn(s)
    expect(JSON.parse(Buffer.from(session.access_token.split('.')[0]!, 'base64url').toString('utf8'))).toMatchObject({ alg: 'HS256' })
    const cookie = cookieOf(session)
    const before = userCalls(s)
    expect(await me(s, cookie)).toMatchObject({ status: 200, id: session.user.id, email: session.user.email })
    const { result } = await renderPage(s.withSession({ protected: true }), '/notes/x', cookie)
    expect(result.props?.initialSession?.user).toMatchObject({ id: session.user.id, email: session.user.email })
    expect(userCalls(s) - before).toBe(2)
  })

  it('refuses a tampered HS256 token', async () => {
    const session = await signIn(s)
    const other = await signIn(s)
    const cookie = cookieOf({ ...session, access_token: tampered(session.access_token, { sub: other.user.id }) })
    expect((await me(s, cookie)).status).toBe(401)
    expect((await renderPage(s.withSession({ protected: true }), '/notes/x', cookie)).result).toMatchObject(signInRedirect('/notes/x'))
  })

  it('past its address budget, a caller with a forged session is refused before the auth server is asked (no /auth/v1/user per request)', async () => {
    const session = await signIn(s)
    const forged = cookieOf({ ...session, access_token: tampered(session.access_token, { sub: randomUUID() }) })
    const before = userCalls(s)
    const statuses: number[] = []
    for (let i = 0; i < 12; i++) statuses.push((await me(s, forged)).status)
    // the budget of 6 calls (one spent by the test above) answers 401 five times, then 429 without work
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429, 429, 429])
    expect(userCalls(s) - before).toBe(5)
  })
})

describe('expired access tokens (a 2-second token lifetime)', { timeout: 30_000 }, () => {
  let s: Stack
  beforeAll(async () => {
    s = await stack('short-lived')
  }, 120_000)

  it('are refreshed through the cookie: the call works and new cookies are set', async () => {
    const session = await signIn(s)
    // Another server's key set than the first stack's, under the same storage key: an unknown kid, fetched again.
    expect((await me(s, cookieOf(session))).status).toBe(200)
    await sleep(2500)
    const before = userCalls(s)
    const res = await me(s, cookieOf(session))
    expect(res).toMatchObject({ status: 200, id: session.user.id })
    const written = res.setCookies.find((c) => c.startsWith('sb-127-auth-token='))
    expect(written).toBeDefined()
    const renewed = JSON.parse(Buffer.from(written!.split(';')[0]!.slice('sb-127-auth-token=base64-'.length), 'base64url').toString('utf8')) as Session
    expect(renewed.access_token).not.toBe(session.access_token)
    expect(renewed.refresh_token).not.toBe(session.refresh_token)
    // A new aal1 token: the auth server is asked once whether its user must pass /mfa.
    expect(userCalls(s) - before).toBe(1)

    await sleep(2500)
    const page = await renderPage(s.withSession({ protected: true }), '/notes/x', cookieOf(renewed))
    expect(page.result.props?.initialSession?.user.id).toBe(session.user.id)
    expect(page.setCookies.some((c) => c.startsWith('sb-127-auth-token='))).toBe(true)
  })

  it('are refused when they cannot be refreshed, also when the cookie claims they have not expired', async () => {
    const session = await signIn(s)
    await sleep(2500)
    const deadRefresh = cookieOf({ ...session, refresh_token: 'not-a-refresh-token' })
    const refused = await me(s, deadRefresh)
    expect(refused.status).toBe(401)
    // The dead session's cookie is cleared.
    expect(refused.setCookies.some((c) => /^sb-127-auth-token=;/.test(c) || /Max-Age=0/i.test(c))).toBe(true)
    expect((await renderPage(s.withSession({ protected: true }), '/notes/x', deadRefresh)).result).toMatchObject(signInRedirect('/notes/x'))
    // expires_at is the cookie's word; the token's own exp decides.
    const lying = cookieOf({ ...session, refresh_token: 'not-a-refresh-token', expires_at: Math.floor(Date.now() / 1000) + 3600 })
    expect((await me(s, lying)).status).toBe(401)
    expect((await renderPage(s.withSession({ protected: true }), '/notes/x', lying)).result).toMatchObject(signInRedirect('/notes/x'))
  })
})

describe('the backend out of reach', { timeout: 30_000 }, () => {
  it('a protected call that reads the database answers SERVICE_UNAVAILABLE in one attempt, not after retries', async () => {
    const s = await stack('stopped')
    const session = await signIn(s)
    const cookie = cookieOf(session)
    const list = `${s.webUrl}/api/trpc/notes.list?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: { json: { sort: 'updated_at', page: 1, pageSize: 20 } } }))}`
    await realFetch(list, { headers: { cookie } }) // the token is verified and known
    await s.lb.stop()
    s.stopped = true
    const started = Date.now()
    const res = await realFetch(list, { headers: { cookie } })
    expect(res.status).toBe(503)
    expect(await res.text()).toContain("Can't reach the server")
    // supabase-js would retry the read three times (≈ 7 s); the browser's query layer retries instead.
    expect(Date.now() - started).toBeLessThan(2000)
    // a session due for refresh (its token within 90 s of expiry): auth-js would retry the refresh grant for ≈ 25 s
    const due = cookieOf({ ...session, expires_at: Math.floor(Date.now() / 1000) + 30 })
    const dueStarted = Date.now()
    const dueRes = await realFetch(list, { headers: { cookie: due } })
    expect(dueRes.status).toBe(503)
    expect(await dueRes.text()).toContain("Can't reach the server")
    expect(Date.now() - dueStarted).toBeLessThan(4000)
  }, 120_000)
})
