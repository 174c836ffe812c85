import { useRef, type FormEvent, type ReactNode } from 'react'
import { Button, H1, Paragraph, Text, Theme, XStack, YStack } from 'tamagui'

import { AlertCircleIcon, CheckCircleIcon, SpinnerIcon } from '../../ui/icons'
import { Panel, PANEL_SHADOW } from '../../ui/Panel'

/** The centred card every auth screen sits in: heading, optional lead text, content. */
export function AuthCard({ title, lead, children }: { title: string; lead?: ReactNode; children: ReactNode }) {
  return (
    <YStack width="100%" maxWidth={440} marginHorizontal="auto" gap="$5">
      <YStack gap="$2">
        <H1 aria-level={1} fontSize="$9" lineHeight="$9" fontWeight="800" color="$color12" letterSpacing={-0.5}>
          {title}
        </H1>
        {lead ? (
          <Paragraph fontSize="$4" lineHeight="$4" color="$color11">
            {lead}
          </Paragraph>
        ) : null}
      </YStack>
      <Panel boxShadow={PANEL_SHADOW}>{children}</Panel>
    </YStack>
  )
}

/**
 * A native <form> (Enter submits, browsers offer autofill) whose submit never reloads the page. After a submit
 * that left a field invalid, focus moves to the first such field, whose error is its description.
 */
export function AuthForm({
  onSubmit,
  label,
  children,
}: {
  onSubmit: () => void | Promise<void>
  label: string
  children: ReactNode
}) {
  const formRef = useRef<HTMLFormElement>(null)
  return (
    <form
      ref={formRef}
      aria-label={label}
      noValidate
      onSubmit={(event: FormEvent<HTMLFormElement>) => {
        event.preventDefault()
        const focusedAtSubmit = document.activeElement
        void Promise.resolve(onSubmit()).then(() => {
          requestAnimationFrame(() => {
            const invalid = formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')
            if (!invalid || invalid.contains(document.activeElement)) return
            // Only while focus is still where the submit left it (or dropped to <body> by a button that was
            // disabled while pending): a user who has already moved on (Shift+Tab after a server error) keeps
            // their place instead of being pulled back a frame later.
            const active = document.activeElement
            if (active !== focusedAtSubmit && active !== null && active !== document.body) return
            invalid.focus()
          })
        })
      }}
      style={{ display: 'flex', flexDirection: 'column', gap: 16 }}
    >
      {children}
    </form>
  )
}


/** The form's main button; while pending it says what is happening and cannot be pressed twice. */
export function SubmitButton({ pending, children, pendingLabel }: { pending: boolean; children: string; pendingLabel: string }) {
  return (
    <Button
      type="submit"
      theme="accent"
      size="$4"
      disabled={pending}
      aria-disabled={pending || undefined}
      opacity={pending ? 0.75 : 1}
      icon={pending ? <SpinnerIcon size={16} className="spin" /> : undefined}
      focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid', outlineOffset: 2 }}
    >
      <Text fontSize="$4" fontWeight="600" color="$color">
        {pending ? pendingLabel : children}
      </Text>
    </Button>
  )
}

/** A secondary action inside a form (type=button, so Enter never triggers it). */
export function SecondaryButton({ onPress, disabled, children }: { onPress: () => void; disabled?: boolean; children: string }) {
  return (
    <Button
      type="button"
      size="$4"
      onPress={onPress}
      disabled={disabled}
      opacity={disabled ? 0.75 : 1}
      borderWidth={1}
      borderColor="$borderColor"
      backgroundColor="$background"
      focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid', outlineOffset: 2 }}
    >
      <Text fontSize="$4" fontWeight="600" color="$color12">
        {children}
      </Text>
    </Button>
  )
}

/** A form-level message: errors are announced at once (role=alert), confirmations politely (role=status). */
export function FormMessage({ kind, children }: { kind: 'error' | 'success'; children: ReactNode }) {
  return (
    <Theme name={kind === 'error' ? 'red' : 'green'}>
      <XStack
        role={kind === 'error' ? 'alert' : 'status'}
        gap="$2"
        alignItems="flex-start"
        backgroundColor="$color2"
        borderWidth={1}
        borderColor="$color6"
        borderRadius="$4"
        padding="$3"
      >
        <Text color="$color11" display="flex" paddingTop={2}>
          {kind === 'error' ? <AlertCircleIcon size={16} /> : <CheckCircleIcon size={16} />}
        </Text>
        <Text fontSize="$3" lineHeight="$3" color="$color12" flex={1}>
          {children}
        </Text>
      </XStack>
    </Theme>
  )
}

/** Shown instead of a protected page's content while the session is read: never signed-out content. */
export function SessionPending() {
  return (
    <YStack role="status" aria-live="polite" alignItems="center" padding="$8" gap="$2">
      <Text color="$color11" display="flex">
        <SpinnerIcon size={22} className="spin" />
      </Text>
      <Text fontSize="$3" color="$color11">
        Loading your account…
      </Text>
    </YStack>
  )
}

export const isEmail = (value: string): boolean => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value.trim())

/** The email field's own check, before any call: undefined when the address looks valid. */
export function emailError(email: string, emptyMessage = 'Enter your email address.'): string | undefined {
  if (isEmail(email)) return undefined
  return email.trim() ? 'Enter a valid email address, like name@example.com.' : emptyMessage
}

/** Shown under a new-password field and checked before any call: the auth server's minimum (localbase and Supabase's default). */
export const MIN_PASSWORD_LENGTH = 6

export interface NewPasswordErrors {
  password?: string
  confirm?: string
}

/** The rule for choosing a new password: long enough, and typed the same twice. */
export function checkNewPassword(password: string, confirm: string): NewPasswordErrors {
  if (password.length < MIN_PASSWORD_LENGTH) return { password: `Use at least ${MIN_PASSWORD_LENGTH} characters.` }
  if (confirm !== password) return { confirm: 'The two passwords are not the same.' }
  return {}
}

export interface NewAccountErrors {
  email?: string
  password?: string
}

/** A new account's email and password (sign-up, a guest adding them): a valid address, a long enough password. */
export function checkNewAccount(email: string, password: string): NewAccountErrors {
  const errors: NewAccountErrors = {}
  const badEmail = emailError(email)
  if (badEmail) errors.email = badEmail
  if (password.length < MIN_PASSWORD_LENGTH) errors.password = `Use at least ${MIN_PASSWORD_LENGTH} characters.`
  return errors
}
