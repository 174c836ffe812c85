import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client'
import { TRPCError } from '@trpc/server'
import superjson from 'superjson'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { readableApiError } from '../features/auth/second-factor'
import { createApiClient } from '../lib/trpc'
import packageJson from '../../package.json'
import { appRouter, createCaller, type AppRouter } from './root'
import { secondFactorRequiredError } from './second-factor'
import { atBasePath, createApiHandler } from './trpc-handler'
import { RateLimiter } from './request-guards'
import { createInnerContext, createTRPCRouter, publicProcedure } from './trpc'

interface Seen {
  method: string
  url: string
  headers: IncomingMessage['headers']
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

describe('tRPC API over HTTP (real client, real handler)', () => {
  const seen: Seen[] = []
  let server: Server
  let base: string

  beforeAll(async () => {
    const handler = atBasePath(createApiHandler({ router: appRouter, createContext: () => createInnerContext() }), '/api/trpc/')
    server = createServer((req, res) => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers })
      handler(req, res)
    })
    base = await listen(server)
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('batches two queries into one GET with comma-joined paths and keeps Dates as Dates', async () => {
    seen.length = 0
    const client = createApiClient(`${base}/api/trpc`)
    const before = Date.now()
    const [health, config] = await Promise.all([client.system.health.query(), client.system.config.query()])
    expect(seen).toHaveLength(1)
    expect(seen[0]?.method).toBe('GET')
    const url = new URL(seen[0]?.url ?? '', base)
    expect(url.pathname).toBe('/api/trpc/system.health,system.config')
    expect(url.searchParams.get('batch')).toBe('1')
    expect(url.searchParams.has('input')).toBe(true)
    // no custom headers: nothing tRPC-specific is added to the request
    expect(Object.keys(seen[0]?.headers ?? {}).filter((h) => h.startsWith('x-') || h.startsWith('trpc'))).toEqual([])

    expect(health.ok).toBe(true)
    expect(health.time).toBeInstanceOf(Date)
    expect(health.time.getTime()).toBeGreaterThanOrEqual(before - 1)
    expect(health.version).toBe(packageJson.version)
    expect(config).toEqual({ supabaseUrl: 'http://127.0.0.1:54321', backend: 'local' })
  })

  it('sends a mutation as POST with its Date input in the body', async () => {
    seen.length = 0
    const client = createApiClient(`${base}/api/trpc`)
    const clientTime = new Date(Date.now() - 1500)
    const result = await client.system.clockSkew.mutate({ clientTime })
    expect(seen).toHaveLength(1)
    expect(seen[0]?.method).toBe('POST')
    expect(new URL(seen[0]?.url ?? '', base).pathname).toBe('/api/trpc/system.clockSkew')
    expect(result.serverTime).toBeInstanceOf(Date)
    expect(result.skewMs).toBeGreaterThanOrEqual(1500)
    expect(result.skewMs).toBe(result.serverTime.getTime() - clientTime.getTime())
  })

  it('reports invalid input as BAD_REQUEST with the flattened zod issues in data', async () => {
    const client = createApiClient(`${base}/api/trpc`)
    const error = await client.system.clockSkew
      .mutate({ clientTime: 'yesterday' as unknown as Date })
      .then(() => null, (e: unknown) => e)
    expect(error).toBeInstanceOf(TRPCClientError)
    const clientError = error as TRPCClientError<AppRouter>
    expect(clientError.shape?.code).toBe(-32600)
    expect(clientError.data?.code).toBe('BAD_REQUEST')
    expect(clientError.data?.httpStatus).toBe(400)
    expect(clientError.data?.zodError?.fieldErrors.clientTime?.[0]).toMatch(/date/i)
    // the message is for people: the issue's own words, not tRPC's JSON of the issues
    expect(clientError.message).toBe(clientError.data?.zodError?.fieldErrors.clientTime?.[0])
    expect(clientError.message).not.toMatch(/[[{"]/)
  })

  it('marks a refusal that two-factor sign-in would lift with data.secondFactorRequired (and no other error)', async () => {
    const probeRouter = createTRPCRouter({
      secondFactor: publicProcedure.query(() => {
        throw secondFactorRequiredError()
      }),
      otherwise: publicProcedure.query(() => {
        throw new TRPCError({ code: 'FORBIDDEN', message: 'Not yours.' })
      }),
    })
    const server = createServer(atBasePath(createApiHandler({ router: probeRouter, createContext: () => createInnerContext() }), '/api/trpc/'))
    const probeBase = await listen(server)
    try {
      const client = createTRPCClient<typeof probeRouter>({ links: [httpBatchLink({ url: `${probeBase}/api/trpc`, transformer: superjson })] })
      const [needsCode, other] = (await Promise.all([
        client.secondFactor.query().catch((e: unknown) => e),
        client.otherwise.query().catch((e: unknown) => e),
      ])) as TRPCClientError<typeof probeRouter>[]
      expect(needsCode?.data).toMatchObject({ code: 'FORBIDDEN', httpStatus: 403, secondFactorRequired: true })
      expect(needsCode?.message).toBe('Finish two-factor sign-in')
      expect(other?.data).toMatchObject({ code: 'FORBIDDEN', secondFactorRequired: false })
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it('refuses superjson annotations no input needs (tens of thousands of references, a path deeper than any input, a huge BigInt) with 400 before working through them', async () => {
    const post = async (body: unknown) => {
      const res = await fetch(`${base}/api/trpc/system.clockSkew`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      return { status: res.status, body: (await res.json()) as { error: { json: { message: string; data: { code: string } } } } }
    }
    const clientTime = new Date().toISOString()
    const annotated = { values: { clientTime: ['Date'] } }
    for (const [label, body] of [
      // each reference is a walk and a copy: 60,000 of them held the event loop ≈ 1 s for half a megabyte
      ['references', { json: { clientTime }, meta: { ...annotated, referentialEqualities: { clientTime: Array.from({ length: 60_000 }, (_, i) => `x${i}`) } } }],
      ['a deep path', { json: { clientTime }, meta: { values: { clientTime: ['Date'], [`${'a.'.repeat(200_000)}a`]: ['Date'] } } }],
      ['a huge BigInt', { json: { clientTime: '9'.repeat(200_000) }, meta: { values: { clientTime: ['bigint'] } } }],
    ] as const) {
      const { status, body: answer } = await post(body)
      expect([label, status, answer.error.json.data.code]).toEqual([label, 400, 'BAD_REQUEST'])
      expect(answer.error.json.message).toMatch(/^The input has more superjson annotations than the API takes|^The input's superjson annotations/)
    }
    // what the client sends still works
    expect((await post({ json: { clientTime }, meta: annotated })).status).toBe(200)
  })

  it('leaves zodError empty for errors that are not input validation', async () => {
    const client = createApiClient(`${base}/api/trpc`)
    const error = (await (client.system as unknown as { nope: { query: () => Promise<unknown> } }).nope
      .query()
      .catch((e: unknown) => e)) as TRPCClientError<AppRouter>
    expect(error.data?.code).toBe('NOT_FOUND')
    expect(error.data?.httpStatus).toBe(404)
    expect(error.data?.zodError).toBeNull()
  })
})

describe('server-side caller', () => {
  it('runs procedures without HTTP and rejects invalid input as BAD_REQUEST', async () => {
    const caller = createCaller(createInnerContext())
    const health = await caller.system.health()
    expect(health.time).toBeInstanceOf(Date)
    await expect(caller.system.clockSkew({ clientTime: 42 as unknown as Date })).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    })
  })
})

describe('per-caller budgets of signed-out callers', () => {
  /** A caller from `address` against budgets of 2 calls that never refill. */
  const limits = { query: new RateLimiter({ burst: 2, perSecond: 1e-9 }), mutation: null }
  const from = (address: string) => createCaller(createInnerContext({ clientAddress: address, limits })).system
  const spend = async (address: string) => from(address).health().then(() => 'ok', (e: TRPCError) => e.code)

  it('tells addresses apart, and counts an IPv6 client once per /64 (one host holds all of its /64)', async () => {
    expect([await spend('192.0.2.1'), await spend('192.0.2.1'), await spend('192.0.2.1')]).toEqual(['ok', 'ok', 'TOO_MANY_REQUESTS'])
    // another address keeps its own budget: one client cannot spend another's
    expect(await spend('192.0.2.2')).toBe('ok')
    // one IPv6 client may use any address of its /64 (privacy addresses change by the hour, and a host can pick
    // billions): a new one is not a new budget
    expect([await spend('2001:db8:1:2::1'), await spend('2001:db8:1:2:ffff::9')]).toEqual(['ok', 'ok'])
    expect(await spend('2001:0db8:0001:0002:abcd:ef01:2345:6789')).toBe('TOO_MANY_REQUESTS')
    // another /64 is another client
    expect(await spend('2001:db8:1:3::1')).toBe('ok')
  })
})

describe('a response that is not tRPC-shaped', () => {
  let server: Server
  let base: string

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ hello: 'this is some other API' }))
    })
    base = await listen(server)
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('surfaces as tRPC\'s "Unable to transform response from server", which the pages say in words', async () => {
    const client = createApiClient(`${base}/api/trpc`)
    const error = await client.system.health.query().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(TRPCClientError)
    expect((error as Error).message).toBe('Unable to transform response from server')
    // what a toast or the list says: as for a gateway's HTML page, never the client library's sentence
    expect(readableApiError(error as Error)).toBe('The server is not answering properly just now. Try again in a moment.')
    // an error the server did send keeps its own words
    const refused = new TRPCClientError('Title is required', { result: { error: { code: -32600, message: 'Title is required', data: { code: 'BAD_REQUEST' } } } } as never)
    expect(readableApiError(refused)).toBe('Title is required')
  })
})
