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

/**
 * Puts a page's server answers into the cache during render, so the page's first render shows them: the answers the
 * cache does not have yet (a cold load, or a visit to a list state not seen before). A query the cache has already
 * keeps its answer and refetches on mount as usual (no update of other components in the middle of this render).
 * What TanStack's HydrationBoundary does for such queries, without its code for promises and mutations.
 */
function hydrateServerAnswers(queryClient: QueryClient, state: DehydratedState | undefined): void {
  for (const query of state?.queries ?? []) {
    if (queryClient.getQueryCache().get(query.queryHash)) continue // only answered queries are sent
    // Dated now (this clock, not the server's): a query with a staleTime (the notes list) then does not ask again
    // on mount for what the server just sent.
    queryClient.setQueryData(query.queryKey, superjson.deserialize(query.state.data as SuperJSONResult))
  }
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
