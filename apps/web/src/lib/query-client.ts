import { QueryClient } from '@tanstack/react-query'

/**
 * A new TanStack Query client. The cache and retry behaviour are TanStack's defaults on purpose (the spec
 * lists them as library defaults): unused queries are garbage-collected after 5 minutes, a failed query is
 * retried 3 times with exponential delay (1 s, 2 s, 4 s, …) capped at 30 s. Mutations are not retried.
 * Create one per app instance (React state), never at module level: on the server a module-level
 * client would share one cache between requests.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient()
}
