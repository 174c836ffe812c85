import Link from 'next/link'
import Router from 'next/router'

import { toast } from '../toast'
import { NewPasswordFields } from './fields'
import { AuthCard, AuthForm, CardNote, FormMessage, SessionPending, SubmitButton } from './form'
import { useSession } from './SessionProvider'
import { useNewPassword } from './use-new-password'

/** Sets a new password for the session the recovery link started. */
export function ResetPasswordScreen() {
  const { session, isLoading } = useSession()
  const { fields, pending, save } = useNewPassword(async () => {
    toast.success('Password changed', 'Use your new password the next time you sign in.')
    await Router.replace('/')
  })

  if (isLoading) return <SessionPending />
  if (!session) {
    return (
      <AuthCard title="Reset your password">
        <FormMessage kind="error">
          This page needs the link from your password-reset email, and that link has expired or was already used.
        </FormMessage>
        <Link href="/forgot-password" className="button-link">
          Request a new link
        </Link>
      </AuthCard>
    )
  }

  return (
    <AuthCard title="Choose a new password" lead={<>For {session.user.email}. You stay signed in afterwards.</>}>
      <AuthForm label="Set a new password" onSubmit={save}>
        <NewPasswordFields {...fields} />
        <SubmitButton pending={pending} pendingLabel="Saving…">
          Save new password
        </SubmitButton>
      </AuthForm>
      <CardNote small>Your other devices are signed out when the password changes.</CardNote>
    </AuthCard>
  )
}
