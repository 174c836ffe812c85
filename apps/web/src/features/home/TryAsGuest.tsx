import Router from 'next/router'
import { useState } from 'react'

import { AlertCircleIcon, SpinnerIcon } from '../../ui/icons'
import { toast } from '../toast'
import styles from './home.module.css'

/**
 * "Try it without an account" on the welcome page: starts a guest session (anonymous sign-in) and opens the notes.
 * While the session is created the button says so and waits (aria-disabled: a keyboard user keeps focus on it); a
 * refusal (guest sessions switched off, too many started from this network, no connection) is explained under it and
 * the button works again.
 */
export function TryAsGuest() {
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<string | null>(null)

  async function start() {
    setPending(true)
    setError(null)
    const { startGuestSession } = await import('./start-guest').catch(() => ({ startGuestSession: null }))
    const failure = startGuestSession
      ? await startGuestSession()
      : 'Could not load this page completely. Check your connection and try again.'
    if (failure) {
      setError(failure)
      setPending(false)
      return
    }
    toast.success('You are in as a guest', 'Your notes stay in this browser until you add an email and password.')
    await Router.replace('/')
    setPending(false)
  }

  return (
    <div className={styles.guest}>
      <button
        type="button"
        className="button-link button-link--quiet"
        // Pending: aria-disabled, not `disabled`, which would drop a keyboard user's focus to <body> (and leave it there
        // when the start fails); presses meanwhile do nothing.
        aria-disabled={pending || undefined}
        onClick={() => pending || void start()}
      >
        {pending ? (
          <>
            <SpinnerIcon size={16} className="spin" />
            <span>Starting a guest session…</span>
          </>
        ) : (
          'Try it without an account'
        )}
      </button>
      {error ? (
        <div role="alert" className={`${styles.guestError} t_red`} data-testid="guest-error">
          <AlertCircleIcon size={16} />
          <span>{error}</span>
        </div>
      ) : null}
    </div>
  )
}
