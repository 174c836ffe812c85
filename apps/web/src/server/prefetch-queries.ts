import { dehydrate, type DehydratedState } from '@tanstack/react-query'
import { createTRPCOptionsProxy, type TRPCOptionsProxy } from '@trpc/tanstack-react-query'

import { createQueryClient } from '../lib/query-client'
import type { VerifiedSession } from '../lib/supabase/server'
import { fastSuperjson } from './fast-superjson'
import { appRouter, type AppRouter } from './root'
import { createInnerContext } from './trpc'

/** How long a page's server render waits for its queries before it renders without them (the browser then asks). */
export const SERVER_QUERY_TIMEOUT_MS = 2_000

/**
 * Runs a page's queries during its server render, through the procedures themselves (a tRPC options proxy over
 * `appRouter` with a context acting as the request's verified session — no HTTP, no cookie read again), and returns
 * the query cache as JSON-safe props for `withApi` to hydrate: the same query keys the browser's `useTRPC()` builds, the
 * data in superjson's form (Dates stay Dates). Only answered queries are kept: a query that fails or outlasts
 * SERVER_QUERY_TIMEOUT_MS is left out, so the browser fetches it as it would without this (never an error page).
 */
export async function prefetchQueries(
  verified: VerifiedSession,
  prefetch: (trpc: TRPCOptionsProxy<AppRouter>, queryClient: ReturnType<typeof createQueryClient>) => Promise<unknown>,
): Promise<DehydratedState | null> {
  const queryClient = createQueryClient()
  const trpc = createTRPCOptionsProxy<AppRouter>({ router: appRouter, ctx: createInnerContext({ verified }), queryClient })
  let stopTimer = () => {}
  try {
    await Promise.race([
      prefetch(trpc, queryClient),
      new Promise((resolve) => {
        const timer = setTimeout(resolve, SERVER_QUERY_TIMEOUT_MS)
        stopTimer = () => clearTimeout(timer)
      }),
    ])
  } catch {
    return null // the browser fetches as before
  } finally {
    stopTimer()
  }
  const state = dehydrate(queryClient, { serializeData: fastSuperjson.serialize })
  if (state.queries.length === 0) return null
  // Props travel as JSON: drop what JSON cannot carry (undefined fields) before Next checks them.
  return JSON.parse(JSON.stringify(state)) as DehydratedState
}
