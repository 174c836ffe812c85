// The labelled text fields of the auth and settings forms: a native <label> and <input> drawn as Tamagui's Label and
// Input were (ui/controls.module.css, auth.module.css; ADR 053). Kept apart from form.tsx so that forms which bring
// their own fields (the notes editor) load the form parts without them.
import { useId, type Ref } from 'react'

import controls from '../../ui/controls.module.css'
import { AlertCircleIcon } from '../../ui/icons'
import styles from './auth.module.css'
import { MIN_PASSWORD_LENGTH, type NewPasswordErrors } from './form'

export interface FieldProps {
  label: string
  name: string
  type?: 'email' | 'password' | 'text'
  value: string
  onChange: (value: string) => void
  autoComplete?: string
  error?: string | undefined
  hint?: string
  disabled?: boolean
  autoFocus?: boolean
  /** Virtual keyboard hint, e.g. `numeric` for one-time codes. */
  inputMode?: 'numeric' | 'text' | 'email'
  maxLength?: number
  inputRef?: Ref<HTMLInputElement>
}

/** A labelled input with its hint and error beside it (aria-describedby / aria-invalid). */
export function Field({
  label,
  name,
  type = 'text',
  value,
  onChange,
  autoComplete,
  error,
  hint,
  disabled,
  autoFocus,
  inputMode,
  maxLength,
  inputRef,
}: FieldProps) {
  const id = useId()
  const hintId = `${id}-hint`
  const errorId = `${id}-error`
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined
  return (
    <div className={styles.field}>
      <label htmlFor={id} className={styles.label}>
        {label}
      </label>
      <input
        ref={inputRef}
        id={id}
        name={name}
        type={type}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        autoComplete={autoComplete}
        autoFocus={autoFocus}
        inputMode={inputMode}
        maxLength={maxLength}
        disabled={disabled}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
        className={controls.input}
      />
      {hint ? (
        <span id={hintId} className={styles.hint}>
          {hint}
        </span>
      ) : null}
      {error ? (
        <span id={errorId} className={`${styles.fieldError} t_red`}>
          <AlertCircleIcon size={14} />
          <span>{error}</span>
        </span>
      ) : null}
    </div>
  )
}

/** "New password" and "Repeat the new password", for the reset and change-password forms. */
export function NewPasswordFields({
  password,
  confirm,
  onPasswordChange,
  onConfirmChange,
  errors,
}: {
  password: string
  confirm: string
  onPasswordChange: (value: string) => void
  onConfirmChange: (value: string) => void
  errors: NewPasswordErrors
}) {
  return (
    <>
      <Field
        label="New password"
        name="newPassword"
        type="password"
        autoComplete="new-password"
        value={password}
        onChange={onPasswordChange}
        error={errors.password}
        hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}
      />
      <Field
        label="Repeat the new password"
        name="confirmPassword"
        type="password"
        autoComplete="new-password"
        value={confirm}
        onChange={onConfirmChange}
        error={errors.confirm}
      />
    </>
  )
}
