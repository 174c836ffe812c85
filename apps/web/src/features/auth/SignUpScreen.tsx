import Link from 'next/link'
import Router from 'next/router'
import { lazy, Suspense, useState } from 'react'

import { resolveNext } from '../../lib/safe-next'
import { toast } from '../toast'
import { readableAuthError, type AuthField } from './auth-errors'
import { Field } from './fields'
import { NewAccountFields } from './new-account-fields'
import { AuthCard, AuthForm, CardNote, checkNewAccount, FormMessage, SubmitButton, useTypedEmail } from './form'
import { useRetryWait, WaitMessage } from './retry-wait'
import { loadBrowserSupabase } from '../../lib/supabase/browser'
import { confirmUrl, useNextParam } from './next-param'

/** Shown only after the auth server says the address waits for its confirmation link: loaded then, not with the page. */
const ResendConfirmation = lazy(() => import('./ResendConfirmation').then((m) => ({ default: m.ResendConfirmation })))

/** Create an account; with email confirmation off (localbase default) the user lands signed in. */
export function SignUpScreen() {
  const next = useNextParam()
  const [displayName, setDisplayName] = useState('')
  const [email, setEmail] = useTypedEmail()
  const [password, setPassword] = useState('')
  const [errors, setErrors] = useState<Partial<Record<AuthField, string>>>({})
  const [pending, setPending] = useState(false)
  const [formError, setFormError] = useState<string | null>(null)
  const [confirmSentTo, setConfirmSentTo] = useState<string | null>(null)
  const wait = useRetryWait(email.trim())

  async function signUp() {
    const found: Partial<Record<AuthField, string>> = checkNewAccount(email, password)
    if (displayName.trim().length > 80) found.displayName = 'Use at most 80 characters.'
    setErrors(found)
    setFormError(null)
    if (Object.keys(found).length > 0) return
    setPending(true)
    try {
      const name = displayName.trim()
      const { data, error } = await (await loadBrowserSupabase()).auth.signUp({
        email: email.trim(),
        password,
        options: { emailRedirectTo: confirmUrl(next), ...(name ? { data: { display_name: name } } : {}) },
      })
      if (error) {
        const readable = readableAuthError(error)
        if (wait.start(readable)) return
        if (readable.field === 'email' || readable.field === 'password') setErrors({ [readable.field]: readable.message })
        else {
          setFormError(readable.message)
          toast.error('Sign-up failed', readable.message)
        }
        return
      }
      if (data.session) {
        toast.success('Welcome to Foyer', 'Your account is ready.')
        await Router.replace(resolveNext(next))
      } else {
        setConfirmSentTo(email.trim())
      }
    } catch (error) {
      const readable = readableAuthError(error)
      setFormError(readable.message)
    } finally {
      setPending(false)
    }
  }

  const signInHref = next ? `/sign-in?next=${encodeURIComponent(next)}` : '/sign-in'
  return (
    <AuthCard title="Create your account" lead="It takes a few seconds. You can change all of this later.">
      <AuthForm label="Create account" onSubmit={signUp}>
        {formError ? <FormMessage kind="error">{formError}</FormMessage> : null}
        {wait.text ? <WaitMessage text={wait.text} /> : null}
        {confirmSentTo ? (
          <>
            <FormMessage kind="success">
              Almost there: we sent a confirmation link to {confirmSentTo}. Open it to finish signing up.
            </FormMessage>
            <Suspense fallback={null}>
              <ResendConfirmation email={confirmSentTo} linkTarget={() => confirmUrl(next)} />
            </Suspense>
          </>
        ) : null}
        <Field
          label="Name (optional)"
          name="displayName"
          autoComplete="name"
          value={displayName}
          onChange={setDisplayName}
          error={errors.displayName}
        />
        <NewAccountFields email={email} password={password} onEmailChange={setEmail} onPasswordChange={setPassword} errors={errors} />
        <SubmitButton pending={pending} pendingLabel="Creating account…" disabled={wait.text !== null}>
          Create account
        </SubmitButton>
      </AuthForm>
      <CardNote>
        Already have an account?{' '}
        <Link href={signInHref} className="text-link">
          Sign in
        </Link>
      </CardNote>
    </AuthCard>
  )
}
