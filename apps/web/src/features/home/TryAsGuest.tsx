import Router from 'next/router'
import { useState } from 'react'
import { Text, Theme, XStack, YStack } from 'tamagui'

import { AlertCircleIcon, SpinnerIcon } from '../../ui/icons'
import { toast } from '../toast'

/**
 * "Try it without an account" on the welcome page: starts a guest session (anonymous sign-in) and opens the notes.
 * While the session is created the button is disabled and says so; a refusal (guest sessions switched off, too
 * many started from this network, no connection) is explained under it and the button works again.
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
    <YStack gap="$2" alignItems="flex-start">
      <button
        type="button"
        className="button-link button-link--quiet"
        disabled={pending}
        aria-disabled={pending || undefined}
        onClick={() => void start()}
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
        <Theme name="red">
          <XStack role="alert" gap="$2" alignItems="flex-start" maxWidth={480} data-testid="guest-error">
            <Text color="$color11" display="flex" paddingTop={2}>
              <AlertCircleIcon size={16} />
            </Text>
            <Text fontSize="$3" lineHeight="$3" color="$color11" flex={1}>
              {error}
            </Text>
          </XStack>
        </Theme>
      ) : null}
    </YStack>
  )
}
