import Link from 'next/link'
import Router from 'next/router'
import { useState } from 'react'
import { Text } from 'tamagui'

import { toast } from '../toast'
import { readableAuthError } from './auth-errors'
import { NewPasswordFields } from './fields'
import { AuthCard, AuthForm, checkNewPassword, FormMessage, SessionPending, SubmitButton, type NewPasswordErrors } from './form'
import { loadBrowserSupabase } from '../../lib/supabase/browser'
import { useSession } from './SessionProvider'

/** Sets a new password for the session the recovery link started. */
export function ResetPasswordScreen() {
  const { session, isLoading } = useSession()
  const [password, setPassword] = useState('')
  const [confirm, setConfirm] = useState('')
  const [errors, setErrors] = useState<NewPasswordErrors>({})
  const [pending, setPending] = useState(false)

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

  async function save() {
    const found = checkNewPassword(password, confirm)
    setErrors(found)
    if (Object.keys(found).length > 0) return
    setPending(true)
    try {
      const { error } = await (await loadBrowserSupabase()).auth.updateUser({ password })
      if (error) {
        const readable = readableAuthError(error)
        if (readable.field === 'password') setErrors({ password: readable.message })
        else toast.error('Password not changed', readable.message)
        return
      }
      toast.success('Password changed', 'Use your new password the next time you sign in.')
      await Router.replace('/')
    } catch (error) {
      toast.error('Password not changed', readableAuthError(error).message)
    } finally {
      setPending(false)
    }
  }

  return (
    <AuthCard title="Choose a new password" lead={<>For {session.user.email}. You stay signed in afterwards.</>}>
      <AuthForm label="Set a new password" onSubmit={save}>
        <NewPasswordFields
          password={password}
          confirm={confirm}
          onPasswordChange={setPassword}
          onConfirmChange={setConfirm}
          errors={errors}
        />
        <SubmitButton pending={pending} pendingLabel="Saving…">
          Save new password
        </SubmitButton>
      </AuthForm>
      <Text fontSize="$2" color="$color11" textAlign="center">
        Your other devices are signed out when the password changes.
      </Text>
    </AuthCard>
  )
}
