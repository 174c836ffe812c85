import dynamic from 'next/dynamic'
import Link from 'next/link'
import { useCallback, useEffect, useRef, useState } from 'react'
import { H1, H2, Paragraph, Text, XStack, YStack, type TamaguiElement } from 'tamagui'

import { FormMessage, RequireSession, SecondaryButton, SessionPending, loadBrowserSupabase } from '../auth'
import { toast } from '../toast'
import { Panel } from '../../ui/Panel'
import type { Enrollment } from './EnrollPanel'
import { readableFactorError } from './factor-errors'
import { PageTitle } from '../../lib/page-title'
import { mfaPathFor } from '../../lib/safe-next'
import {
  factorStatusLabel,
  formatCreated,
  nextFactorName,
  removeFactorError,
  type FactorSummary,
  type RemoveFactorError,
} from './factors'

const EnrollPanel = dynamic(() => import('./EnrollPanel'), { ssr: false, loading: () => <SessionPending /> })

/**
 * A confirm-in-place (a button that turns into a question and its answers): the button pressed goes away, so focus
 * follows to the first button of the returned ref's element — the question's first answer, then the button again
 * once answered — from the first time the question is asked.
 */
function useFocusFollows(confirming: boolean, pending: boolean) {
  const actions = useRef<HTMLDivElement>(null)
  const asked = useRef(false)
  useEffect(() => {
    if (confirming) asked.current = true
    if (asked.current) actions.current?.querySelector('button')?.focus()
  }, [confirming, pending])
  return actions
}

function FactorRow({ factor, onRemoved }: { factor: FactorSummary; onRemoved: () => void }) {
  const [confirming, setConfirming] = useState(false)
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<RemoveFactorError | null>(null)
  const name = factor.friendly_name || 'Authenticator app'
  const actions = useFocusFollows(confirming, pending)

  async function remove() {
    setPending(true)
    setError(null)
    try {
      const supabase = await loadBrowserSupabase()
      const { error: removeError } = await supabase.auth.mfa.unenroll({ factorId: factor.id })
      if (removeError?.code === 'mfa_factor_not_found') {
        // removed meanwhile in another tab or on another device: what the user asked for, and the list is old
        toast.success('Authenticator removed', `${name} had already been removed, in another tab or on another device.`)
        await supabase.auth.refreshSession().catch(() => undefined)
        onRemoved()
        return
      }
      if (removeError) {
        const failure = removeFactorError(removeError)
        // The server says this session is at aal1 while the access token may still claim aal2 (the level
        // dropped when the factor it was verified with went). A fresh token makes /mfa ask for the code.
        if (failure.needsCode) await supabase.auth.refreshSession().catch(() => undefined)
        setError(failure)
        toast.error('Could not remove it', failure.message)
        return
      }
      // Removing the factor this session was verified with takes the session back to aal1 on the server; a
      // fresh token carries the level the server now holds (pages and procedures read it from the token).
      await supabase.auth.refreshSession().catch(() => undefined)
      toast.success('Authenticator removed', `${name} no longer signs you in.`)
      onRemoved()
    } catch (thrown) {
      setError({ message: readableFactorError(thrown).message, needsCode: false })
    } finally {
      setPending(false)
      setConfirming(false)
    }
  }

  return (
    <YStack render="li" gap="$2" paddingVertical="$3" borderTopWidth={1} borderTopColor="$borderColor" data-testid="factor-row">
      <div ref={actions} style={{ display: 'contents' }}>
        <XStack gap="$3" alignItems="center" justifyContent="space-between" flexWrap="wrap">
          <YStack gap="$1" flexShrink={1}>
            <Text fontSize="$4" fontWeight="600" color="$color12">
              {name}
            </Text>
            <Text fontSize="$3" color="$color11">
              {factorStatusLabel(factor.status)} · Added {formatCreated(factor.created_at)}
            </Text>
          </YStack>
          {confirming ? null : (
            <SecondaryButton onPress={() => setConfirming(true)} disabled={pending}>
              {`Remove ${name}`}
            </SecondaryButton>
          )}
        </XStack>
        {confirming ? (
          <YStack role="group" aria-label={`Confirm removing ${name}`} gap="$2">
            <Text fontSize="$3" color="$color12">
              Remove {name}? {factor.status === 'verified' ? 'Sign-in will no longer ask for its codes.' : ''}
            </Text>
            <XStack gap="$3" flexWrap="wrap">
              <SecondaryButton onPress={() => void remove()} disabled={pending}>
                {pending ? 'Removing…' : 'Yes, remove it'}
              </SecondaryButton>
              <SecondaryButton onPress={() => setConfirming(false)} disabled={pending}>
                Keep it
              </SecondaryButton>
            </XStack>
          </YStack>
        ) : null}
      </div>
      {error ? (
        <FormMessage kind="error">
          {error.message}
          {error.needsCode ? (
            <>
              {' '}
              <Link href={mfaPathFor('/settings/security')} className="text-link">
                Enter a code
              </Link>
            </>
          ) : null}
        </FormMessage>
      ) : null}
    </YStack>
  )
}

