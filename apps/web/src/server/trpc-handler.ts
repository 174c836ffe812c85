/**
 * The HTTP handler behind `/api/trpc` (docs/decisions/052-api-handler-fast-path.md): tRPC's own request resolution
 * (`resolveResponse` from `@trpc/server/http`, the function tRPC's adapters are built on, and the node adapter's
 * `incomingMessageToRequest`), with a fast path for the browser's usual request — a GET batch of queries — that
 * calls the procedures as `resolveResponse` does without a web `Request` and `Response` around them. Complete
 * answers go out in one write with their Content-Length; streamed ones (a batch asked for as JSON lines,
 * subscriptions; the app uses neither) chunk by chunk.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

import {
  getErrorShape,
  getTRPCErrorFromUnknown,
  transformTRPCResponse,
  type AnyTRPCProcedure,
  type AnyTRPCRouter,
  TRPCError,
} from '@trpc/server'
import { incomingMessageToRequest } from '@trpc/server/adapters/node-http'
import { getHTTPStatusCode, resolveResponse } from '@trpc/server/http'

import { appendSetCookie } from '../lib/supabase/server'
import { jsonNestingExceeds, MAX_BODY_BYTES, MAX_INPUT_DEPTH } from './request-guards'

type ResolveOptions<TRouter extends AnyTRPCRouter> = Parameters<typeof resolveResponse<TRouter>>[0]

export interface ApiHandlerOptions<TRouter extends AnyTRPCRouter, TContext> {
  router: TRouter
  /** The request's context, from the Node request and response (as the node adapters call it). */
  createContext: (opts: { req: IncomingMessage; res: ServerResponse }) => TContext | Promise<TContext>
  maxBatchSize?: number
  responseMeta?: ResolveOptions<TRouter>['responseMeta']
  onError?: (opts: { error: TRPCError; path: string | undefined }) => void
}

/** Writes tRPC's answer to the Node response: complete bodies in one write, streams as they come. */
export async function writeAnswer(response: Response, res: ServerResponse, signal: AbortSignal): Promise<void> {
  if (res.statusCode === 200) res.statusCode = response.status
  for (const [name, value] of response.headers) {
    if (name !== 'set-cookie') res.setHeader(name, value)
  }
  // An error tRPC answers before it has read the request (an unsupported content type: 415; too many calls: 400) is
  // its JSON error shape in a Response made from a string, which the Fetch API labels text/plain: say it is JSON.
  if (res.statusCode >= 400 && response.headers.get('content-type')?.startsWith('text/plain')) res.setHeader('content-type', 'application/json')
  appendSetCookie(res, response.headers.getSetCookie())
  if (!response.body) {
    res.end()
    return
  }
  const streamed = response.headers.get('transfer-encoding') === 'chunked' || response.headers.get('content-type') === 'text/event-stream'
  if (!streamed) {
    const body = Buffer.from(await response.arrayBuffer())
    res.setHeader('content-length', body.byteLength)
    res.end(body)
    return
  }
  const reader = response.body.getReader()
  const stop = () => void reader.cancel().catch(() => undefined)
  signal.addEventListener('abort', stop, { once: true })
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done || res.destroyed) break
      if (!res.write(value)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve))
    }
  } finally {
    signal.removeEventListener('abort', stop)
    res.end()
  }
}

/** What the common request asks for: GET, batched, every path an existing query, the inputs one JSON object. */
interface QueryBatch {
  paths: string[]
  procedures: AnyTRPCProcedure[]
  /** Each call's input as the transformer gave it back (undefined: none sent). */
  inputs: unknown[]
}

/**
 * The request as a batch of queries the fast path may answer, or null for tRPC's own resolution: anything else — a
 * POST, an unbatched or streamed call (`trpc-accept`), connection params, an unknown path or a mutation, too many
 * calls, input that is not a JSON object or that the transformer refuses — goes to `resolveResponse`, which answers
 * it (errors included) exactly as tRPC does. Nothing has run yet when this returns.
 */
