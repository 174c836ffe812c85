// The parts every auth form is made of (card, form, buttons, messages), as plain HTML styled by auth.module.css and
// ui/controls.module.css with Tamagui's tokens and theme variables: the sign-in, sign-up and password pages load no
// Tamagui runtime (ADR 053). Screens that still use Tamagui components render these inside their TamaguiScope.
import { useRef, useState, type FormEvent, type ReactNode } from 'react'

import { PageTitle } from '../../lib/page-title'
import { onSessionScopeChange } from '../../lib/session-scope'
import controls from '../../ui/controls.module.css'
import { AlertCircleIcon, CheckCircleIcon, SpinnerIcon } from '../../ui/icons'
import panel from '../../ui/panel.module.css'
import styles from './auth.module.css'

/** The centred card every auth screen sits in: heading (also the document's title), optional lead text, content. */
export function AuthCard({ title, lead, children }: { title: string; lead?: ReactNode; children: ReactNode }) {
  return (
    <div className={styles.card}>
      <PageTitle name={title} />
      <div className={styles.heading}>
        <h1 className={styles.title}>{title}</h1>
        {lead ? <p className={styles.lead}>{lead}</p> : null}
      </div>
      <div className={`${panel.panel} ${panel.raised}`}>{children}</div>
    </div>
  )
}

/** A line of small text under a form (a way elsewhere, a remark), centred in the card. */
export function CardNote({ children, small = false }: { children: ReactNode; small?: boolean }) {
  return <p className={small ? `${styles.note} ${styles.noteSmall}` : styles.note}>{children}</p>
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
        // A submit button that is waiting (pending, or a wait the server asked for) is aria-disabled, not disabled,
        // so that it keeps keyboard focus; pressing it, or Enter in a field, then does nothing.
        const submitter = (event.nativeEvent as SubmitEvent).submitter
        if (submitter?.getAttribute('aria-disabled') === 'true') return
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
      className={styles.form}
    >
      {children}
    </form>
  )
}


/** The email last typed on an auth page, kept in memory only (never in a URL) for the next one. */
let typedEmail = ''
// …until a session starts (signed in here or in another tab, or as a guest): it was that user's, and after their
// sign-out the next person at this computer must not find it filled in. (Signed out, the scope is ":full".)
onSessionScopeChange((scope) => {
  if (!scope.startsWith(':')) typedEmail = ''
})

/** An auth form's email, starting from the one typed on the auth page before (sign-in ↔ forgot password ↔ sign-up). */
export function useTypedEmail(): [string, (value: string) => void] {
  const [email, setEmail] = useState(() => typedEmail)
  return [email, (value) => setEmail((typedEmail = value))]
}

/**
 * The form's main button; while pending it says what is happening and cannot be pressed twice. Unavailable buttons
 * here are aria-disabled rather than disabled: a disabled button loses keyboard focus to <body> (AuthForm ignores
 * the press).
 */
export function SubmitButton({
  pending,
  children,
  pendingLabel,
  disabled = false,
}: {
  pending: boolean
  children: string
  pendingLabel: string
  disabled?: boolean
}) {
  return (
    <button type="submit" className={`${controls.button} t_accent`} aria-disabled={pending || disabled || undefined}>
      {pending ? <SpinnerIcon size={16} /> : null}
      {pending ? pendingLabel : children}
    </button>
  )
}

/**
 * A secondary action inside a form (type=button, so Enter never triggers it). While unavailable it is aria-disabled
 * and ignores presses, so that it keeps keyboard focus (a disabled button drops it to <body>).
 */
export function SecondaryButton({ onPress, disabled, children }: { onPress: () => void; disabled?: boolean; children: string }) {
  return (
    <button
      type="button"
      className={`${controls.button} ${controls.outlined}`}
      onClick={() => {
        if (!disabled) onPress()
      }}
      aria-disabled={disabled || undefined}
    >
      {children}
    </button>
  )
}

/** A form-level message: errors are announced at once (role=alert), confirmations politely (role=status). */
export function FormMessage({ kind, children }: { kind: 'error' | 'success'; children: ReactNode }) {
  return (
    <div role={kind === 'error' ? 'alert' : 'status'} className={`${styles.message} ${kind === 'error' ? 't_red' : 't_green'}`}>
      <span className={styles.messageIcon}>{kind === 'error' ? <AlertCircleIcon size={16} /> : <CheckCircleIcon size={16} />}</span>
      <div className={styles.messageText}>{children}</div>
    </div>
  )
}

/** Shown instead of a protected page's content while the session is read: never signed-out content. */
export function SessionPending() {
  return (
    <div role="status" aria-live="polite" className={styles.pending}>
      <SpinnerIcon size={22} />
      <span>Loading your account…</span>
    </div>
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

/** The auth server's maximum: bcrypt reads 72 bytes, so Supabase Auth (counting bytes) and localbase refuse longer. */
export const MAX_PASSWORD_LENGTH = 72

/** A new password's length rule, before any call: undefined when it is long enough and not too long. */
function passwordLengthError(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `Use at least ${MIN_PASSWORD_LENGTH} characters.`
  if (new TextEncoder().encode(password).length <= MAX_PASSWORD_LENGTH) return undefined
  return password.length > MAX_PASSWORD_LENGTH
    ? `Use at most ${MAX_PASSWORD_LENGTH} characters.`
    : `Too long: accented letters and emoji count as 2 to 4 of the ${MAX_PASSWORD_LENGTH} characters allowed.`
}

export interface NewPasswordErrors {
  password?: string
  confirm?: string
}

/** The rule for choosing a new password: long enough, not too long, and typed the same twice. */
export function checkNewPassword(password: string, confirm: string): NewPasswordErrors {
  const tooShortOrLong = passwordLengthError(password)
  if (tooShortOrLong) return { password: tooShortOrLong }
  if (confirm !== password) return { confirm: 'The two passwords are not the same.' }
  return {}
}

export interface NewAccountErrors {
  email?: string
  password?: string
}

/** A new account's email and password (sign-up, a guest adding them): a valid address, a password of an allowed length. */
export function checkNewAccount(email: string, password: string): NewAccountErrors {
  const errors: NewAccountErrors = {}
  const badEmail = emailError(email)
  if (badEmail) errors.email = badEmail
  const badPassword = passwordLengthError(password)
  if (badPassword) errors.password = badPassword
  return errors
}
