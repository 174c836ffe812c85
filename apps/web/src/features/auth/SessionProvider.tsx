import type { AuthChangeEvent, Session, SupabaseClient, User } from '@supabase/supabase-js'
import Router from 'next/router'
import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from 'react'

import { getBrowserSupabase } from '../../lib/supabase/browser'

export interface SessionState {
  session: Session | null
  user: User | null
  /** True while the session is being read from the auth client (no server-verified session was passed in). */
  isLoading: boolean
  /** The browser's Supabase client; null during server rendering. */
  supabase: SupabaseClient | null
}

const SessionContext = createContext<SessionState | null>(null)

/** Events after which the auth client holds a (new) session to show. */
const UPDATE_EVENTS = new Set<AuthChangeEvent>(['SIGNED_IN', 'TOKEN_REFRESHED', 'USER_UPDATED', 'MFA_CHALLENGE_VERIFIED', 'INITIAL_SESSION'])

export const SIGN_IN_PATH = '/sign-in'

/**
 * Holds the signed-in session. Seeded from `pageProps.initialSession` (verified on the server), then driven by
 * the auth client: updated on SIGNED_IN, TOKEN_REFRESHED, USER_UPDATED and MFA_CHALLENGE_VERIFIED, cleared on
 * SIGNED_OUT — which also replaces the current history entry with /sign-in, including when the sign-out
 * happened in another tab (supabase-js relays auth events between tabs over a BroadcastChannel).
 */
export function SessionProvider({ initialSession, children }: { initialSession?: Session | null; children: ReactNode }) {
  const [supabase, setSupabase] = useState<SupabaseClient | null>(null)
  const [session, setSession] = useState<Session | null>(initialSession ?? null)
  const [isLoading, setIsLoading] = useState(initialSession === undefined)

  // A page that verified a session on the server wins over "no session yet" (e.g. after /auth/confirm).
  const [seenInitial, setSeenInitial] = useState(initialSession)
  if (initialSession !== seenInitial) {
    setSeenInitial(initialSession)
    if (initialSession) {
      setSession(initialSession)
      setIsLoading(false)
    }
  }

  useEffect(() => {
    const client = getBrowserSupabase()
    setSupabase(client)
    const { data } = client.auth.onAuthStateChange((event, next) => {
      if (event === 'SIGNED_OUT') {
        setSession(null)
        setIsLoading(false)
        if (Router.pathname !== SIGN_IN_PATH) void Router.replace(SIGN_IN_PATH)
        return
      }
      if (UPDATE_EVENTS.has(event)) {
        setSession(next)
        setIsLoading(false)
      }
    })
    return () => data.subscription.unsubscribe()
  }, [])

  const value = useMemo<SessionState>(
    () => ({ session, user: session?.user ?? null, isLoading, supabase }),
    [session, isLoading, supabase],
  )
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>
}

export function useSession(): SessionState {
  const state = useContext(SessionContext)
  if (!state) throw new Error('useSession must be used inside <SessionProvider>')
  return state
}

/** Resolves the browser client on first use, so components may hold it while rendering on the server. */
const lazyBrowserClient = new Proxy({} as SupabaseClient, {
  get: (_target, property) => Reflect.get(getBrowserSupabase(), property),
})

/** The browser client for event handlers (sign-in, sign-out, …). */
export function useSupabase(): SupabaseClient {
  const { supabase } = useSession()
  return supabase ?? lazyBrowserClient
}