function queryBatchOf(router: AnyTRPCRouter, req: IncomingMessage, url: URL, path: string, maxBatchSize: number | undefined): QueryBatch | null {
  if (req.method !== 'GET' || url.searchParams.get('batch') !== '1') return null
  if (req.headers['trpc-accept'] !== undefined || url.searchParams.has('connectionParams')) return null
  let decoded: string
  try {
    decoded = decodeURIComponent(path)
  } catch {
    return null
  }
  const paths = decoded.split(',')
  if (maxBatchSize !== undefined && paths.length > maxBatchSize) return null
  const all = router._def.procedures as Record<string, AnyTRPCProcedure | undefined>
  const procedures: AnyTRPCProcedure[] = []
  for (const procedurePath of paths) {
    const procedure = Object.hasOwn(all, procedurePath) ? all[procedurePath] : undefined
    if (typeof procedure !== 'function' || procedure._def.type !== 'query') return null
    procedures.push(procedure)
  }
  const raw = url.searchParams.get('input')
  let sent: unknown = {}
  if (raw) {
    try {
      sent = JSON.parse(raw)
    } catch {
      return null
    }
  }
  if (typeof sent !== 'object' || sent === null || Array.isArray(sent)) return null
  const transformer = router._def._config.transformer
  const inputs: unknown[] = []
  try {
    for (const [index] of paths.entries()) {
      const input = (sent as Record<string, unknown>)[index]
      inputs.push(input === undefined ? undefined : transformer.input.deserialize(input))
    }
  } catch {
    return null
  }
  return { paths, procedures, inputs }
}

/**
 * A Node request handler for the procedures of `router` at `path` (the procedure path(s) after `/api/trpc/`, as the
 * Next route's `[trpc]` segment gives it). Never rejects: a failure outside the procedures (a URL that cannot be
 * parsed, an answer that cannot be written) is answered as tRPC's adapters answer it.
 *
 * The browser's usual request — a batch of queries — is answered on a fast path that calls the procedures as
 * `resolveResponse` does (same context, same inputs, same error shapes, statuses, `responseMeta` and `onError`) but
 * without building a web `Request` and `Response` around it (≈ 1 ms of CPU per request on the bench machine, ADR 052); every other
 * request, and every request the fast path is not sure of, takes `resolveResponse` itself. Their answers are
 * compared byte for byte in trpc-handler.test.ts.
 */
