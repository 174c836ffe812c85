import dynamic from 'next/dynamic'
import Link from 'next/link'
import { useRouter } from 'next/router'
import { useState, type ReactNode } from 'react'
import { H1, H2, Paragraph, YStack } from 'tamagui'

import {
  AuthForm,
  confirmUrl,
  displayNameOf,
  Field,
  FormMessage,
  isEmail,
  NewPasswordFields,
  readableAuthError,
  RequireSession,
  SubmitButton,
  useSession,
  loadBrowserSupabase,
  useNewPassword,
  useRetryWait,
  WaitMessage,
} from '../auth'
import { isGuest } from '../../lib/guest'
import { PageTitle } from '../../lib/page-title'
import { toast } from '../toast'
import { Panel } from '../../ui/Panel'

function Section({ id, title, description, children }: { id: string; title: string; description: string; children: ReactNode }) {
  return (
    <Panel render="section" aria-labelledby={id}>
      <YStack gap="$1">
        <H2 id={id} aria-level={2} fontSize="$6" lineHeight="$6" fontWeight="700" color="$color12">
          {title}
        </H2>
        <Paragraph fontSize="$3" lineHeight="$3" color="$color11">
          {description}
        </Paragraph>
      </YStack>
      {children}
    </Panel>
  )
}

// Only guests get the form that makes their account permanent: a chunk of its own.
const AddEmailForm = dynamic(() => import('./AddEmailForm').then((m) => m.AddEmailForm))
// The picture's upload code (tRPC client, XHR upload) is a chunk of its own, fetched by this page only (ADR 037).
const AvatarField = dynamic(() => import('./AvatarField').then((m) => m.AvatarField), { ssr: false, loading: () => <YStack minHeight={132} /> })

function ProfileForm() {
  const { user } = useSession()
  const current = typeof user?.user_metadata?.display_name === 'string' ? (user.user_metadata.display_name as string) : ''
  const [name, setName] = useState(current)
  const [error, setError] = useState<string | undefined>()
  const [pending, setPending] = useState(false)

  async function save() {
    const trimmed = name.trim()
    if (trimmed.length > 80) return setError('Use at most 80 characters.')
    setError(undefined)
    setPending(true)
    try {
      const { error: failure } = await (await loadBrowserSupabase()).auth.updateUser({ data: { display_name: trimmed === '' ? null : trimmed } })
      if (failure) return setError(readableAuthError(failure).message)
      toast.success('Name saved', trimmed ? `You appear as ${trimmed}.` : 'You appear by your email address.')
    } catch (failure) {
      setError(readableAuthError(failure).message)
    } finally {
      setPending(false)
    }
  }

  return (
    <AuthForm label="Display name" onSubmit={save}>
      <Field label="Display name" name="displayName" autoComplete="name" value={name} onChange={setName} error={error} hint="Shown in the header instead of your email." />
      <YStack alignSelf="flex-start">
        <SubmitButton pending={pending} pendingLabel="Saving…">
          Save name
        </SubmitButton>
      </YStack>
    </AuthForm>
  )
}

function EmailForm() {
  const { user } = useSession()
  const [email, setEmail] = useState('')
  const [error, setError] = useState<string | undefined>()
  const [pending, setPending] = useState(false)
  // A change asked for (here, on another visit or device) and not yet confirmed from both addresses: the user's own
  // record, so the message goes when the links are opened (in another tab too) and never names the new address twice.
  const sentTo = user?.new_email ?? null
  // The auth server's least time between two email changes of this user (GoTrue's SMTP_MAX_FREQUENCY, ADR 141):
  // per user, whatever address is typed, so the wait holds for any.
  const wait = useRetryWait('')

  async function save() {
    if (!isEmail(email)) return setError(email.trim() ? 'Enter a valid email address, like name@example.com.' : 'Enter the new email address.')
    if (email.trim().toLowerCase() === user?.email?.toLowerCase()) return setError('That is already your email address.')
    setError(undefined)
    setPending(true)
    try {
      const { error: failure } = await (await loadBrowserSupabase()).auth.updateUser({ email: email.trim() }, { emailRedirectTo: confirmUrl('/settings/account') })
      // Taken by another account: not the sign-up form's "Sign in instead", which makes no sense to a signed-in user.
      if (failure?.code === 'email_exists' || failure?.code === 'user_already_exists') return setError('This email already belongs to another account. Use a different address.')
      if (failure) {
        const readable = readableAuthError(failure)
        // The links went to the addresses of the change asked for before, not necessarily the one typed now.
        const retry = readable.retry && { seconds: readable.retry.seconds, say: (when: string) => `Links for an email change were just sent. Wait ${when} before asking for another.` }
        if (!wait.start({ retry })) setError(readable.message)
        return
      }
    } catch (failure) {
      setError(readableAuthError(failure).message)
    } finally {
      setPending(false)
    }
  }

  return (
    <AuthForm label="Change email" onSubmit={save}>
      {sentTo ? (
        <FormMessage kind="success">
          Check both inboxes: confirm the change from {user?.email} and from {sentTo}. Until then you keep signing in with {user?.email}.
        </FormMessage>
      ) : null}
      {wait.text ? <WaitMessage text={wait.text} /> : null}
      <Field label="New email" name="email" type="email" autoComplete="email" value={email} onChange={setEmail} error={error} />
      <YStack alignSelf="flex-start">
        <SubmitButton pending={pending} pendingLabel="Sending…" disabled={wait.text !== null}>
          Change email
        </SubmitButton>
      </YStack>
    </AuthForm>
  )
}

