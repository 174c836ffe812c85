import { useState } from 'react'

import { toast } from '../toast'
import { readableAuthError } from './auth-errors'
import { checkNewPassword, type NewPasswordErrors } from './form'
import { loadBrowserSupabase } from '../../lib/supabase/browser'

/**
 * The state and the save of a "new password" form (reset by email, change in account settings): the rule is
 * checked before any call, the auth server's refusal lands beside the field or in a toast, and what was typed
 * stays until the change went through. `onChanged` says what follows a success (a toast, a redirect).
 */
export function useNewPassword(onChanged: () => void | Promise<void>) {
  const [password, setPassword] = useState('')
  const [confirm, setConfirm] = useState('')
  const [errors, setErrors] = useState<NewPasswordErrors>({})
  const [pending, setPending] = useState(false)

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
      setPassword('')
      setConfirm('')
      await onChanged()
    } catch (error) {
      toast.error('Password not changed', readableAuthError(error).message)
    } finally {
      setPending(false)
    }
  }

  /** Props for <NewPasswordFields>. */
  const fields = { password, confirm, onPasswordChange: setPassword, onConfirmChange: setConfirm, errors }
  return { fields, pending, save }
}
