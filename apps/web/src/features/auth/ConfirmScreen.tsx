import Link from 'next/link'
import { useEffect, useState } from 'react'

import styles from './auth.module.css'
import { AuthCard, FormMessage } from './form'

export interface ConfirmScreenProps {
  /** Why the link could not be used, as the server saw it (successful links never render this page). */
  error: string
}

type FragmentNote = { kind: 'success' | 'error'; text: string }

/** The auth server reports some outcomes in the URL fragment, which only the browser sees. */
function readFragment(hash: string): FragmentNote | null {
  const params = new URLSearchParams(hash.replace(/^#/, ''))
  const message = params.get('message')
  if (message) return { kind: 'success', text: message.endsWith('.') ? message : `${message}.` }
  const error = params.get('error_description')
  if (error) return { kind: 'error', text: error.endsWith('.') ? error : `${error}.` }
  return null
}

/**
 * Shown when an email link did not end in a session. Either it failed (expired, used, wrong browser), or it was
 * the first of two confirmations of an email change — then the server's message in the fragment says so.
 */
export function ConfirmScreen({ error }: ConfirmScreenProps) {
  const [note, setNote] = useState<FragmentNote | null>(null)
  const [read, setRead] = useState(false)
  useEffect(() => {
    setNote(readFragment(window.location.hash))
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
