export { SessionProvider, SIGN_IN_PATH, useSession, type SessionState } from './SessionProvider'
export { loadBrowserSupabase } from '../../lib/supabase/browser'
export { readableAuthError, type AuthField, type ReadableAuthError } from './auth-errors'
export { readableGuestSaveError, readableGuestStartError, waitFromMessage } from './guest-errors'
export {
  AuthCard,
  AuthForm,
  CardNote,
  checkNewAccount,
  checkNewPassword,
  emailError,
  FormMessage,
  isEmail,
  MIN_PASSWORD_LENGTH,
  SecondaryButton,
  SessionPending,
  SubmitButton,
  type NewAccountErrors,
  type NewPasswordErrors,
} from './form'
export { Field, NewPasswordFields, type FieldProps } from './fields'
export { NewAccountFields } from './new-account-fields'
export { useNewPassword } from './use-new-password'
export { RequireSession } from './RequireSession'
export { SignInScreen } from './SignInScreen'
export { confirmUrl, useNextParam } from './next-param'
export { useRetryWait, WaitMessage } from './retry-wait'
export { SignUpScreen } from './SignUpScreen'
export { ForgotPasswordScreen } from './ForgotPasswordScreen'
export { ResetPasswordScreen } from './ResetPasswordScreen'
export { ConfirmScreen, type ConfirmScreenProps } from './ConfirmScreen'
export { UserMenu, displayNameOf } from './UserMenu'
export { readableApiError, isSecondFactorRequired, secondFactorPath, toastApiError } from './second-factor'
