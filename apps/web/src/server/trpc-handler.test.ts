import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

import { TRPCError } from '@trpc/server'
import { createHTTPHandler } from '@trpc/server/adapters/standalone'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'

import { atBasePath, createApiHandler } from './trpc-handler'
import { createInnerContext, createTRPCRouter, publicProcedure, RetryAfter } from './trpc'

/** Procedures for every kind of answer: data with Dates and Sets, each kind of error, a refusal with Retry-After. */
const probeRouter = createTRPCRouter({
  echo: publicProcedure.input(z.object({ when: z.date(), n: z.number() }).optional()).query(({ input }) => ({
    when: input?.when ?? new Date(0),
    n: input?.n ?? 0,
    tags: new Set(['a', 'b']),
    nested: { list: [1, 'two', null, true] },
  })),
  plain: publicProcedure.query(() => ({ ok: true, at: new Date('2026-11-26T10:00:00.000Z') })),
  forbidden: publicProcedure.query(() => {
    throw new TRPCError({ code: 'FORBIDDEN', message: 'Not yours.' })
  }),
  boom: publicProcedure.query(() => {
    throw new Error('kaboom')
  }),
  limited: publicProcedure.query(() => {
    throw new TRPCError({ code: 'TOO_MANY_REQUESTS', message: 'Slow down.', cause: new RetryAfter(7) })
  }),
  streamy: publicProcedure.query(() => ({ later: Promise.resolve(1) })),
  write: publicProcedure.input(z.object({ text: z.string() })).mutation(({ input }) => ({ wrote: input.text })),
})

type Seen = { code: string; path: string | undefined }[]

const options = (seen: Seen) => ({
  router: probeRouter,
  createContext: () => createInnerContext(),
  maxBatchSize: 3,
  responseMeta({ errors }: { errors: TRPCError[] }) {
    const wait = Math.max(0, ...errors.map((error) => (error.cause instanceof RetryAfter ? error.cause.seconds : 0)))
    return wait > 0 ? { headers: { 'Retry-After': String(wait) } } : {}
  },
  onError({ error, path }: { error: TRPCError; path: string | undefined }) {
    seen.push({ code: error.code, path })
  },
})

interface Answer {
  status: number
  headers: IncomingMessage['headers']
  body: string
}

function send(base: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: init.method ?? 'GET', headers: init.headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(init.body)
  })
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; base: string }> {
  const server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

/** The body with error stacks left out (tRPC sends them outside production, and they name the files they passed). */
function withoutStacks(body: string): string {
  const strip = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(strip)
      : typeof value === 'object' && value !== null
        ? Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'stack').map(([key, v]) => [key, strip(v)]))
        : value
  return body
    .split('\n')
    .map((line) => (line.trim() === '' ? line : JSON.stringify(strip(JSON.parse(line)))))
    .join('\n')
}

const input = (value: unknown) => encodeURIComponent(JSON.stringify(value))
const when = '2026-11-26T09:30:00.000Z'
const echoInput = { json: { when, n: 2 }, meta: { values: { when: ['Date'] } } }

