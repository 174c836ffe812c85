import { createNextApiHandler } from '@trpc/server/adapters/next'

import { MAX_BATCH_CALLS } from '../../../server/request-guards'
import { appRouter } from '../../../server/root'
import { createContext, RetryAfter } from '../../../server/trpc'

export default createNextApiHandler({
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