function PasswordForm() {
  const { fields, pending, save } = useNewPassword(() => {
    toast.success('Password changed', 'Your other devices were signed out.')
  })

  return (
    <AuthForm label="Change password" onSubmit={save}>
      <NewPasswordFields {...fields} />
      <YStack alignSelf="flex-start">
        <SubmitButton pending={pending} pendingLabel="Saving…">
          Change password
        </SubmitButton>
      </YStack>
    </AuthForm>
  )
}

/** A guest's account page: what a guest session is, and the form that keeps the notes (email + password). */
function GuestAccount() {
  return (
    <YStack width="100%" maxWidth={640} marginHorizontal="auto" gap="$5">
      <PageTitle name="Keep your notes" />
      <YStack gap="$2">
        <H1 aria-level={1} fontSize="$9" lineHeight="$9" fontWeight="800" color="$color12" letterSpacing={-0.5}>
          Keep your notes
        </H1>
        <Paragraph fontSize="$4" lineHeight="$4" color="$color11">
          You are using Foyer as a guest: your notes live only in this browser, and signing out or clearing its data
          loses them. Add an email and password to sign in anywhere — every note you wrote stays.
        </Paragraph>
      </YStack>
      <Section id="add-email-heading" title="Add email and password" description="You will sign in with these from now on.">
        <AddEmailForm />
      </Section>
      <Section id="profile-heading" title="Profile" description="How Foyer greets you.">
        <AvatarField />
        <ProfileForm />
      </Section>
    </YStack>
  )
}

function Account() {
  const { user } = useSession()
  const { query } = useRouter()
  if (isGuest(user)) return <GuestAccount />
  return (
    <YStack width="100%" maxWidth={640} marginHorizontal="auto" gap="$5">
      <PageTitle name="Account" />
      <YStack gap="$2">
        <H1 aria-level={1} fontSize="$9" lineHeight="$9" fontWeight="800" color="$color12" letterSpacing={-0.5}>
          Account
        </H1>
        <Paragraph fontSize="$4" lineHeight="$4" color="$color11">
          Signed in as {user ? displayNameOf(user) : ''}
          {user?.user_metadata?.display_name ? ` (${user.email})` : ''}.{' '}
          <Link href="/settings/security" className="text-link">
            Security and two-factor sign-in
          </Link>
        </Paragraph>
        {query.saved === '1' ? (
          <FormMessage kind="success">
            Your account is saved. From now on, sign in with {user?.email} and your password — every note you wrote as a
            guest is still here. <Link href="/" className="text-link">Go to your notes</Link>
          </FormMessage>
        ) : null}
      </YStack>
      <Section id="profile-heading" title="Profile" description="How Foyer greets you.">
        <AvatarField />
        <ProfileForm />
      </Section>
      <Section id="email-heading" title="Email" description={`You sign in with ${user?.email ?? 'your email'}. A change needs confirming from both addresses.`}>
        <EmailForm />
      </Section>
      <Section id="password-heading" title="Password" description="Changing it signs out your other devices.">
        <PasswordForm />
      </Section>
    </YStack>
  )
}

/** /settings/account: display name, email and password of the signed-in user. */
export function AccountScreen() {
  return (
    <RequireSession>
      <Account />
    </RequireSession>
  )
}
