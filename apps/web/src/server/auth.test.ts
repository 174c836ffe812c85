import type { IncomingMessage, ServerResponse } from 'node:http'

import type { GetServerSidePropsContext } from 'next'
import { describe, expect, it } from 'vitest'

import { appendSetCookie, createServerSupabase, readRequestCookies } from '../lib/supabase/server'
import { createCaller } from './root'
import { createInnerContext } from './trpc'
import { withSession } from './with-session'

type HeaderValue = string | number | string[]

function fakeResponse() {
  const headers = new Map<string, HeaderValue>()
  const res = {
    headersSent: false,
    getHeader: (name: string) => headers.get(name.toLowerCase()),
    setHeader(name: string, value: HeaderValue) {
      headers.set(name.toLowerCase(), value)
      return this
    },
  }
  return { headers, res: res as unknown as Pick<ServerResponse, 'getHeader' | 'setHeader' | 'headersSent'> }
}

function pageContext(resolvedUrl: string, cookie?: string) {
  const { res, headers } = fakeResponse()
  const ctx = {
    req: { headers: cookie ? { cookie } : {} } as IncomingMessage,
    res: res as unknown as ServerResponse,
    resolvedUrl,
    query: {},
  } as unknown as GetServerSidePropsContext
  return { ctx, headers }
}

describe('withSession (getServerSideProps helper)', () => {
  it('sends a signed-out visitor of a protected page to /sign-in with next, never cached', async () => {
    const { ctx, headers } = pageContext('/settings/account?tab=1')
    const result = await withSession({ protected: true })(ctx)
    expect(result).toEqual({ redirect: { destination: '/sign-in?next=%2Fsettings%2Faccount%3Ftab%3D1', permanent: false } })
    expect(headers.get('cache-control')).toMatch(/no-store/)
  })

  it('renders a public page signed out with initialSession null', async () => {
    const { ctx } = pageContext('/')
    expect(await withSession()(ctx)).toEqual({ props: { initialSession: null, guestBannerDismissed: false } })
  })

  it('does not trust a cookie it cannot verify (garbage session cookie → signed out, no crash)', async () => {
    const { ctx } = pageContext('/settings/account', 'sb-127-auth-token=base64-bm90LWpzb24')
    const result = await withSession({ protected: true })(ctx)
    expect(result).toMatchObject({ redirect: { destination: '/sign-in?next=%2Fsettings%2Faccount' } })
  })
})

describe('server Supabase client', () => {
  it('appends Set-Cookie lines to those already on the response', () => {
    const { res, headers } = fakeResponse()
    res.setHeader('Set-Cookie', 'theme=dark')
    appendSetCookie(res, ['a=1; Path=/', 'b=2; Path=/'])
    expect(headers.get('set-cookie')).toEqual(['theme=dark', 'a=1; Path=/', 'b=2; Path=/'])
  })

  it('reads the session cookie of the request under the sb-127-auth-token name', async () => {
    const { res } = fakeResponse()
    const session = { access_token: 'a.b.c', refresh_token: 'r', expires_at: 4102444800, expires_in: 3600, token_type: 'bearer', user: { id: 'u1' } }
    const value = `base64-${Buffer.from(JSON.stringify(session)).toString('base64url')}`
    const supabase = createServerSupabase({ req: { headers: { cookie: `sb-127-auth-token=${value}` } }, res })
    const { data } = await supabase.auth.getSession()
    expect(data.session?.access_token).toBe('a.b.c')
  })
})

describe('the request cookies handed to @supabase/ssr', () => {
  const session = {
    access_token: 'a.b.c',
    refresh_token: 'r',
    expires_at: 4102444800,
    expires_in: 3600,
    token_type: 'bearer',
    user: { id: 'u1', user_metadata: { note: 'ünïcødé '.repeat(600) } },
  }
  const encoded = `base64-${Buffer.from(JSON.stringify(session)).toString('base64url')}`

  it('hands over a session split into chunks (sb-…-auth-token.0, .1, …) decoded, keeping every chunk name', async () => {
    const chunks = [encoded.slice(0, 3180), encoded.slice(3180, 6360), encoded.slice(6360)]
    expect(chunks[2]!.length).toBeGreaterThan(0)
    const header = [...chunks.map((c, i) => `sb-127-auth-token.${i}=${c}`), 'theme=dark'].join('; ')
    const cookies = readRequestCookies(header)
    expect(cookies.map((c) => c.name)).toEqual(['sb-127-auth-token.0', 'sb-127-auth-token.1', 'sb-127-auth-token.2', 'theme'])
    expect(JSON.parse(cookies[0]!.value)).toEqual(session)
    expect(cookies.find((c) => c.name === 'theme')?.value).toBe('dark')

    const { res } = fakeResponse()
    const supabase = createServerSupabase({ req: { headers: { cookie: header } }, res })
    const { data } = await supabase.auth.getSession()
    expect(data.session?.access_token).toBe('a.b.c')
    expect((data.session?.user.user_metadata as { note: string }).note).toBe(session.user.user_metadata.note)
  })

  it('leaves a value that is not base64 JSON as it is (read as no session)', async () => {
    const header = `sb-127-auth-token=base64-${Buffer.from('{"broken').toString('base64url')}`
    expect(readRequestCookies(header)[0]!.value).toBe(header.split('=')[1])
    const { res } = fakeResponse()
    const { data } = await createServerSupabase({ req: { headers: { cookie: header } }, res }).auth.getSession()
    expect(data.session).toBeNull()
  })
})

describe('protectedProcedure', () => {
  it('refuses auth.me with UNAUTHORIZED when there is no verified user', async () => {
    await expect(createCaller(createInnerContext()).auth.me()).rejects.toMatchObject({ code: 'UNAUTHORIZED' })
  })
})

describe('accessTokenAal', () => {
  const token = (claims: object) => `h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`
  it('reads the aal claim, and null when the token has none or is not a JWT', async () => {
    const { accessTokenAal } = await import('../lib/supabase/server')
    expect(accessTokenAal(token({ sub: 'u', aal: 'aal2' }))).toBe('aal2')
    expect(accessTokenAal(token({ sub: 'u' }))).toBeNull()
    expect(accessTokenAal('not-a-jwt')).toBeNull()
    expect(accessTokenAal('a.%%%.c')).toBeNull()
  })
})
