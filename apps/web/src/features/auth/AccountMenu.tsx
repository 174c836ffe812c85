import dynamic from 'next/dynamic'
import Link from 'next/link'
import { useEffect, useState, type RefObject } from 'react'

import { avatarSrcSet } from '../../lib/avatar'
import { ADD_EMAIL_PATH } from '../../lib/guest'
import { loadBrowserSupabase } from '../../lib/supabase/browser'
import { confirmLeavingUnsaved } from '../../lib/unsaved-changes'
import { toast } from '../toast'
import styles from './user-menu.module.css'

/** The error messages load only when a sign-out fails: few ever need them. */
async function toastSignOutError(error: unknown): Promise<void> {
  const { readableAuthError } = await import('./auth-errors')
  toast.error('Sign-out failed', readableAuthError(error).message)
}

/** Loaded when a guest chooses Sign out: the warning that their notes will be lost. */
const loadGuestSignOutDialog = () => import('./GuestSignOutDialog').then((m) => m.GuestSignOutDialog)
const GuestSignOutDialog = dynamic(loadGuestSignOutDialog, { ssr: false })

export interface AccountMenuProps {
  menuId: string
  open: boolean
  setOpen: (open: boolean) => void
  buttonRef: RefObject<HTMLButtonElement | null>
  name: string
  email: string | undefined
  guest: boolean
  /** The profile picture's public URL (lib/avatar.ts), or null. */
  avatar: string | null
}

/**
 * The user menu's panel (Account settings, Security, Sign out; for a guest "Add email and password" and a Sign out
 * that asks first), kept out of the first-load bundle: UserMenu fetches it when the browser is idle and mounts it
 * the first time the menu opens. It stays mounted afterwards, so the guest's sign-out dialog outlives the menu.
 */
export function AccountMenu({ menuId, open, setOpen, buttonRef, name, email, guest, avatar }: AccountMenuProps) {
  const [signingOut, setSigningOut] = useState(false)
  const [confirmingSignOut, setConfirmingSignOut] = useState(false)
  // A guest who opens the menu may choose Sign out: fetch its dialog now, so it opens at once.
  useEffect(() => {
    if (open && guest) void loadGuestSignOutDialog()
  }, [open, guest])

  async function signOut() {
    if (!confirmLeavingUnsaved()) return // unsaved text on the page (a note being edited): asks as leaving it does
    setSigningOut(true)
    try {
      // This browser only (ADR 064): other devices stay signed in; /settings/security signs them out.
      const client = await loadBrowserSupabase()
      const { error } = await client.auth.signOut({ scope: 'local' })
      // supabase-js removes this browser's session before it asks the server to revoke it: when that request fails
      // (no connection) the browser is signed out all the same, and "Sign-out failed" would be untrue.
      if (error && (await client.auth.getSession()).data.session) await toastSignOutError(error)
      else setConfirmingSignOut(false)
    } catch (error) {
      await toastSignOutError(error)
    } finally {
      setSigningOut(false)
      setOpen(false)
    }
  }

  return (
    <>
      {open ? (
        <div id={menuId} className={styles.panel}>
          <div className={styles.who}>
            {avatar ? <img src={avatar} srcSet={avatarSrcSet(avatar, 40)} alt="" width={40} height={40} className={styles.panelAvatar} /> : null}
            <div className={styles.whoText}>
              <span className={styles.caption}>Signed in as</span>
              <span className={styles.name} data-testid="user-menu-name">
                {name}
              </span>
              {guest ? (
                <span className={styles.caption}>Notes live only in this browser</span>
              ) : name !== email ? (
                <span className={`${styles.caption} ${styles.oneLine}`}>{email}</span>
              ) : null}
            </div>
          </div>
          {guest ? (
            <Link href={ADD_EMAIL_PATH} className="user-menu-item" onClick={() => setOpen(false)}>
              Add email and password
            </Link>
          ) : (
            <>
              <Link href="/settings/account" className="user-menu-item" onClick={() => setOpen(false)}>
                Account settings
              </Link>
              <Link href="/settings/security" className="user-menu-item" onClick={() => setOpen(false)}>
                Security
              </Link>
            </>
          )}
          <button
            type="button"
            className="user-menu-item"
            disabled={signingOut}
            aria-haspopup={guest ? 'dialog' : undefined}
            onClick={() => {
              if (!guest) return void signOut()
              setOpen(false)
              setConfirmingSignOut(true)
            }}
          >
            {signingOut ? 'Signing out…' : 'Sign out'}
          </button>
        </div>
      ) : null}
      {confirmingSignOut && guest ? (
        <GuestSignOutDialog
          pending={signingOut}
          onConfirm={() => void signOut()}
          onClose={() => {
            setConfirmingSignOut(false)
            buttonRef.current?.focus()
          }}
        />
      ) : null}
    </>
  )
}
