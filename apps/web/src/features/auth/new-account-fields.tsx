// The new-account fields (sign-up, a guest adding an email and password), apart from fields.tsx so that the pages
// that only sign in or reset a password do not load them.
import { Field } from './fields'
import { MIN_PASSWORD_LENGTH, type NewAccountErrors } from './form'

/** "Email" and "Password" of a new account, for the sign-up form and a guest adding them. */
export function NewAccountFields({
  email,
  password,
  onEmailChange,
  onPasswordChange,
  errors,
}: {
  email: string
  password: string
  onEmailChange: (value: string) => void
  onPasswordChange: (value: string) => void
  errors: NewAccountErrors
}) {
  return (
    <>
      <Field label="Email" name="email" type="email" autoComplete="email" value={email} onChange={onEmailChange} error={errors.email} />
      <Field
        label="Password"
        name="password"
        type="password"
        autoComplete="new-password"
        value={password}
        onChange={onPasswordChange}
        error={errors.password}
        hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}
      />
    </>
  )
}