export function createApiHandler<TRouter extends AnyTRPCRouter, TContext>(opts: ApiHandlerOptions<TRouter, TContext>) {
  const config = opts.router._def._config
  const answerError = (res: ServerResponse, cause: unknown, headers: Record<string, string> = {}) => {
    const error = getTRPCErrorFromUnknown(cause)
    opts.onError?.({ error, path: undefined })
    if (res.headersSent) {
      res.destroy()
      return
    }
    const shape = getErrorShape({ config, error, type: 'unknown', path: undefined, input: undefined, ctx: undefined })
    sendJson(res, shape.data.httpStatus, headers, JSON.stringify(transformTRPCResponse(config, { error: shape })))
  }

  /**
   * Refuses, before tRPC parses anything, what no procedure could take: a method other than GET, HEAD and POST
   * (405 with `Allow`), input nested deeper than MAX_INPUT_DEPTH (400), a JSON body over MAX_BODY_BYTES (413). A
   * JSON body is read here, checked, and handed to tRPC as text (`req.body`). True when it answered.
   */
  const refused = async (req: IncomingMessage, res: ServerResponse, url: URL, path: string): Promise<boolean> => {
    const method = req.method ?? 'GET'
    if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
      const allow = allowedMethods(opts.router, path)
      answerError(res, new TRPCError({ code: 'METHOD_NOT_SUPPORTED', message: `${method} is not supported here: use ${allow.replace(/, (?=[^,]*$)/, ' or ')}.` }), { allow })
      return true
    }
    const tooDeep = () => new TRPCError({ code: 'BAD_REQUEST', message: `The input is nested too deeply (more than ${MAX_INPUT_DEPTH} levels of arrays and objects).` })
    for (const name of ['input', 'connectionParams']) {
      const value = url.searchParams.get(name)
      if (value !== null && jsonNestingExceeds(value, MAX_INPUT_DEPTH)) {
        answerError(res, tooDeep())
        return true
      }
    }
    const parsedAlready = ('body' in req && req.body !== undefined) || req.readableEnded
    if (method !== 'POST' || parsedAlready || !isJsonRequest(req)) return false
    const body = await readBody(req, MAX_BODY_BYTES)
    if (body === null) {
      res.destroy() // the client went away
      return true
    }
    if (body === TOO_LARGE) {
      answerError(res, new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `The request body is larger than the API accepts (${MAX_BODY_BYTES / 1024 / 1024} MB).` }))
      return true
    }
    if (jsonNestingExceeds(body, MAX_INPUT_DEPTH)) {
      answerError(res, tooDeep())
      return true
    }
    Object.assign(req, { body })
    return false
  }

  const viaTrpc = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const request = incomingMessageToRequest(req, res, { maxBodySize: MAX_BODY_BYTES })
    const response = await resolveResponse<TRouter>({
      router: opts.router,
      req: request,
      path,
      error: null,
      maxBatchSize: opts.maxBatchSize,
      responseMeta: opts.responseMeta,
      createContext: async () => (await opts.createContext({ req, res })) as never,
      onError: ({ error, path: procedurePath }) => opts.onError?.({ error, path: procedurePath }),
    })
    // a query asked for by POST, a mutation by GET: say which methods the path takes (RFC 9110 §15.5.6)
    if (response.status === 405) res.setHeader('allow', allowedMethods(opts.router, path))
    await writeAnswer(response, res, request.signal)
  }

  const queries = async (req: IncomingMessage, res: ServerResponse, url: URL, batch: QueryBatch) => {
    let ctx: TContext
    try {
      ctx = await opts.createContext({ req, res })
    } catch {
      // resolveResponse reports a context that cannot be made on every call of the batch: let it (it asks again)
      return false
    }
    const calls = batch.paths.map((path, index) => ({
      path,
      batchIndex: index,
      procedure: batch.procedures[index] ?? null,
      getRawInput: () => Promise.resolve(batch.inputs[index]),
      result: () => batch.inputs[index],
    }))
    const settled = await Promise.all(
      calls.map(async (call): Promise<[TRPCError, undefined] | [null, unknown]> => {
        try {
          const data: unknown = await call.procedure?.({ path: call.path, getRawInput: call.getRawInput, ctx, type: 'query', signal: undefined, batchIndex: call.batchIndex })
          return [null, data]
        } catch (cause) {
          const error = getTRPCErrorFromUnknown(cause)
          opts.onError?.({ error, path: call.path })
          return [error, undefined]
        }
      }),
    )
    const errors: TRPCError[] = []
    const results = settled.map(([settledError, data], index) => {
      // as resolveResponse: a stream-like answer cannot go out in one piece
      const error = settledError ?? (isDataStream(data) ? new TRPCError({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Cannot use stream-like response in non-streaming request - use httpBatchStreamLink' }) : null)
      if (!error) return { result: { data } }
      errors.push(error)
      const call = calls[index]
      return { error: getErrorShape({ config, error, type: 'query', path: call?.path, input: call?.result(), ctx }) }
    })
    const headers: Record<string, string | string[]> = { vary: 'trpc-accept, accept' }
    let status = getHTTPStatusCode(results)
    const meta = opts.responseMeta?.({
      ctx: ctx as never,
      info: { isBatchCall: true, accept: null, calls, type: 'query', connectionParams: null, signal: new AbortController().signal, url },
      paths: batch.paths,
      type: 'query',
      data: results as never,
      errors,
      eagerGeneration: false,
    })
    if (meta?.status) status = meta.status
    for (const [name, value] of meta?.headers instanceof Headers ? meta.headers.entries() : Object.entries(meta?.headers ?? {})) {
      if (name.toLowerCase() === 'set-cookie') appendSetCookie(res, typeof value === 'string' ? [value] : Array.isArray(value) ? value : [])
      else if (typeof value === 'string' || Array.isArray(value)) headers[name.toLowerCase()] = value
    }
    sendJson(res, status, headers, JSON.stringify(transformTRPCResponse(config, results as never)))
    return true
  }

  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    // Answers depend on the session (the cookie) and are never for a cache to keep or share.
    res.setHeader('cache-control', 'private, no-store')
    // HEAD is answered as GET, without the body (RFC 9110 §9.3.2; Node sends none for HEAD): tRPC answered every HEAD
    // 204 without running anything — a query that would be refused (401), fail or not exist, and a mutation, alike.
    if (req.method === 'HEAD') req.method = 'GET'
    try {
      const url = new URL(req.url ?? '/', 'http://localhost')
      if (await refused(req, res, url, path)) return
      const batch = queryBatchOf(opts.router, req, url, path, opts.maxBatchSize)
      if (batch && (await queries(req, res, url, batch))) return
      await viaTrpc(req, res, path)
    } catch (cause) {
      answerError(res, cause)
    }
  }
}

/**
 * The methods the procedure path(s) take, for `Allow`: queries GET (and HEAD, which tRPC answers), mutations POST;
 * all three for a path that names no procedure, or both kinds.
 */
function allowedMethods(router: AnyTRPCRouter, path: string): string {
  let paths: string[]
  try {
    paths = decodeURIComponent(path).split(',')
  } catch {
    paths = []
  }
  const all = router._def.procedures as Record<string, AnyTRPCProcedure | undefined>
  const types = new Set(paths.map((p) => (Object.hasOwn(all, p) ? all[p]?._def.type : undefined)))
  if (types.size === 1 && types.has('mutation')) return 'POST'
  if (types.size === 1 && (types.has('query') || types.has('subscription'))) return 'GET, HEAD'
  return 'GET, HEAD, POST'
}

/** As tRPC: a request whose Content-Type is `application/json` (whatever its parameters). */
function isJsonRequest(req: IncomingMessage): boolean {
  return req.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase() === 'application/json'
}

const TOO_LARGE: unique symbol = Symbol('too large')

/**
 * The request's body as text (UTF-8, a byte order mark dropped as `Request.json()` drops it); TOO_LARGE as soon as
 * it passes `limit` bytes (the rest is read and dropped, so the answer reaches the client); null if the request
 * ends without its body (the client went away).
 */
function readBody(req: IncomingMessage, limit: number): Promise<string | typeof TOO_LARGE | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    const finish = (value: string | typeof TOO_LARGE | null) => {
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone)
      resolve(value)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength
      if (size <= limit) {
        chunks.push(chunk)
        return
      }
      finish(TOO_LARGE)
      req.resume()
    }
    const onEnd = () => finish(new TextDecoder().decode(Buffer.concat(chunks)))
    const onGone = () => finish(null)
    req.on('data', onData).on('end', onEnd).on('error', onGone).on('close', onGone)
  })
}

