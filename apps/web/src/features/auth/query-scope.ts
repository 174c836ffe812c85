import type { QueryClient } from '@tanstack/react-query'
import Router from 'next/router'

import { MFA_PATH } from '../../lib/safe-next'
import { currentSessionScope, onSessionScopeChange } from '../../lib/session-scope'
import { isSecondFactorRequired, secondFactorPath } from './second-factor'

/**
 * Ties the browser's query cache to the session. Cached API answers belong to one user at one level of sign-in: when
 * the signed-in user changes (sign-out, another account) or the session drops below its second factor (the
 * authenticator it was verified with was removed, in this tab or another), the cache is reset, so nothing is shown
 * that the session may no longer read and active queries load again. This holds whether or not the page on screen
 * calls the API: the cache lives for the whole visit, the session scope comes from SessionProvider
 * (lib/session-scope.ts). A query refused because two-factor sign-in is not finished leads to
 * `/mfa?next=<this page>`, as the server does for a page: a read holds nothing the user typed, and no retry could
 * succeed — unless the query says `meta: { secondFactorRedirect: false }`: a read beside a form (the note page's
 * attachments) must not take the user away from text they have not saved; it shows the refusal in place. Called once, when the browser's query client is created (lib/api-provider.tsx); returns the undo.
 */
export function tieQueryCacheToSession(queryClient: QueryClient): () => void {
  let scope = currentSessionScope()
  const stopScope = onSessionScopeChange((next) => {
    if (scope !== undefined && scope !== next) void queryClient.resetQueries()
    scope = next
  })
  const stopRedirect = queryClient.getQueryCache().subscribe((event) => {
    if (event.type !== 'updated' || event.action.type !== 'error') return
    if (!isSecondFactorRequired(event.action.error) || Router.pathname === MFA_PATH) return
    if (event.query.meta?.secondFactorRedirect === false) return
    void Router.replace(secondFactorPath())
  })
  return () => {
    stopScope()
    stopRedirect()
  }
}
