import { environmentManager, QueryClient } from '@tanstack/react-query'

/** TanStack Query's default number of retries of a failed query. */
export const QUERY_RETRIES = 3

/** HTTP status of a tRPC client error (`error.data.httpStatus`), when the server answered with one. */
function httpStatusOf(error: unknown): number | undefined {
  const status = (error as { data?: { httpStatus?: unknown } } | null)?.data?.httpStatus
  return typeof status === 'number' ? status : undefined
}

/**
 * Whether a failed query is tried again. A refusal the same request would get again (4xx: signed out, second factor
 * missing, not found, invalid input…) is final: retrying it only keeps the user waiting (3 retries are 7 s of
 * skeleton). Everything else — the server or the network failing, 408 and 429 ("later") — keeps TanStack's
 * default: 3 retries with exponential delay capped at 30 s.
 */
export function shouldRetryQuery(failureCount: number, error: unknown): boolean {
  if (environmentManager.isServer()) return false // TanStack's default on the server: no retries
  const status = httpStatusOf(error)
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) return false
  return failureCount < QUERY_RETRIES
}

/**
 * A new TanStack Query client. Cache and retry timing are TanStack's defaults on purpose (the spec lists them as
 * library defaults): unused queries are garbage-collected after 5 minutes, a failed query is retried 3 times with
 * exponential delay (1 s, 2 s, 4 s, …) capped at 30 s — except an answer that cannot change (shouldRetryQuery).
 * Mutations are not retried. Create one per app instance (React state), never at module level: on the server a
 * module-level client would share one cache between requests.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({ defaultOptions: { queries: { retry: shouldRetryQuery } } })
}
