import Link from 'next/link'
import { useEffect, useState } from 'react'

import { linkFragmentNote, type LinkNote } from './auth-errors'
import styles from './auth.module.css'
import { AuthCard, FormMessage } from './form'

export interface ConfirmScreenProps {
  /** Why the link could not be used, as the server saw it (successful links never render this page). */
  error: string
}

/**
 * Shown when an email link did not end in a session. Either it failed (expired, used, wrong browser), or it was
 * the first of two confirmations of an email change — then the server's message in the fragment says so (shown in
 * the app's words).
 */
export function ConfirmScreen({ error }: ConfirmScreenProps) {
  const [note, setNote] = useState<LinkNote | null>(null)
  const [read, setRead] = useState(false)
  useEffect(() => {
    // The auth server reports some outcomes in the URL fragment, which only the browser sees; only what the app
    // knows is shown, in its own words (auth-errors.ts).
    setNote(linkFragmentNote(window.location.hash))
    setRead(true)
  }, [])

  if (note?.kind === 'success') {
    return (
      <AuthCard title="One more step">
        <FormMessage kind="success">{note.text}</FormMessage>
        <Link href="/settings/account" className="button-link">
          Back to your account
        </Link>
      </AuthCard>
    )
  }
  return (
    <AuthCard title="That link did not work">
      {read ? <FormMessage kind="error">{note?.text ?? error}</FormMessage> : null}
      <div className={styles.links}>
        <Link href="/sign-in" className="button-link">
          Go to sign in
        </Link>
        <Link href="/forgot-password" className="text-link">
          Request a new password-reset link
        </Link>
      </div>
    </AuthCard>
  )
}