/**
 * Signs out every other session of the account (GoTrue's `scope: 'others'`); the menu's Sign out ends only this
 * browser's (ADR 064). What a session signed out elsewhere can still do until its access token expires: ADR 031.
 */
function OtherDevicesPanel() {
  const [confirming, setConfirming] = useState(false)
  const [pending, setPending] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const actions = useFocusFollows(confirming, pending)

  async function signOutOthers() {
    setPending(true)
    setError(null)
    try {
      // The logout call itself, not auth.signOut({ scope: 'others' }): supabase-js counts that call's 403
      // session_not_found (this browser's own session ended from another device) and any 401/404 as signed out,
      // and answered "no error" though nothing was revoked.
      const auth = (await loadBrowserSupabase()).auth
      const { data } = await auth.getSession()
      const { error: signOutError } = data.session
        ? await auth.admin.signOut(data.session.access_token, 'others')
        : { error: { name: 'AuthSessionMissingError', message: 'Auth session missing!' } }
      if (signOutError) {
        const message = readableFactorError(signOutError).message
        setError(message)
        toast.error('Could not sign out the other devices', message)
        return
      }
      setConfirming(false)
      toast.success('Other devices signed out', 'They need your password to sign in again. This browser stays signed in.')
    } catch (thrown) {
      setError(readableFactorError(thrown).message)
    } finally {
      setPending(false)
    }
  }

  return (
    <Panel render="section" aria-labelledby="devices-heading">
      <YStack gap="$1">
        <H2 id="devices-heading" aria-level={2} fontSize="$6" lineHeight="$6" fontWeight="700" color="$color12">
          Other devices
        </H2>
        <Text fontSize="$3" color="$color11">
          Sign out in the menu ends only this browser&apos;s session. Signed in on a lost phone or a shared computer? Sign
          out everywhere else here; a page already open there can keep showing your notes for up to an hour.
        </Text>
      </YStack>
      {error ? <FormMessage kind="error">{error}</FormMessage> : null}
      <div ref={actions}>
        {confirming ? (
          <YStack role="group" aria-label="Confirm signing out the other devices" gap="$2">
            <Text fontSize="$3" color="$color12">
              Sign out every other browser and device? This one stays signed in.
            </Text>
            <XStack gap="$3" flexWrap="wrap">
              <SecondaryButton onPress={() => void signOutOthers()} disabled={pending}>
                {pending ? 'Signing out…' : 'Yes, sign them out'}
              </SecondaryButton>
              <SecondaryButton onPress={() => setConfirming(false)} disabled={pending}>
                Cancel
              </SecondaryButton>
            </XStack>
          </YStack>
        ) : (
          <XStack>
            <SecondaryButton onPress={() => setConfirming(true)}>Sign out other devices</SecondaryButton>
          </XStack>
        )}
      </div>
    </Panel>
  )
}

