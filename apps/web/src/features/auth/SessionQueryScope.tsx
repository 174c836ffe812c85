import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef } from 'react'

import { useSession } from './SessionProvider'

/**
 * Cached API answers belong to one user: when the signed-in user changes (sign-out, another account) the query
 * cache is reset, so nothing of the previous user is shown and active queries load again as the new one.
 * Render it inside the QueryClientProvider.
 */
export function SessionQueryScope() {
  const { user, isLoading } = useSession()
  const queryClient = useQueryClient()
  const userId = isLoading ? undefined : (user?.id ?? null)
  const previous = useRef<string | null | undefined>(undefined)
  useEffect(() => {
    if (userId === undefined) return
    if (previous.current !== undefined && previous.current !== userId) void queryClient.resetQueries()
    previous.current = userId
  }, [userId, queryClient])
  return null
}
