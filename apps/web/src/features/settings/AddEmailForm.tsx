import Router from 'next/router'
import { useState } from 'react'
import { YStack } from 'tamagui'

import {
  AuthForm,
  checkNewAccount,
  confirmUrl,
  emailError,
  Field,
  FormMessage,
  loadBrowserSupabase,
  NewAccountFields,
  readableGuestSaveError,
  SubmitButton,
  useRetryWait,
  useSession,
  WaitMessage,
  type NewAccountErrors,
} from '../auth'
import { toast } from '../toast'
import { SAVED_PATH } from '../../lib/guest'

/**
 * A guest keeps their notes by adding an email and password: one `updateUser({ email, password })` on the guest's
 * own user, so the id (and every note) stays. With email confirmations on, the auth server mails a link to the
 * address and the guest stays a guest until it is opened (in this browser: the link's PKCE verifier is here); it
 * lands on the account page's finished state. With confirmations off the address is taken at once.
 */
export function AddEmailForm() {
  const { user } = useSession()
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const [errors, setErrors] = useState<NewAccountErrors>({})
  const [formError, setFormError] = useState<string | null>(null)
  const [sentTo, setSentTo] = useState<string | null>(user?.new_email ?? null)
  const [pending, setPending] = useState(false)
  // The auth server's least time between two such mails to this user (ADR 141), counting down.
  const wait = useRetryWait('')

  async function save() {
    // Once the link was sent the password is saved (the server set it with the first request; sending it again
    // would be refused as the same one): "Send the link again" sends the address alone.
    const resend = sentTo !== null
    const badEmail = emailError(email)
    const found: NewAccountErrors = resend ? (badEmail ? { email: badEmail } : {}) : checkNewAccount(email, password)
    setErrors(found)
    setFormError(null)
    if (Object.keys(found).length > 0) return
    setPending(true)
    try {
      const client = await loadBrowserSupabase()
      const address = email.trim()
      const { data, error } = await client.auth.updateUser(resend ? { email: address } : { email: address, password }, {
        emailRedirectTo: confirmUrl(SAVED_PATH),
      })
      if (error) {
        const readable = readableGuestSaveError(error)
        const retry = readable.retry && { seconds: readable.retry.seconds, say: (when: string) => `A link was just sent. Wait ${when} before asking for another.` }
        if (wait.start({ retry })) return
        if (readable.field === 'email' || readable.field === 'password') setErrors({ [readable.field]: readable.message })
        else setFormError(readable.message)
        return
      }
      if (data.user.email && data.user.is_anonymous !== true) {
        // Confirmations off: the account is permanent now. A fresh token drops the guest claim at once.
        await client.auth.refreshSession()
        toast.success('Your account is saved', `Sign in with ${data.user.email} from now on. Your notes are kept.`)
        await Router.replace(SAVED_PATH)
        return
      }
      setPassword('')
      setSentTo(data.user.new_email ?? address)
    } catch (error) {
      setFormError(readableGuestSaveError(error).message)
    } finally {
      setPending(false)
    }
  }

  return (
    <AuthForm label="Add email and password" onSubmit={save}>
      {formError ? <FormMessage kind="error">{formError}</FormMessage> : null}
      {sentTo ? (
        <FormMessage kind="success">
          Check your mailbox: we sent a link to {sentTo}. Open it in this browser to finish — until then you are still a
          guest and your notes stay here. Wrong address? Enter another one below; your password is kept.
        </FormMessage>
      ) : null}
      {wait.text ? <WaitMessage text={wait.text} /> : null}
      {sentTo ? (
        <Field label="Email" name="email" type="email" autoComplete="email" value={email} onChange={setEmail} error={errors.email} />
      ) : (
        <NewAccountFields email={email} password={password} onEmailChange={setEmail} onPasswordChange={setPassword} errors={errors} />
      )}
      <YStack alignSelf="flex-start">
        <SubmitButton pending={pending} pendingLabel="Saving…" disabled={wait.text !== null}>
          {sentTo ? 'Send the link again' : 'Add email and password'}
        </SubmitButton>
      </YStack>
    </AuthForm>
  )
}
