import type { JwtPayload, Session } from '@supabase/supabase-js'
import { QueryClient } from '@tanstack/react-query'
import superjson, { type SuperJSONResult } from 'superjson'
import { describe, expect, it } from 'vitest'

import { userFromClaims, type VerifiedSession } from '../lib/supabase/server'
import { prefetchQueries, SERVER_QUERY_TIMEOUT_MS } from './prefetch-queries'

function verifiedSession(needsSecondFactor: boolean): VerifiedSession {
  const now = Math.floor(Date.now() / 1000)
  const claims: JwtPayload = {
    iss: 'http://127.0.0.1:54321/auth/v1',
    aud: 'authenticated',
    sub: '6f1c1d3e-0000-4000-8000-000000000001',
    role: 'authenticated',
    aal: 'aal1',
    iat: now,
    exp: now + 3600,
    session_id: '6f1c1d3e-0000-4000-8000-000000000002',
  }
  const user = userFromClaims(claims)
  const session = { access_token: 'not-used', refresh_token: 'not-used', expires_in: 3600, token_type: 'bearer', user } as Session
  return { session, user, claims, verifiedBy: 'signature', needsSecondFactor }
}

describe('prefetchQueries (a page’s server render running its queries)', () => {
  it('returns the answered queries as JSON-safe props that a browser cache reads back with their Dates', async () => {
    const state = await prefetchQueries(verifiedSession(false), (trpc, queryClient) => queryClient.prefetchQuery(trpc.system.health.queryOptions()))
    expect(state).not.toBeNull()
    // What Next sends to the browser: JSON, nothing lost.
    expect(JSON.parse(JSON.stringify(state))).toEqual(state)
    const query = state!.queries[0]!
    expect(query.queryKey).toEqual([['system', 'health'], { type: 'query' }])
    const data = superjson.deserialize<{ ok: boolean; time: Date }>(query.state.data as SuperJSONResult)
    expect(data.ok).toBe(true)
    expect(data.time).toBeInstanceOf(Date)
    // The browser's cache finds it under the key its own useTRPC() builds.
    const browserCache = new QueryClient()
    browserCache.setQueryData(query.queryKey, data)
    expect(browserCache.getQueryCache().get(query.queryHash)?.state.data).toEqual(data)
  })

  it('leaves a refused query out (the browser asks for it itself): here a session that still needs its second factor', async () => {
    const state = await prefetchQueries(verifiedSession(true), (trpc, queryClient) =>
      queryClient.prefetchQuery(trpc.notes.list.queryOptions({ sort: 'updated_at', dir: 'desc', page: 1, pageSize: 20 })),
    )
    expect(state).toBeNull()
  })

  it('gives up after SERVER_QUERY_TIMEOUT_MS and renders without the answer', async () => {
    const started = Date.now()
    const state = await prefetchQueries(verifiedSession(false), (_trpc, queryClient) =>
      queryClient.prefetchQuery({ queryKey: ['slow'], queryFn: () => new Promise(() => {}) }),
    )
    expect(state).toBeNull()
    expect(Date.now() - started).toBeGreaterThanOrEqual(SERVER_QUERY_TIMEOUT_MS - 50)
    expect(Date.now() - started).toBeLessThan(SERVER_QUERY_TIMEOUT_MS + 2000)
  })
})
