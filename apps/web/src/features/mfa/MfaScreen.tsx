import Router from 'next/router'
import { useEffect, useRef, useState } from 'react'

import {
  AuthCard,
  AuthForm,
  CardNote,
  Field,
  FormMessage,
  RequireSession,
  SecondaryButton,
  SubmitButton,
  loadBrowserSupabase,
  useNextParam,
  useRetryWait,
  WaitMessage,
} from '../auth'
import { resolveNext } from '../../lib/safe-next'
import { readableFactorError } from './factor-errors'
import { verifyTotpCode } from './verify-code'

function Challenge() {
  const next = useNextParam()
  const [factorId, setFactorId] = useState<string | null>(null)
  const [factors, setFactors] = useState<{ id: string; label: string }[]>([])
  const [code, setCode] = useState('')
  const [error, setError] = useState<string | undefined>()
  const [formError, setFormError] = useState<string | null>(null)
  const [pending, setPending] = useState(false)
  const [signingOut, setSigningOut] = useState(false)
  // The factors could not be read (connection lost): "Try again" reads them again instead of a "Loading…" forever.
  const [loadFailed, setLoadFailed] = useState(false)
  const [attempt, setAttempt] = useState(0)
  const codeField = useRef<HTMLInputElement>(null)
  // The hold the server asked for after too many wrong codes (per account), counting down with "Verify" waiting.
  const held = useRetryWait('')

  useEffect(() => {
    let cancelled = false
    const failed = (message: string) => {
      setLoadFailed(true)
      setFormError(message)
    }
    void (async () => {
      try {
        const { data, error: listError } = await (await loadBrowserSupabase()).auth.mfa.listFactors()
        if (cancelled) return
        if (listError) return failed(readableFactorError(listError).message)
        const verified = data.totp.filter((f) => f.status === 'verified')
        const first = verified[0]
        if (!first) return await Router.replace(resolveNext(next)) // nothing to verify: this session needs no second factor
        // A user with several authenticator apps picks the one at hand (each app has its own secret).
        setFactors(verified.map((f, i) => ({ id: f.id, label: f.friendly_name?.trim() || `Authenticator app ${i + 1}` })))
        setFactorId(first.id)
        // After "Try again" (which went away when pressed), the code is what comes next.
        if (attempt > 0) codeField.current?.focus()
      } catch (thrown) {
        if (!cancelled) failed(readableFactorError(thrown).message)
      }
    })()
    return () => {
      cancelled = true
    }
  }, [next, attempt])

  function retry() {
    setLoadFailed(false)
    setFormError(null)
    setAttempt((n) => n + 1)
  }

  async function verify() {
    if (!factorId) return
    setFormError(null)
    setError(undefined)
    setPending(true)
    const result = await verifyTotpCode(factorId, code)
    if (!result.ok) {
      if (!held.start(result)) {
        if (result.field === 'code') setError(result.message)
        else setFormError(result.message)
      }
      setPending(false)
      return
    }
    await Router.replace(resolveNext(next))
  }

  async function signOut() {
    setSigningOut(true)
    try {
      // This browser only (ADR 064): a password alone must not end the account's sessions elsewhere.
      const { error: signOutError } = await (await loadBrowserSupabase()).auth.signOut({ scope: 'local' })
      if (signOutError) setFormError(readableFactorError(signOutError).message)
    } finally {
      setSigningOut(false)
    }
  }

  return (
    <AuthCard title="Two-factor sign-in" lead="Enter the 6-digit code your authenticator app shows for Foyer.">
      <AuthForm label="Two-factor code" onSubmit={verify}>
        {formError ? <FormMessage kind="error">{formError}</FormMessage> : null}
        {held.text ? <WaitMessage text={held.text} /> : null}
        {factors.length > 1 ? (
          <fieldset style={{ border: 0, margin: 0, padding: 0, display: 'flex', flexDirection: 'column', gap: 8 }}>
            <legend style={{ padding: 0, marginBottom: 6, fontSize: 13, fontWeight: 600, color: 'var(--color12)' }}>
              Which app?
            </legend>
            {factors.map((factor) => (
              <label key={factor.id} style={{ display: 'flex', gap: 10, alignItems: 'center', fontSize: 14, color: 'var(--color12)' }}>
                <input
                  type="radio"
                  name="factor"
                  value={factor.id}
                  checked={factorId === factor.id}
                  onChange={() => setFactorId(factor.id)}
                  style={{ width: 16, height: 16, margin: 0, accentColor: 'var(--color11)' }}
                />
                {factor.label}
              </label>
            ))}
          </fieldset>
        ) : null}
        {/* Never disabled while the factors load: a disabled field cannot take the focus it is given on arrival. */}
        <Field
          label="Code"
          name="code"
          value={code}
          onChange={setCode}
          autoComplete="one-time-code"
          inputMode="numeric"
          maxLength={9}
          autoFocus
          error={error}
          inputRef={codeField}
        />
        {loadFailed ? (
          <SecondaryButton onPress={retry}>Try again</SecondaryButton>
        ) : (
          <SubmitButton pending={pending || factorId === null} pendingLabel={factorId === null ? 'Loading…' : 'Verifying…'} disabled={held.text !== null}>
            Verify
          </SubmitButton>
        )}
      </AuthForm>
      <CardNote>
        Not you, or no access to the app?{' '}
        <button type="button" className="text-link link-button" disabled={signingOut} onClick={() => void signOut()}>
          {signingOut ? 'Signing out…' : 'Sign out'}
        </button>
      </CardNote>
    </AuthCard>
  )
}

/** /mfa: the second step of sign-in for a session at aal1 whose user has a verified authenticator app. */
export function MfaScreen() {
  return (
    <RequireSession>
      <Challenge />
    </RequireSession>
  )
}
