/**
 * The API's request handler, as `/api/trpc` runs it (pages/api/trpc/[trpc].ts) and the notes-list bench measures it:
 * the app's router and context, the batch bound and the Retry-After header of refused callers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

import { MAX_BATCH_CALLS } from './request-guards'
import { appRouter } from './root'
import { answerNoApi, createApiHandler } from './trpc-handler'
import { createContext, RetryAfter } from './trpc'

export const apiHandler = createApiHandler({
  router: appRouter,
  createContext,
  // One request does bounded work: a batch of more calls is refused whole with 400 before any of them runs
  // (ADR 014). The client's batch link stays unbounded (spec §7); the app never batches this many.
  maxBatchSize: MAX_BATCH_CALLS,
  responseMeta({ errors }) {
    // A refused caller learns when to come back (RFC 9110 Retry-After), as on the Supabase APIs.
    const waits = errors.map((error) => (error.cause instanceof RetryAfter ? error.cause.seconds : 0))
    const wait = Math.max(0, ...waits)
    return wait > 0 ? { headers: { 'Retry-After': String(wait) } } : {}
  },
  onError({ error, path }) {
    if (error.code === 'INTERNAL_SERVER_ERROR') console.error(`tRPC ${path ?? '<no path>'} failed:`, error)
  },
})

/** The answer to a path under `/api/` that is no API: the API's NOT_FOUND error (pages/api/[[...path]].ts). */
export function noApiHandler(req: IncomingMessage, res: ServerResponse): void {
  answerNoApi(appRouter, req, res)
}
