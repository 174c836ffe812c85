import { useEffect, useRef, useState } from 'react'
import { Text, XStack, YStack, type TamaguiElement } from 'tamagui'

import { AuthForm, Field, FormMessage, SecondaryButton, SubmitButton, useRetryWait, WaitMessage } from '../auth'
import { toast } from '../toast'
import { groupSecret, qrImageSrc } from './factors'
import { verifyTotpCode } from './verify-code'

export interface Enrollment {
  factorId: string
  friendlyName: string
  qrCode: string
  secret: string
}

/**
 * Step two of adding an authenticator app: the QR code to scan, the secret to type instead, and the first code
 * to verify. Loaded only when the user starts enrolling (kept out of the page's first load).
 */
export default function EnrollPanel({
  enrollment,
  onVerified,
  onCancel,
}: {
  enrollment: Enrollment
  onVerified: () => void
  onCancel: () => void
}) {
  const [code, setCode] = useState('')
  const [error, setError] = useState<string | undefined>()
  const [formError, setFormError] = useState<string | null>(null)
  const [pending, setPending] = useState(false)
  const [copied, setCopied] = useState(false)
  // The hold the server asked for after too many wrong codes (per account), counting down with the button waiting.
  const held = useRetryWait('')
  // "Add authenticator app" went away when pressed: focus moves to the panel that replaced it, read from its first step.
  const panel = useRef<TamaguiElement>(null)
  useEffect(() => panel.current?.focus(), [])

  async function copySecret() {
    try {
      await navigator.clipboard.writeText(enrollment.secret)
      setCopied(true)
      toast.success('Secret copied', 'Paste it into your authenticator app.')
    } catch {
      toast.error('Could not copy', 'Select the secret and copy it yourself.')
    }
  }

  async function verify() {
    setFormError(null)
    setError(undefined)
    setPending(true)
    const result = await verifyTotpCode(enrollment.factorId, code)
    setPending(false)
    if (!result.ok) {
      if (held.start(result)) return
      if (result.field === 'code') setError(result.message)
      else setFormError(result.message)
      return
    }
    toast.success('Two-factor sign-in is on', `${enrollment.friendlyName} will ask for a code when you sign in.`)
    onVerified()
  }

  return (
    <YStack ref={panel} tabIndex={-1} role="group" aria-label="Add an authenticator app" gap="$4" data-testid="enroll-panel">
      <Text fontSize="$4" lineHeight="$4" color="$color12">
        1. Scan this QR code with your authenticator app (1Password, Google Authenticator, Authy, …).
      </Text>
      <YStack alignSelf="flex-start" backgroundColor="white" padding="$2" borderRadius="$4" borderWidth={1} borderColor="$borderColor">
        <img
          src={qrImageSrc(enrollment.qrCode)}
          alt={`QR code to add ${enrollment.friendlyName} to your authenticator app`}
          width={184}
          height={184}
        />
      </YStack>
      <YStack gap="$2">
        <Text fontSize="$4" lineHeight="$4" color="$color12">
          Can’t scan it? Type this secret into the app instead:
        </Text>
        <XStack gap="$3" alignItems="center" flexWrap="wrap">
          <Text fontSize="$4" color="$color12" backgroundColor="$color3" paddingHorizontal="$2" paddingVertical="$1" borderRadius="$2">
            <code data-testid="totp-secret" data-secret={enrollment.secret} style={{ fontFamily: 'ui-monospace, Menlo, Consolas, monospace', userSelect: 'all' }}>
              {groupSecret(enrollment.secret)}
            </code>
          </Text>
          <SecondaryButton onPress={() => void copySecret()}>{copied ? 'Copied' : 'Copy secret'}</SecondaryButton>
        </XStack>
      </YStack>
      <AuthForm label="Verify authenticator app" onSubmit={verify}>
        {formError ? <FormMessage kind="error">{formError}</FormMessage> : null}
        {held.text ? <WaitMessage text={held.text} /> : null}
        <Field
          label="2. Enter the 6-digit code from the app"
          name="code"
          value={code}
          onChange={setCode}
          autoComplete="one-time-code"
          inputMode="numeric"
          maxLength={9}
          error={error}
        />
        <XStack gap="$3" flexWrap="wrap">
          <SubmitButton pending={pending} pendingLabel="Verifying…" disabled={held.text !== null}>
            Verify and turn on
          </SubmitButton>
          <SecondaryButton onPress={onCancel} disabled={pending}>
            Cancel
          </SecondaryButton>
        </XStack>
      </AuthForm>
    </YStack>
  )
}
