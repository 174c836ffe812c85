import type { ReactNode } from 'react'

import { SessionPending } from './form'
import { useSession } from './SessionProvider'

/**
 * Renders its children only with a session. While the session is read, or after it ended (the provider is
 * already on its way to /sign-in), a neutral pending state shows — never signed-out content.
 */
export function RequireSession({ children }: { children: ReactNode }) {
  const { session, isLoading } = useSession()
  if (isLoading || !session) return <SessionPending />
  return <>{children}</>
}
