import Link from 'next/link'
import Router from 'next/router'
import { lazy, Suspense, useState } from 'react'

import { mfaPathFor, resolveNext } from '../../lib/safe-next'
import { toast } from '../toast'
import { readableAuthError, type AuthField } from './auth-errors'
import { Field } from './fields'
import styles from './auth.module.css'
import { AuthCard, AuthForm, CardNote, emailError, FormMessage, SecondaryButton, SubmitButton, useTypedEmail } from './form'
import { confirmUrl, useNextParam } from './next-param'
import { useRetryWait, WaitMessage } from './retry-wait'
import { sessionNeedsSecondFactor } from '../../lib/supabase/assurance'
import { loadBrowserSupabase } from '../../lib/supabase/browser'

/** Shown only after the auth server says the address waits for its confirmation link: loaded then, not with the page. */
const ResendConfirmation = lazy(() => import('./ResendConfirmation').then((m) => ({ default: m.ResendConfirmation })))

type Errors = Partial<Record<AuthField, string>>

/** Sign in with email + password, or have a sign-in link mailed. `?next=` is followed only when same-origin. */
export function SignInScreen() {
  const next = useNextParam()
  const [email, setEmail] = useTypedEmail()
  const [password, setPassword] = useState('')
  const [errors, setErrors] = useState<Errors>({})
  const [pending, setPending] = useState<'password' | 'link' | null>(null)
  const [formError, setFormError] = useState<string | null>(null)
  const [linkSentTo, setLinkSentTo] = useState<string | null>(null)
  /** the address whose account waits for its confirmation link (the sign-in said so): offered a new link */
  const [unconfirmed, setUnconfirmed] = useState<string | null>(null)
  // waits the server asked for, counting down: the account's after failed passwords, the address's between mails
  const held = useRetryWait(email.trim())
  const mailWait = useRetryWait(email.trim())

  function show(error: unknown, wait: typeof held) {
    const readable = readableAuthError(error)
    if ((error as { code?: unknown } | null)?.code === 'email_not_confirmed') setUnconfirmed(email.trim())
    if (wait.start(readable)) return
    if (readable.field === 'email' || readable.field === 'password') setErrors({ [readable.field]: readable.message })
    else {
      setFormError(readable.message)
      toast.error('Sign-in failed', readable.message)
    }
  }

  async function signIn() {
    const found: Errors = {}
    const badEmail = emailError(email)
    if (badEmail) found.email = badEmail
    if (!password) found.password = 'Enter your password.'
    setErrors(found)
    setFormError(null)
    setLinkSentTo(null)
    setUnconfirmed(null)
    if (Object.keys(found).length > 0) return
    setPending('password')
    try {
      const supabase = await loadBrowserSupabase()
      const { data, error } = await supabase.auth.signInWithPassword({ email: email.trim(), password })
      if (error) return show(error, held)
      // A user with a verified authenticator app signs in at aal1: the code comes next, at /mfa. Read from the new
      // session itself (its token's level, its user's factors), so the page changes at once (the header waits for it).
      const needsCode = data.session ? sessionNeedsSecondFactor(data.session.access_token, data.session.user) : false
      await Router.replace(needsCode ? mfaPathFor(resolveNext(next)) : resolveNext(next))
    } catch (error) {
      show(error, held)
    } finally {
      setPending(null)
    }
  }

  async function sendLink() {
    setFormError(null)
    setLinkSentTo(null)
    setUnconfirmed(null)
    const badEmail = emailError(email, 'Enter your email address to get a sign-in link.')
    if (badEmail) {
      setErrors({ email: badEmail })
      return
    }
    setErrors({})
    setPending('link')
    try {
      const { error } = await (await loadBrowserSupabase()).auth.signInWithOtp({
        email: email.trim(),
        options: { shouldCreateUser: false, emailRedirectTo: confirmUrl(next) },
      })
      // No account for the address: Supabase Auth answers otp_disabled ("Signups not allowed for otp"). Said as for
      // an address that has one, as the reset form does (ADR 071): never "links are not enabled", never who signed up.
      if (error && error.code !== 'otp_disabled') return show(error, mailWait)
      setLinkSentTo(email.trim())
    } catch (error) {
      show(error, mailWait)
    } finally {
      setPending(null)
    }
  }

  const signUpHref = next ? `/sign-up?next=${encodeURIComponent(next)}` : '/sign-up'
  return (
    <AuthCard title="Sign in" lead="Welcome back. Sign in with your password or get a one-time link by email.">
      <AuthForm label="Sign in" onSubmit={signIn}>
        {formError ? <FormMessage kind="error">{formError}</FormMessage> : null}
        {held.text ? <WaitMessage text={held.text} /> : null}
        {mailWait.text ? <WaitMessage text={mailWait.text} /> : null}
        {linkSentTo ? (
          <FormMessage kind="success">
            If an account exists for {linkSentTo}, a sign-in link is on its way. Open it in this browser.
          </FormMessage>
        ) : null}
        <Field label="Email" name="email" type="email" autoComplete="email" value={email} onChange={setEmail} error={errors.email} />
        {unconfirmed !== null && unconfirmed === email.trim() ? (
          <Suspense fallback={null}>
            <ResendConfirmation email={unconfirmed} linkTarget={() => confirmUrl(next)} />
          </Suspense>
        ) : null}
        <div className={styles.passwordGroup}>
          <Field
            label="Password"
            name="password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={setPassword}
            error={errors.password}
          />
          <div className={styles.forgot}>
            <Link href="/forgot-password" className="text-link">
              Forgot password?
            </Link>
          </div>
        </div>
        <SubmitButton pending={pending === 'password'} pendingLabel="Signing in…" disabled={held.text !== null}>
          Sign in
        </SubmitButton>
        <div className={styles.divider} aria-hidden>
          or
        </div>
        <SecondaryButton onPress={() => void sendLink()} disabled={pending !== null || mailWait.text !== null}>
          {pending === 'link' ? 'Sending link…' : 'Email me a sign-in link'}
        </SecondaryButton>
      </AuthForm>
      <CardNote>
        New here?{' '}
        <Link href={signUpHref} className="text-link">
          Create an account
        </Link>
      </CardNote>
    </AuthCard>
  )
}
