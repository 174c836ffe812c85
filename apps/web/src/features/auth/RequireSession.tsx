import { useEffect, useRef, useState, type ReactNode } from 'react'

import { endingHere } from '../../lib/session-ended'
import { SessionPending } from './form'
import { SessionContext, useSession, type SessionState } from './SessionProvider'

/**
 * Renders its children only with a session. While the session is read, or after it ended (the provider is
 * already on its way to /sign-in), a neutral pending state shows — never signed-out content.
 *
 * One exception: a session the auth server said had ended while this page used it (lib/session-ended.ts, ADR 183).
 * The page has said so, the header is signed out, and the page stays as it was — its message and what was typed in
 * its forms — with the session it was showing, until the user leaves it or signs in again.
 */
export function RequireSession({ children }: { children: ReactNode }) {
  const state = useSession()
  const shown = useRef<SessionState | null>(null)
  if (state.session) shown.current = state
  const [kept, setKept] = useState(false)
  const keep = !state.session && !state.isLoading && shown.current !== null && (kept || endingHere())
  useEffect(() => setKept(keep), [keep])
  if (!keep && (state.isLoading || !state.session)) return <SessionPending />
  // one element either way, so the page is not mounted again (its forms keep their text) when the session is kept
  return <SessionContext.Provider value={keep ? shown.current : state}>{children}</SessionContext.Provider>
}