describe("the API handler answers as tRPC's own adapter does", () => {
  const oursSeen: Seen = []
  const theirsSeen: Seen = []
  let ours: { server: Server; base: string }
  let theirs: { server: Server; base: string }

  beforeAll(async () => {
    ours = await listen(atBasePath(createApiHandler(options(oursSeen)), '/api/trpc/'))
    theirs = await listen(createHTTPHandler({ ...options(theirsSeen), basePath: '/api/trpc/' }))
  })
  afterAll(async () => {
    for (const { server } of [ours, theirs]) await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  const cases: [string, string, { method?: string; headers?: Record<string, string>; body?: string }?][] = [
    ['a batch of two queries, Dates in and out, a Set out', `/api/trpc/echo,plain?batch=1&input=${input({ 0: echoInput })}`],
    ['a query without input', '/api/trpc/plain?batch=1'],
    ['a query with an empty input object', `/api/trpc/plain?batch=1&input=${input({})}`],
    ['one query refused, one answered (207)', `/api/trpc/forbidden,plain?batch=1`],
    ['a procedure that throws an Error (500)', '/api/trpc/boom?batch=1'],
    ['a refusal with Retry-After (429)', '/api/trpc/limited,plain?batch=1'],
    ['input the procedure refuses (400, zod)', `/api/trpc/echo?batch=1&input=${input({ 0: { json: { when: 'yesterday', n: 'x' } } })}`],
    ['a stream-like answer in a plain batch (415)', '/api/trpc/streamy?batch=1'],
    ['an unknown procedure (404)', '/api/trpc/plain,nope?batch=1'],
    ['a path of the prototype (404)', '/api/trpc/__proto__?batch=1'],
    ['a mutation asked for with GET (405)', `/api/trpc/write?batch=1&input=${input({ 0: { json: { text: 'x' } } })}`],
    ['more calls than the batch allows (400)', '/api/trpc/plain,plain,plain,plain?batch=1'],
    ['input that is not JSON (400)', '/api/trpc/plain?batch=1&input=%7Bnot-json'],
    ['batch input that is not an object (400)', `/api/trpc/plain?batch=1&input=${input([1])}`],
    ['input the transformer cannot read', `/api/trpc/echo?batch=1&input=${input({ 0: { json: {}, meta: { values: { x: 'nope' } } } })}`],
    ['a call without batching', `/api/trpc/echo?input=${input(echoInput)}`],
    ['a path with bad URL encoding (400)', '/api/trpc/pl%E0%A4ain?batch=1'],
    ['a mutation by POST', '/api/trpc/write?batch=1', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ 0: { json: { text: 'hi' } } }) }],
    ['a POST of a query (405)', '/api/trpc/plain?batch=1', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }],
    ['a batch asked for as JSON lines (streamed)', `/api/trpc/echo,plain?batch=1&input=${input({ 0: echoInput })}`, { headers: { 'trpc-accept': 'application/jsonl' } }],
  ]

  it.each(cases)('%s', async (_name, path, init) => {
    oursSeen.length = 0
    theirsSeen.length = 0
    const [a, b] = await Promise.all([send(ours.base, path, init), send(theirs.base, path, init)])
    expect(a.status).toBe(b.status)
    expect(withoutStacks(a.body)).toBe(withoutStacks(b.body))
    for (const name of ['vary', 'retry-after', 'set-cookie']) expect(a.headers[name], name).toEqual(b.headers[name])
    // the one deliberate difference: an error tRPC labels text/plain (its JSON, in a Response made from a string) is
    // labelled application/json (ADR 150)
    const theirType = b.status >= 400 && b.headers['content-type']?.startsWith('text/plain') ? 'application/json' : b.headers['content-type']
    expect(a.headers['content-type'], 'content-type').toBe(theirType)
    expect(oursSeen).toEqual(theirsSeen)
    if (init?.headers?.['trpc-accept']) {
      expect(a.headers['transfer-encoding']).toBe('chunked')
    } else {
      // the difference: one complete answer with its length, not a chunked stream
      expect(a.headers['transfer-encoding']).toBeUndefined()
      expect(a.headers['content-length']).toBe(String(Buffer.byteLength(a.body)))
    }
  })

  it('answers a request whose context cannot be made as tRPC does (an error on every call)', async () => {
    const failing = { ...options([]), createContext: (): never => {
      throw new TRPCError({ code: 'UNAUTHORIZED', message: 'No context.' })
    } }
    const a = await listen(atBasePath(createApiHandler(failing), '/api/trpc/'))
    const b = await listen(createHTTPHandler({ ...failing, basePath: '/api/trpc/' }))
    try {
      const [ra, rb] = await Promise.all([send(a.base, '/api/trpc/plain,echo?batch=1'), send(b.base, '/api/trpc/plain,echo?batch=1')])
      expect(ra.status).toBe(401)
      expect([ra.status, withoutStacks(ra.body)]).toEqual([rb.status, withoutStacks(rb.body)])
    } finally {
      for (const { server } of [a, b]) await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it('keeps the cookies the context set (a refreshed session) beside those of responseMeta, on both paths', async () => {
    const handler = createApiHandler({
      router: probeRouter,
      createContext: ({ res }) => {
        res.setHeader('set-cookie', ['session=refreshed; Path=/'])
        return createInnerContext()
      },
      responseMeta: () => ({ headers: { 'set-cookie': 'seen=1; Path=/' } }),
    })
    const server = await listen(atBasePath(handler, '/api/trpc/'))
    try {
      for (const path of ['/api/trpc/plain?batch=1', '/api/trpc/plain']) {
        const answer = await send(server.base, path)
        expect(answer.status, path).toBe(200)
        expect(answer.headers['set-cookie'], path).toEqual(['session=refreshed; Path=/', 'seen=1; Path=/'])
      }
    } finally {
      await new Promise<void>((resolve) => server.server.close(() => resolve()))
    }
  })
})

describe("the API handler's own answers (beyond tRPC's adapter)", () => {
  const seen: Seen = []
  let ours: { server: Server; base: string }
  beforeAll(async () => {
    ours = await listen(atBasePath(createApiHandler(options(seen)), '/api/trpc/'))
  })
  afterAll(async () => {
    await new Promise<void>((resolve) => ours.server.close(() => resolve()))
  })

  const json = { 'content-type': 'application/json' }
  const errorOf = (answer: Answer) => (JSON.parse(answer.body) as { error: { json: { message: string; data: { code: string; httpStatus: number } } } }).error.json
  const nested = (depth: number, open = '[', close = ']') => `${open.repeat(depth)}${close.repeat(depth)}`

  it.each([
    ['POST, arrays 10,000 deep', '/api/trpc/write', { method: 'POST', headers: json, body: `{"json":${nested(10_000)}}` }],
    ['POST, objects 10,000 deep', '/api/trpc/write', { method: 'POST', headers: json, body: `{"json":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}` }],
    ['POST batch, arrays 100,000 deep', '/api/trpc/write?batch=1', { method: 'POST', headers: json, body: `{"0":{"json":${nested(100_000)}}}` }],
    // (Node's default head limit, 16 KiB, bounds a URL here; the web server takes 64 KiB)
    ['GET, arrays 2,000 deep', `/api/trpc/echo?input=${encodeURIComponent(`{"json":${nested(2_000)}}`)}`, undefined],
    ['GET batch, arrays 2,000 deep', `/api/trpc/echo,plain?batch=1&input=${encodeURIComponent(`{"0":{"json":${nested(2_000)}}}`)}`, undefined],
  ] as const)('refuses input nested too deeply with 400 BAD_REQUEST and a readable message: %s', async (_name, path, init) => {
    seen.length = 0
    const answer = await send(ours.base, path, init)
    expect(answer.status).toBe(400)
    const error = errorOf(answer)
    expect(error.data.code).toBe('BAD_REQUEST')
    expect(error.message).toBe('The input is nested too deeply (more than 100 levels of arrays and objects).')
    expect(seen.map((s) => s.code)).not.toContain('INTERNAL_SERVER_ERROR')
  })

  it.each([
    ['a body that is not JSON (415)', '/api/trpc/write', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' }, 'UNSUPPORTED_MEDIA_TYPE'],
    ['a form post (415)', '/api/trpc/write', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'text=hi' }, 'UNSUPPORTED_MEDIA_TYPE'],
    ['a body that is broken JSON (400)', '/api/trpc/write', { method: 'POST', headers: json, body: '{"json":' }, 'BAD_REQUEST'],
    ['a GET input that is broken JSON (400)', `/api/trpc/echo?input=${encodeURIComponent('{"json":')}`, undefined, 'BAD_REQUEST'],
    ['a batch of too many calls (400)', '/api/trpc/plain,plain,plain,plain?batch=1', undefined, 'BAD_REQUEST'],
    ['a method the API does not take (405)', '/api/trpc/write', { method: 'PUT', headers: json, body: '{}' }, 'METHOD_NOT_SUPPORTED'],
    ['a body over 1 MiB (413)', '/api/trpc/write', { method: 'POST', headers: json, body: JSON.stringify({ json: { text: 'y'.repeat(1024 * 1024) } }) }, 'PAYLOAD_TOO_LARGE'],
  ] as const)('labels its error for %s as JSON (application/json), in tRPC\'s error shape', async (_name, path, init, code) => {
    const answer = await send(ours.base, path, init)
    // (text/plain before: a client that reads the body by its type, curl | jq, got a string, not tRPC's error)
    expect(answer.headers['content-type']).toMatch(/^application\/json\b/)
    const body = JSON.parse(answer.body) as unknown
    const error = (Array.isArray(body) ? body[0] : body) as { error: { json: { message: string; data: { code: string; httpStatus: number } } } }
    expect(error.error.json.data.code).toBe(code)
    expect(error.error.json.data.httpStatus).toBe(answer.status)
  })

  it('still takes input nested as deep as the limit', async () => {
    // 100 levels in all: the batch object, the call's { json }, the input object, then arrays inside a string field
    const answer = await send(ours.base, '/api/trpc/write?batch=1', { method: 'POST', headers: json, body: `{"0":{"json":{"text":"${nested(200)}"}}}` })
    expect(answer.status, answer.body).toBe(200)
    const deepAsAllowed = `{"0":{"json":${nested(98)}}}`
    const refused = await send(ours.base, '/api/trpc/write?batch=1', { method: 'POST', headers: json, body: deepAsAllowed })
    // within the limit: tRPC's own answer (the input is not what `write` takes), not the depth refusal
    expect(refused.status).toBe(400)
    expect(JSON.stringify(JSON.parse(refused.body))).not.toMatch(/nested too deeply/)
  })

  it.each(['null', '7', '"text"', '[]'])('refuses a POST body of %s with 400 and a readable message', async (body) => {
    const answer = await send(ours.base, '/api/trpc/write', { method: 'POST', headers: json, body })
    expect(answer.status).toBe(400)
    const error = errorOf(answer)
    expect(error.data.code).toBe('BAD_REQUEST')
    expect(error.message).toBe('The input must be a JSON object as the tRPC client sends it: {"json": …}.')
  })

  it('refuses a body over 1 MiB with 413', async () => {
    const answer = await send(ours.base, '/api/trpc/write', { method: 'POST', headers: json, body: JSON.stringify({ json: { text: 'y'.repeat(1024 * 1024) } }) })
    expect(answer.status).toBe(413)
    expect(errorOf(answer).data.code).toBe('PAYLOAD_TOO_LARGE')
  })

  it.each([
    ['PUT', '/api/trpc/write', 'POST'],
    ['DELETE', '/api/trpc/write', 'POST'],
    ['OPTIONS', '/api/trpc/write', 'POST'],
    ['PUT', '/api/trpc/echo,plain?batch=1', 'GET, HEAD'],
    ['PATCH', '/api/trpc/nope', 'GET, HEAD, POST'],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow) => {
    // (Node's client frames no body for DELETE and OPTIONS)
    const answer = await send(ours.base, path, method === 'PUT' || method === 'PATCH' ? { method, headers: json, body: '{}' } : { method })
    expect(answer.status).toBe(405)
    expect(answer.headers.allow).toBe(allow)
    expect(errorOf(answer).data.code).toBe('METHOD_NOT_SUPPORTED')
  })

  it.each([
    ['a batch of queries', `/api/trpc/echo,plain?batch=1&input=${input({ 0: echoInput })}`],
    ['a single query', '/api/trpc/plain'],
    ['a refused query (403)', '/api/trpc/forbidden?batch=1'],
    ['a query that throws (500)', '/api/trpc/boom'],
    ['a mutation (405)', '/api/trpc/write'],
    ['an unknown procedure (404)', '/api/trpc/nope'],
  ])('answers HEAD as GET without the body (RFC 9110 §9.3.2): %s', async (_name, path) => {
    const get = await send(ours.base, path)
    const head = await send(ours.base, path, { method: 'HEAD' })
    expect(head.status).toBe(get.status)
    expect(head.body).toBe('')
    for (const name of ['content-type', 'content-length', 'cache-control', 'allow', 'vary']) expect(head.headers[name], name).toEqual(get.headers[name])
  })

  it("names the allowed methods on tRPC's own 405 (a query by POST, a mutation by GET)", async () => {
    const post = await send(ours.base, '/api/trpc/plain', { method: 'POST', headers: json, body: '{}' })
    expect([post.status, post.headers.allow]).toEqual([405, 'GET, HEAD'])
    const get = await send(ours.base, '/api/trpc/write')
    expect([get.status, get.headers.allow]).toEqual([405, 'POST'])
  })

  it.each([
    ['a batch of queries (fast path)', '/api/trpc/echo,plain?batch=1', undefined],
    ['a single query', '/api/trpc/plain', undefined],
    ['an error', '/api/trpc/forbidden?batch=1', undefined],
    ['a mutation', '/api/trpc/write', { method: 'POST', headers: json, body: JSON.stringify({ json: { text: 'x' } }) }],
    ['a refusal before tRPC', '/api/trpc/write', { method: 'PUT' }],
  ] as const)('marks every answer Cache-Control: private, no-store: %s', async (_name, path, init) => {
    const answer = await send(ours.base, path, init)
    expect(answer.headers['cache-control']).toBe('private, no-store')
  })
})
