import type { Session } from '@supabase/supabase-js'
import { createContext, useContext, useMemo, type ReactNode } from 'react'

export interface SessionState {
  session: Session | null
  /** True while the session is being read from the auth client. */
  isLoading: boolean
}

const SessionContext = createContext<SessionState | null>(null)

/**
 * Holds the signed-in session, seeded from `pageProps.initialSession` (server-rendered pages pass it).
 * For now it only carries that initial value; the auth issue adds the auth client subscription, sign-out
 * redirect and the periodic token refresh.
 */
export function SessionProvider({ initialSession, children }: { initialSession?: Session | null; children: ReactNode }) {
  const value = useMemo<SessionState>(() => ({ session: initialSession ?? null, isLoading: false }), [initialSession])
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>
}

export function useSession(): SessionState {
  const state = useContext(SessionContext)
  if (!state) throw new Error('useSession must be used inside <SessionProvider>')
  return state
}
