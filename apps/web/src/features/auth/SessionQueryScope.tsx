import { useQueryClient } from '@tanstack/react-query'
import Router from 'next/router'
import { useEffect, useRef } from 'react'

import { MFA_PATH } from '../../lib/safe-next'
import { isSecondFactorRequired, secondFactorPath } from './second-factor'
import { useSession } from './SessionProvider'

/**
 * Ties the query cache to the session. Cached API answers belong to one user at one level of sign-in: when the
 * signed-in user changes (sign-out, another account) or the session drops below its second factor (the authenticator
 * it was verified with was removed, in this tab or another), the cache is reset, so nothing is shown that the
 * session may no longer read and active queries load again. A query refused because two-factor sign-in is not
 * finished leads to `/mfa?next=<this page>`, as the server does for a page: a read holds nothing the user typed,
 * and no retry could succeed. Render it inside the QueryClientProvider.
 */
export function SessionQueryScope() {
  const { user, isLoading, needsSecondFactor } = useSession()
  const queryClient = useQueryClient()
  const scope = isLoading ? undefined : `${user?.id ?? ''}:${needsSecondFactor ? 'aal1' : 'full'}`
  const previous = useRef<string | undefined>(undefined)
  useEffect(() => {
    if (scope === undefined) return
    if (previous.current !== undefined && previous.current !== scope) void queryClient.resetQueries()
    previous.current = scope
  }, [scope, queryClient])

  useEffect(
    () =>
      queryClient.getQueryCache().subscribe((event) => {
        if (event.type !== 'updated' || event.action.type !== 'error') return
        if (!isSecondFactorRequired(event.action.error) || Router.pathname === MFA_PATH) return
        void Router.replace(secondFactorPath())
      }),
    [queryClient],
  )
  return null
}
