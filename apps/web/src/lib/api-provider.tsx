import { QueryClientProvider, type DehydratedState, type QueryClient } from '@tanstack/react-query'
import type { TRPCClient } from '@trpc/client'
import { useMemo, useState, type ComponentType, type ReactNode } from 'react'
import superjson, { type SuperJSONResult } from 'superjson'

import { tieQueryCacheToSession } from '../features/auth/query-scope'
import type { AppRouter } from '../server/root'
import { setPendingMutations } from './pending-mutations'
import { createQueryClient } from './query-client'
import { createApiClient, TRPCProvider } from './trpc'

interface ApiClients {
  queryClient: QueryClient
  apiClient: TRPCClient<AppRouter>
}

let browserClients: ApiClients | undefined

/**
 * The API clients of this page load. In the browser one pair for the whole visit, shared by every ApiProvider (the
 * page's and the create modal's), so the query cache survives navigation between pages as when the provider sat in
 * _app. On the server a new pair per render (per request): a module-level cache would be shared between users.
 */
function useApiClients(): ApiClients {
  const [clients] = useState<ApiClients>(() => {
    if (typeof window === 'undefined') return { queryClient: createQueryClient(), apiClient: createApiClient() }
    if (!browserClients) {
      const queryClient = createQueryClient()
      queryClient.getMutationCache().subscribe(() => setPendingMutations(queryClient.isMutating()))
      tieQueryCacheToSession(queryClient)
      browserClients = { queryClient, apiClient: createApiClient() }
    }
    return browserClients
  })
  return clients
}

/** Page props of a page whose server render ran its queries (server/prefetch-queries.ts). */
export interface ServerQueriesProps {
  /** The server's query cache for this page, data in superjson's form; absent when it had none to give. */
  serverQueries?: DehydratedState
}

/** How long after a page's props arrived its server-rendered answers count as fresh for the first mount. */
const SERVER_ANSWER_FRESH_MS = 10_000
/** The answers a server render put in the cache: query hash → their `dataUpdatedAt`, and when they arrived here. */
const serverAnswers = new Map<string, { updatedAt: number; at: number }>()

/**
 * Puts a page's server answers into the cache during render, so the page's first render shows them: the answers the
 * cache does not have yet (a cold load, or a visit to a list state not seen before). A query the cache has already
 * keeps its answer and refetches on mount as usual (no update of other components in the middle of this render).
 * What TanStack's HydrationBoundary does for such queries, without its code for promises and mutations.
 */
function hydrateServerAnswers(queryClient: QueryClient, state: DehydratedState | undefined): void {
  for (const query of state?.queries ?? []) {
    if (query.state.status !== 'success' || queryClient.getQueryCache().get(query.queryHash)) continue
    queryClient.setQueryData(query.queryKey, superjson.deserialize(query.state.data as SuperJSONResult), {
      updatedAt: query.state.dataUpdatedAt,
    })
    if (typeof window !== 'undefined') serverAnswers.set(query.queryHash, { updatedAt: query.state.dataUpdatedAt, at: Date.now() })
  }
}

/**
 * `refetchOnMount` for a query a page's server render may have answered: while the cache still holds that answer,
 * unchanged and not invalidated, for a few seconds after it arrived, mounting does not ask for it again (TanStack's
 * default staleTime of 0 would refetch it at once, and TanStack reads this option more than once per mount, so it
 * cannot be a one-shot flag); otherwise a mount refetches stale data as usual.
 */
export function refetchUnlessServerRendered(query: { queryHash: string; state: { dataUpdatedAt: number; isInvalidated: boolean } }): boolean {
  // The server never fetches on mount; answering "no" there keeps its HTML (aria-busy) equal to the browser's first
  // render, which React would not correct.
  if (typeof window === 'undefined') return false
  const answer = serverAnswers.get(query.queryHash)
  if (!answer || answer.updatedAt !== query.state.dataUpdatedAt || query.state.isInvalidated) return true
  return Date.now() - answer.at > SERVER_ANSWER_FRESH_MS
}

/**
 * TanStack Query + tRPC (+ superjson) for the tree below, on the browser's one cache for the visit (tied to the
 * session: features/auth/query-scope.ts). Not in
 * _app: only the pages that call the API (`withApi`) and the create modal bring it, so the pages that do not — the
 * sign-in, sign-up, password and confirmation pages, MFA, settings — load none of that code (ADR 038).
 */
export function ApiProvider({ children, serverQueries }: { children: ReactNode; serverQueries?: DehydratedState }) {
  const { queryClient, apiClient } = useApiClients()
  // The server's answers go into the cache before the page's queries mount, so a cold load shows them without
  // asking again (once per props object: each visit to the page brings its own).
  useMemo(() => hydrateServerAnswers(queryClient, serverQueries), [queryClient, serverQueries])
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={apiClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  )
}

/**
 * A page that calls the API: rendered inside an ApiProvider, keeping its own layout (`getLayout`); the answers its
 * server render fetched (`serverQueries`, server/prefetch-queries.ts) are hydrated into the cache.
 */
export function withApi<P extends object>(Page: ComponentType<P> & { getLayout?: unknown }): ComponentType<P> & { getLayout?: unknown } {
  function ApiPage(props: P & ServerQueriesProps) {
    return (
      <ApiProvider serverQueries={props.serverQueries}>
        <Page {...props} />
      </ApiProvider>
    )
  }
  ApiPage.displayName = `withApi(${Page.displayName ?? Page.name})`
  if (Page.getLayout) return Object.assign(ApiPage, { getLayout: Page.getLayout })
  return ApiPage
}
