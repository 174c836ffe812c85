// Where an auth page goes on to (`?next=`, same-origin only) and where its email links land. Its own module, so that
// the sign-up and password pages do not load the sign-in screen with them.
import { useRouter } from 'next/router'

import { safeNextPath } from '../../lib/safe-next'

/** Where email links land: /auth/confirm verifies them on the server, then goes on to `next`. */
export function confirmUrl(next: string | null): string {
  const url = new URL('/auth/confirm', window.location.origin)
  if (next && next !== '/') url.searchParams.set('next', next)
  return url.toString()
}

function queryValue(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined
}

export function useNextParam(): string | null {
  const router = useRouter()
  return safeNextPath(queryValue(router.query.next))
}
