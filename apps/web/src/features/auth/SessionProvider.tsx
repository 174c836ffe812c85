import type { AuthChangeEvent, Session, User } from '@supabase/supabase-js'
import Router from 'next/router'
import { createContext, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from 'react'

import { publishSessionScope, sessionScopeOf } from '../../lib/session-scope'
import { sessionNeedsSecondFactor } from '../../lib/supabase/assurance'
import { loadBrowserSupabase } from '../../lib/supabase/browser'
import { useRouteChange } from '../../lib/use-route-change'

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

/** Exported for RequireSession alone, which keeps the page's session for a page whose session ended on it (ADR 183). */
export const SessionContext = createContext<SessionState | null>(null)

/** Events after which the auth client holds a (new) session to show. */
const UPDATE_EVENTS = new Set<AuthChangeEvent>(['SIGNED_IN', 'TOKEN_REFRESHED', 'USER_UPDATED', 'MFA_CHALLENGE_VERIFIED', 'INITIAL_SESSION'])

export const SIGN_IN_PATH = '/sign-in'

const userIdOf = (session: Session | null | undefined): string | null => session?.user.id ?? null

/**
 * Holds the signed-in session. Seeded from `pageProps.initialSession` (verified on the server), then driven by
 * the auth client: updated on SIGNED_IN, TOKEN_REFRESHED, USER_UPDATED and MFA_CHALLENGE_VERIFIED, cleared on
 * SIGNED_OUT — which also replaces the current history entry with /sign-in, including when the sign-out
 * happened in another tab (supabase-js relays auth events between tabs over a BroadcastChannel).
 *
 * A session of another user than the page was rendered for (the first one, after signing in or up here or in
 * another tab) does not change the header of the page on screen, which was made for the previous user (the sign-in
 * form, the welcome page): it waits for the next page, whose server-verified `initialSession` brings it, so the
 * header and the page change in the same render. The form that signed in is already on its way there; otherwise
 * (another tab) the current page is loaded again for the new user.
 *
 * The auth client is not in the first-load bundle: it is imported after hydration (`loadBrowserSupabase()`), when
 * the browser is idle if the server already rendered the session, at once if the page waits for it. Until then
 * the server-verified session is shown, so nothing flashes; token refresh and tab sync start once it is loaded.
 */
export function SessionProvider({ initialSession, children }: { initialSession?: Session | null; children: ReactNode }) {
  const [session, setSession] = useState<Session | null>(initialSession ?? null)
  const [isLoading, setIsLoading] = useState(initialSession === undefined)
  /** The session of another user, waiting for its page (see above). */
  const [waiting, setWaiting] = useState<Session | null>(null)
  const initialRef = useRef(initialSession)
  const sessionRef = useRef(session)
  const loadingRef = useRef(isLoading)
  /** The current page's own `initialSession` (undefined: a page rendered without one, e.g. the static 404). */
  const pageSessionRef = useRef(initialSession)
  const navigatingRef = useRef(false)
  useEffect(() => {
    sessionRef.current = session
    loadingRef.current = isLoading
  }, [session, isLoading])
  useEffect(() => {
    pageSessionRef.current = initialSession
  }, [initialSession])

  // A page that verified a session on the server wins over "no session yet" (e.g. after /auth/confirm), and takes
  // the place of a waiting one; a page rendered without a session (the static 404) shows the waiting one.
  const [seenInitial, setSeenInitial] = useState(initialSession)
  if (initialSession !== seenInitial) {
    setSeenInitial(initialSession)
    const shown = initialSession ?? waiting
    if (shown) {
      setSession(shown)
      setIsLoading(false)
      setWaiting(null)
    }
  }

  // Whether a route change is under way: its page will bring the session, no need to load this one again.
  useRouteChange({
    onStart: () => {
      navigatingRef.current = true
    },
    onEnd: () => {
      navigatingRef.current = false
    },
  })

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
              setWaiting(null)
              setSession(null)
              setIsLoading(false)
              if (Router.pathname !== SIGN_IN_PATH) void Router.replace(SIGN_IN_PATH)
              return
            }
            if (!UPDATE_EVENTS.has(event)) return
            const anotherUser = userIdOf(next) !== userIdOf(sessionRef.current)
            if (anotherUser && !loadingRef.current && pageSessionRef.current !== undefined) {
              setWaiting(next)
              // After the current task: the form that signed in starts its own navigation right away.
              window.setTimeout(() => {
                if (!navigatingRef.current) void Router.replace(Router.asPath, undefined, { scroll: false })
              }, 0)
              return
            }
            // The same user (a refreshed token, a changed profile, a verified second factor), or a page that
            // waits for the session: shown at once.
            setWaiting(null)
            setSession(next)
            setIsLoading(false)
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
  // Whose API answers may be shown (lib/session-scope.ts): the query cache resets when this changes.
  const scope = value.isLoading ? undefined : sessionScopeOf(value.user?.id ?? null, value.needsSecondFactor)
  useEffect(() => publishSessionScope(scope), [scope])
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>
}

export function useSession(): SessionState {
  const state = useContext(SessionContext)
  if (!state) throw new Error('useSession must be used inside <SessionProvider>')
  return state
}
