import dynamic from 'next/dynamic'
import Link from 'next/link'
import { useEffect, useId, useRef, useState } from 'react'

import { avatarSrcSet, avatarUrlOf, brokenImageProps, PUBLIC_SUPABASE_URL } from '../../lib/avatar'
import { GUEST_NAME, isGuest } from '../../lib/guest'
import { usePrefetchWhenIdle } from '../../lib/use-prefetch-when-idle'
import controls from '../../ui/controls.module.css'
import { useSession } from './SessionProvider'
import styles from './user-menu.module.css'

export function displayNameOf(user: { email?: string | undefined; user_metadata?: Record<string, unknown> }): string {
  const name = user.user_metadata?.display_name
  return typeof name === 'string' && name.trim() !== '' ? name.trim() : (user.email ?? 'Account')
}

const loadAccountMenu = () => import('./AccountMenu').then((m) => m.AccountMenu)
const AccountMenu = dynamic(loadAccountMenu, { ssr: false })
const noPrefetch = () => Promise.resolve()

/**
 * The header's account control: "Sign in" when signed out; when signed in a menu button with the user's name
 * (or email; "Guest" for a guest session) that opens the menu panel (AccountMenu: Account settings, Security, Sign
 * out). Escape and a click outside close it. The panel is not in the first-load bundle: it is fetched when the
 * browser is idle and mounted the first time the menu opens.
 */
export function UserMenu() {
  const { user, isLoading } = useSession()
  const [open, setOpen] = useState(false)
  const [used, setUsed] = useState(false)
  /** The picture URL the browser could not show, if any. */
  const [broken, setBroken] = useState<string | null>(null)
  const menuId = useId()
  const rootRef = useRef<HTMLDivElement>(null)
  const buttonRef = useRef<HTMLButtonElement>(null)
  usePrefetchWhenIdle(user ? loadAccountMenu : noPrefetch)

  useEffect(() => {
    if (!open) return
    const onPointer = (event: PointerEvent) => {
      if (rootRef.current && !rootRef.current.contains(event.target as Node)) setOpen(false)
    }
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        event.preventDefault() // this Escape closes the menu, nothing else (e.g. not a toast)
        setOpen(false)
        buttonRef.current?.focus()
      }
    }
    document.addEventListener('pointerdown', onPointer)
    document.addEventListener('keydown', onKey)
    return () => {
      document.removeEventListener('pointerdown', onPointer)
      document.removeEventListener('keydown', onKey)
    }
  }, [open])

  if (isLoading) return <div className={styles.placeholder} aria-hidden />
  if (!user) {
    return (
      <Link href="/sign-in" className="text-link">
        Sign in
      </Link>
    )
  }

  const guest = isGuest(user)
  const name = guest ? GUEST_NAME : displayNameOf(user)
  // The profile picture (ADR 037): a plain <img> of its public URL — no storage client on every page; the initial
  // when the browser cannot show it (ADR 067).
  const url = avatarUrlOf(user, PUBLIC_SUPABASE_URL)
  const avatar = url !== broken ? url : null
  return (
    <div ref={rootRef} className={styles.root}>
      <button
        ref={buttonRef}
        type="button"
        className={`${controls.button} ${controls.small} ${controls.circular} ${styles.accountButton}`}
        aria-haspopup="true"
        aria-expanded={open}
        aria-controls={menuId}
        aria-label={`Account: ${name}`}
        // The panel's code, if the idle prefetch has not fetched it yet: on the way to a click or a key press.
        onMouseEnter={() => void loadAccountMenu()}
        onFocus={() => void loadAccountMenu()}
        onClick={() => {
          setUsed(true)
          setOpen((value) => !value)
        }}
      >
        {avatar ? (
          <img src={avatar} srcSet={avatarSrcSet(avatar, 36)} alt="" width={36} height={36} className={styles.avatar} {...brokenImageProps(avatar, setBroken)} />
        ) : (
          <span aria-hidden>{name.slice(0, 1).toUpperCase()}</span>
        )}
      </button>
      {used ? (
        <AccountMenu menuId={menuId} open={open} setOpen={setOpen} buttonRef={buttonRef} name={name} email={user.email} guest={guest} avatar={avatar} />
      ) : null}
    </div>
  )
}
