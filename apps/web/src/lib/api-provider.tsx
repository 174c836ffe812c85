import { QueryClientProvider, type QueryClient } from '@tanstack/react-query'
import type { TRPCClient } from '@trpc/client'
import { useState, type ComponentType, type ReactNode } from 'react'

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

/**
 * TanStack Query + tRPC (+ superjson) for the tree below, on the browser's one cache for the visit (tied to the
 * session: features/auth/query-scope.ts). Not in
 * _app: only the pages that call the API (`withApi`) and the create modal bring it, so the pages that do not — the
 * sign-in, sign-up, password and confirmation pages, MFA, settings — load none of that code (ADR 038).
 */
export function ApiProvider({ children }: { children: ReactNode }) {
  const { queryClient, apiClient } = useApiClients()
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={apiClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  )
}

/** A page that calls the API: rendered inside an ApiProvider, keeping its own layout (`getLayout`). */
export function withApi<P extends object>(Page: ComponentType<P> & { getLayout?: unknown }): ComponentType<P> & { getLayout?: unknown } {
  function ApiPage(props: P) {
    return (
      <ApiProvider>
        <Page {...props} />
      </ApiProvider>
    )
  }
  ApiPage.displayName = `withApi(${Page.displayName ?? Page.name})`
  if (Page.getLayout) return Object.assign(ApiPage, { getLayout: Page.getLayout })
  return ApiPage
}
