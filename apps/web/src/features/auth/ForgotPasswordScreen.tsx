import Link from 'next/link'
import { useState } from 'react'

import { toast } from '../toast'
import { readableAuthError } from './auth-errors'
import { Field } from './fields'
import { AuthCard, AuthForm, CardNote, emailError, FormMessage, SubmitButton, useTypedEmail } from './form'
import { useRetryWait, WaitMessage } from './retry-wait'
import { loadBrowserSupabase } from '../../lib/supabase/browser'
import { confirmUrl } from './next-param'

/** Mails a password-reset link; the link signs the user in for recovery and leads to /reset-password. */
export function ForgotPasswordScreen() {
  const [email, setEmail] = useTypedEmail()
  const [error, setError] = useState<string | undefined>()
  const [pending, setPending] = useState(false)
  const [sentTo, setSentTo] = useState<string | null>(null)
  const wait = useRetryWait(email.trim())

  async function send() {
    setSentTo(null)
    const badEmail = emailError(email)
    if (badEmail) {
      setError(badEmail)
      return
    }
    setError(undefined)
    setPending(true)
    try {
      const { error: failure } = await (await loadBrowserSupabase()).auth.resetPasswordForEmail(email.trim(), { redirectTo: confirmUrl('/reset-password') })
      if (failure) {
        const readable = readableAuthError(failure)
        if (wait.start(readable)) return
        if (readable.field === 'email') setError(readable.message)
        else toast.error('Could not send the link', readable.message)
        return
      }
      setSentTo(email.trim())
    } catch (failure) {
      toast.error('Could not send the link', readableAuthError(failure).message)
    } finally {
      setPending(false)
    }
  }

  return (
    <AuthCard title="Reset your password" lead="Enter the email you signed up with and we will send you a link to choose a new password.">
      <AuthForm label="Reset password" onSubmit={send}>
        {sentTo ? (
          <FormMessage kind="success">
            If an account exists for {sentTo}, a reset link is on its way. Open it in this browser.
          </FormMessage>
        ) : null}
        {wait.text ? <WaitMessage text={wait.text} /> : null}
        <Field label="Email" name="email" type="email" autoComplete="email" value={email} onChange={setEmail} error={error} />
        <SubmitButton pending={pending} pendingLabel="Sending link…" disabled={wait.text !== null}>
          Send reset link
        </SubmitButton>
      </AuthForm>
      <CardNote>
        Remembered it?{' '}
        <Link href="/sign-in" className="text-link">
          Back to sign in
        </Link>
      </CardNote>
    </AuthCard>
  )
}
