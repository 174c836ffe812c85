import { createTRPCClient, httpBatchLink, type TRPCClient } from '@trpc/client'
import { createTRPCContext } from '@trpc/tanstack-react-query'
import superjson from 'superjson'

import type { AppRouter } from '../server/root'

export type { RouterInputs, RouterOutputs } from '../server/root'

/** `TRPCProvider` for _app, `useTRPC()` for `queryOptions` / `mutationOptions` in features. */
export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>()

/** Where the API lives: relative in the browser, absolute when a URL is given (tests, server). */
export const TRPC_PATH = '/api/trpc'

/**
 * The tRPC client: one batched HTTP link with superjson. Queries go as GET with the input in the query
 * string, mutations as POST with the input in the body; calls in the same tick are batched, their paths
 * joined by commas. No custom headers, no URL-length or item-count bound (the spec's "unbounded").
 */
export function createApiClient(url: string = TRPC_PATH): TRPCClient<AppRouter> {
  return createTRPCClient<AppRouter>({
    links: [httpBatchLink({ url, transformer: superjson })],
  })
}
