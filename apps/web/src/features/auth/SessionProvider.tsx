import type { AuthChangeEvent, Session, User } from '@supabase/supabase-js'
import Router from 'next/router'
import { createContext, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react'

import { sessionNeedsSecondFactor } from '../../lib/supabase/assurance'
import { loadBrowserSupabase } from '../../lib/supabase/browser'

export interface SessionState {
  session: Session | null
  user: User | null
  /** True while the session is being read from the auth client (no server-verified session was passed in). */
  isLoading: boolean
  /**
   * True while the session is at aal1 and its user has a verified factor: two-factor sign-in is not finished, the
   * user's data stays closed (the server sends such a session to /mfa), so the UI offers nothing that needs it.
   */
  needsSecondFactor: boolean
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
 *
 * The auth client is not in the first-load bundle: it is imported after hydration (`loadBrowserSupabase()`), when
 * the browser is idle if the server already rendered the session, at once if the page waits for it. Until then
 * the server-verified session is shown, so nothing flashes; token refresh and tab sync start once it is loaded.
 */
export function SessionProvider({ initialSession, children }: { initialSession?: Session | null; children: ReactNode }) {
  const [session, setSession] = useState<Session | null>(initialSession ?? null)
  const [isLoading, setIsLoading] = useState(initialSession === undefined)
  const initialRef = useRef(initialSession)
  const sessionRef = useRef(session)
  useEffect(() => {
    sessionRef.current = session
  }, [session])

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
    let cancelled = false
    let unsubscribe: (() => void) | undefined
    const subscribe = () => {
      loadBrowserSupabase().then(
        (client) => {
          if (cancelled) return
          const { data } = client.auth.onAuthStateChange((event, next) => {
            // The client starts after hydration; a sign-out in another tab before that is not broadcast to it, so
            // it finds no session in the cookies. That ends the session the server rendered, like SIGNED_OUT.
            const endedBeforeLoad = event === 'INITIAL_SESSION' && !next && sessionRef.current !== null
            if (event === 'SIGNED_OUT' || endedBeforeLoad) {
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
          unsubscribe = () => data.subscription.unsubscribe()
        },
        (error: unknown) => {
          // The client chunk could not be fetched (offline, a new deployment removed it). Keep the server-verified
          // session on screen and stop waiting; forms retry the import when submitted.
          if (cancelled) return
          console.error('Could not load the auth client', error)
          setIsLoading(false)
        },
      )
    }
    // A server-verified session is already on screen: fetch the client once the browser is idle after
    // hydration. Without one the page waits for the client, so fetch it at once.
    if (initialRef.current !== undefined && typeof window.requestIdleCallback === 'function') {
      const handle = window.requestIdleCallback(subscribe, { timeout: 500 })
      return () => {
        cancelled = true
        window.cancelIdleCallback(handle)
        unsubscribe?.()
      }
    }
    subscribe()
    return () => {
      cancelled = true
      unsubscribe?.()
    }
  }, [])

  const value = useMemo<SessionState>(
    () => ({
      session,
      user: session?.user ?? null,
      isLoading,
      needsSecondFactor: session ? sessionNeedsSecondFactor(session.access_token, session.user) : false,
    }),
    [session, isLoading],
  )
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>
}

export function useSession(): SessionState {
  const state = useContext(SessionContext)
  if (!state) throw new Error('useSession must be used inside <SessionProvider>')
  return state
}
