import { useState } from 'react'

import { loadBrowserSupabase } from '../../lib/supabase/browser'
import { readableAuthError } from './auth-errors'
import { FormMessage, SecondaryButton } from './form'
import { useRetryWait, WaitMessage } from './retry-wait'

/**
 * "Send the link again" for an account still waiting for its confirmation link (the mail lost, expired or never
 * opened): Supabase Auth's resend of the sign-up link, which replaces the one sent before. Under sign-up's "Almost
 * there" and under sign-in's "confirm your email address first", which were dead ends without it. `linkTarget`: where
 * the link lands (the page's confirmUrl).
 */
export function ResendConfirmation({ email, linkTarget }: { email: string; linkTarget: () => string }) {
  const [pending, setPending] = useState(false)
  const [outcome, setOutcome] = useState<{ kind: 'error' | 'success'; text: string } | null>(null)
  const wait = useRetryWait(email)

  async function resend() {
    setPending(true)
    setOutcome(null)
    try {
      const { error } = await (await loadBrowserSupabase()).auth.resend({
        type: 'signup',
        email,
        options: { emailRedirectTo: linkTarget() },
      })
      const readable = error ? readableAuthError(error) : null
      if (readable && wait.start(readable)) return
      setOutcome(
        readable
          ? { kind: 'error', text: readable.message }
          : { kind: 'success', text: `A new confirmation link is on its way to ${email}. Use the newest one: it replaces the others.` },
      )
    } catch (error) {
      setOutcome({ kind: 'error', text: readableAuthError(error).message })
    } finally {
      setPending(false)
    }
  }

  return (
    <>
      {outcome ? <FormMessage kind={outcome.kind}>{outcome.text}</FormMessage> : null}
      {wait.text ? <WaitMessage text={wait.text} /> : null}
      <SecondaryButton onPress={() => void resend()} disabled={pending || wait.text !== null}>
        {pending ? 'Sending link…' : 'Send the link again'}
      </SecondaryButton>
    </>
  )
}
