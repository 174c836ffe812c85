import Link from 'next/link'
import Router from 'next/router'
import { useState } from 'react'
import { Text } from 'tamagui'

import { toast } from '../toast'
import { readableAuthError } from './auth-errors'
import { AuthCard, AuthForm, Field, FormMessage, SessionPending, SubmitButton } from './form'
import { loadBrowserSupabase } from '../../lib/supabase/browser'
import { useSession } from './SessionProvider'
import { MIN_PASSWORD_LENGTH } from './SignUpScreen'

/** Sets a new password for the session the recovery link started. */
export function ResetPasswordScreen() {
  const { session, isLoading } = useSession()
  const [password, setPassword] = useState('')
  const [confirm, setConfirm] = useState('')
  const [errors, setErrors] = useState<{ password?: string; confirm?: string }>({})
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
    const found: { password?: string; confirm?: string } = {}
    if (password.length < MIN_PASSWORD_LENGTH) found.password = `Use at least ${MIN_PASSWORD_LENGTH} characters.`
    else if (confirm !== password) found.confirm = 'The two passwords are not the same.'
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
        <Field
          label="New password"
          name="password"
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={setPassword}
          error={errors.password}
          hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}
        />
        <Field
          label="Repeat the new password"
          name="confirm"
          type="password"
          autoComplete="new-password"
          value={confirm}
          onChange={setConfirm}
          error={errors.confirm}
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
