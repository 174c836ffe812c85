// The labelled text fields of the auth and settings forms (Tamagui Input and Label). Kept apart from form.tsx so
// that forms which bring their own fields (the notes editor) load the form parts without Input and Label.
import { useId } from 'react'
import { Input, Label, Text, Theme, XStack, YStack } from 'tamagui'

import { AlertCircleIcon } from '../../ui/icons'
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
}: FieldProps) {
  const id = useId()
  const hintId = `${id}-hint`
  const errorId = `${id}-error`
  const describedBy = [hint ? hintId : null, error ? errorId : null].filter(Boolean).join(' ') || undefined
  return (
    <YStack gap="$1.5">
      <Label htmlFor={id} fontSize="$3" lineHeight="$3" fontWeight="600" color="$color12">
        {label}
      </Label>
      <Input
        id={id}
        name={name}
        type={type}
        value={value}
        onChange={(event: React.ChangeEvent<HTMLInputElement>) => onChange(event.target.value)}
        autoComplete={autoComplete}
        autoFocus={autoFocus}
        inputMode={inputMode}
        maxLength={maxLength}
        disabled={disabled}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
        size="$4"
        borderColor={error ? '$red9' : '$borderColor'}
        focusStyle={{ borderColor: error ? '$red10' : '$color9' }}
        backgroundColor="$background"
        color="$color12"
      />
      {hint ? (
        <Text id={hintId} fontSize="$2" lineHeight="$2" color="$color11">
          {hint}
        </Text>
      ) : null}
      {error ? (
        <XStack id={errorId} gap="$1.5" alignItems="flex-start">
          <Theme name="red">
            <Text color="$color11" display="flex" paddingTop={2}>
              <AlertCircleIcon size={14} />
            </Text>
            <Text fontSize="$3" lineHeight="$3" color="$color11">
              {error}
            </Text>
          </Theme>
        </XStack>
      ) : null}
    </YStack>
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