function Security() {
  const [factors, setFactors] = useState<FactorSummary[] | null>(null)
  const [loadError, setLoadError] = useState<string | null>(null)
  const [enrollment, setEnrollment] = useState<Enrollment | null>(null)
  const [starting, setStarting] = useState(false)
  const [startError, setStartError] = useState<string | null>(null)
  // After the enrolment panel closes (verified, cancelled) or a removed app's row goes, focus returns to "Add
  // authenticator app" instead of dropping to the page.
  const addButton = useRef<TamaguiElement>(null)
  const refocusAdd = useRef(false)
  useEffect(() => {
    if (enrollment || !refocusAdd.current) return
    const button = (addButton.current as HTMLElement | null)?.querySelector('button')
    if (!button || button.disabled) return
    refocusAdd.current = false
    button.focus()
  }, [enrollment, factors])

  const load = useCallback(async () => {
    try {
      const { data, error } = await (await loadBrowserSupabase()).auth.mfa.listFactors()
      if (error) return setLoadError(readableFactorError(error).message)
      setLoadError(null)
      setFactors(data.all.map((f) => ({ ...f, friendly_name: f.friendly_name ?? undefined })))
    } catch (thrown) {
      setLoadError(readableFactorError(thrown).message)
    }
  }, [])

  useEffect(() => {
    void load()
  }, [load])

  async function start() {
    setStarting(true)
    setStartError(null)
    try {
      const friendlyName = nextFactorName(factors ?? [])
      const { data, error } = await (await loadBrowserSupabase()).auth.mfa.enroll({ factorType: 'totp', friendlyName })
      if (error) {
        const message = readableFactorError(error).message
        setStartError(message)
        toast.error('Could not add an authenticator', message)
        return
      }
      setEnrollment({ factorId: data.id, friendlyName, qrCode: data.totp.qr_code, secret: data.totp.secret })
    } catch (thrown) {
      setStartError(readableFactorError(thrown).message)
    } finally {
      setStarting(false)
    }
  }

  async function cancel() {
    const pending = enrollment
    setEnrollment(null)
    if (pending) {
      // The unverified factor would otherwise linger in the list.
      await (await loadBrowserSupabase()).auth.mfa.unenroll({ factorId: pending.factorId }).catch(() => undefined)
    }
    await load()
  }

  const active = (factors ?? []).filter((f) => f.status === 'verified').length
  return (
    <YStack width="100%" maxWidth={640} marginHorizontal="auto" gap="$5">
      <PageTitle name="Security" />
      <YStack gap="$2">
        <H1 aria-level={1} fontSize="$9" lineHeight="$9" fontWeight="800" color="$color12" letterSpacing={-0.5}>
          Security
        </H1>
        <Paragraph fontSize="$4" lineHeight="$4" color="$color11">
          Two-factor sign-in asks for a code from an authenticator app after your password.{' '}
          <Link href="/settings/account" className="text-link">
            Account settings
          </Link>
        </Paragraph>
      </YStack>
      <Panel render="section" aria-labelledby="factors-heading">
        <YStack gap="$1">
          <H2 id="factors-heading" aria-level={2} fontSize="$6" lineHeight="$6" fontWeight="700" color="$color12">
            Authenticator apps
          </H2>
          <Text fontSize="$3" color="$color11" role="status">
            {factors === null ? '' : active > 0 ? 'Two-factor sign-in is on.' : 'Two-factor sign-in is off.'}
          </Text>
        </YStack>
        {loadError ? (
          <>
            <FormMessage kind="error">{loadError}</FormMessage>
            <XStack>
              <SecondaryButton
                onPress={() => {
                  // The button goes while the apps are read: focus then moves on to "Add authenticator app".
                  refocusAdd.current = true
                  setLoadError(null)
                  void load()
                }}
              >
                Try again
              </SecondaryButton>
            </XStack>
          </>
        ) : null}
        {factors === null && !loadError ? <SessionPending /> : null}
        {factors && factors.length > 0 ? (
          <ul aria-label="Your authenticator apps" style={{ listStyle: 'none', margin: 0, padding: 0 }}>
            {factors.map((factor) => (
              <FactorRow
                key={factor.id}
                factor={factor}
                onRemoved={() => {
                  refocusAdd.current = true
                  void load()
                }}
              />
            ))}
          </ul>
        ) : null}
        {/* Not while one is being added: "No authenticator app yet." above its QR code read as if it had failed. */}
        {factors && factors.length === 0 && !enrollment ? (
          <Text fontSize="$3" color="$color11">
            No authenticator app yet.
          </Text>
        ) : null}
        {startError ? <FormMessage kind="error">{startError}</FormMessage> : null}
        {enrollment ? (
          <EnrollPanel
            enrollment={enrollment}
            onVerified={() => {
              refocusAdd.current = true
              setEnrollment(null)
              void load()
            }}
            onCancel={() => {
              refocusAdd.current = true
              void cancel()
            }}
          />
        ) : (
          <XStack ref={addButton}>
            <SecondaryButton onPress={() => void start()} disabled={starting || factors === null}>
              {starting ? 'Preparing…' : 'Add authenticator app'}
            </SecondaryButton>
          </XStack>
        )}
      </Panel>
      <OtherDevicesPanel />
    </YStack>
  )
}

/** /settings/security: the user's MFA factors — add a TOTP authenticator app, list and remove them — and signing out the other devices. */
export function SecurityScreen() {
  return (
    <RequireSession>
      <Security />
    </RequireSession>
  )
}