/** As tRPC's resolveResponse: a (non-array) object that is async iterable, or has a promise or one among its values. */
function isDataStream(value: unknown): boolean {
  const isObject = (v: unknown): v is Record<PropertyKey, unknown> => !!v && !Array.isArray(v) && typeof v === 'object'
  const isAsyncIterable = (v: unknown) => isObject(v) && Symbol.asyncIterator in v
  const isPromise = (v: unknown) =>
    (isObject(v) || typeof v === 'function') && typeof (v as { then?: unknown }).then === 'function' && typeof (v as { catch?: unknown }).catch === 'function'
  if (!isObject(value)) return false
  if (isAsyncIterable(value)) return true
  return Object.values(value).some(isPromise) || Object.values(value).some(isAsyncIterable)
}

/** A complete JSON answer in one write (status, the given headers, content type and length). */
function sendJson(res: ServerResponse, status: number, headers: Record<string, string | string[]>, body: string): void {
  if (res.statusCode === 200) res.statusCode = status
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
  res.setHeader('content-type', 'application/json')
  res.setHeader('content-length', Buffer.byteLength(body))
  res.end(body)
}

/** The longest path an answer of `answerNoApi` repeats in its message (a longer one is cut, with `…`). */
const NO_API_PATH_CHARS = 200

/**
 * Answers a request for a path under `/api/` that is no API (`/api/nope`, `/api/trpc-typo`, `/api/trpc` without a
 * procedure) in the API's own format: tRPC's NOT_FOUND error shape (404, JSON, `private, no-store`), as an unknown
 * procedure gets, for any method. Next answered them with its 404 page, 66 kB of HTML an API client cannot read.
 */
export function answerNoApi(router: AnyTRPCRouter, req: IncomingMessage, res: ServerResponse): void {
  const config = router._def._config
  const target = req.url ?? '/'
  const end = target.search(/[?#]/)
  const path = end < 0 ? target : target.slice(0, end)
  const shown = path.length > NO_API_PATH_CHARS ? `${path.slice(0, NO_API_PATH_CHARS)}…` : path
  const error = new TRPCError({ code: 'NOT_FOUND', message: `There is no API at ${shown}.` })
  const shape = getErrorShape({ config, error, type: 'unknown', path: undefined, input: undefined, ctx: undefined })
  sendJson(res, 404, { 'cache-control': 'private, no-store' }, JSON.stringify(transformTRPCResponse(config, { error: shape })))
}

/**
 * The handler as a plain Node request listener for procedures under `basePath` (the path's rest is the procedure
 * path), for servers without Next's routing: the tests and the notes-list bench.
 */
export function atBasePath(handler: ReturnType<typeof createApiHandler>, basePath: string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    void handler(req, res, new URL(req.url ?? '/', 'http://localhost').pathname.slice(basePath.length))
  }
}
