import dynamic from 'next/dynamic'
import Link from 'next/link'
import { useEffect, useId, useRef, useState } from 'react'
import { Button, Text, YStack, type TamaguiElement } from 'tamagui'

import { ADD_EMAIL_PATH, GUEST_NAME, isGuest } from '../../lib/guest'
import { toast } from '../toast'
import { loadBrowserSupabase } from '../../lib/supabase/browser'
import { useSession } from './SessionProvider'

/** The error messages load only when a sign-out fails: every page has this menu, few ever need them. */
async function toastSignOutError(error: unknown): Promise<void> {
  const { readableAuthError } = await import('./auth-errors')
  toast.error('Sign-out failed', readableAuthError(error).message)
}

export function displayNameOf(user: { email?: string | undefined; user_metadata?: Record<string, unknown> }): string {
  const name = user.user_metadata?.display_name
  return typeof name === 'string' && name.trim() !== '' ? name.trim() : (user.email ?? 'Account')
}

/** Loaded when a guest chooses Sign out: the warning that their notes will be lost. */
const loadGuestSignOutDialog = () => import('./GuestSignOutDialog').then((m) => m.GuestSignOutDialog)
const GuestSignOutDialog = dynamic(loadGuestSignOutDialog, { ssr: false })

/**
 * The header's account control: "Sign in" when signed out; when signed in a menu button with the user's name
 * (or email) that opens Account settings and Sign out. Escape and a click outside close it. A guest is called
 * "Guest", is offered "Add email and password", and is asked to confirm Sign out (their notes would be lost).
 */
export function UserMenu() {
  const { user, isLoading } = useSession()
  const [open, setOpen] = useState(false)
  const [signingOut, setSigningOut] = useState(false)
  const [confirmingSignOut, setConfirmingSignOut] = useState(false)
  const menuId = useId()
  const rootRef = useRef<HTMLDivElement>(null)
  const buttonRef = useRef<TamaguiElement>(null)

  const guest = isGuest(user)
  const userId = user?.id
  // A dialog left open for a session that has ended (e.g. signed out in another tab) does not come back for the next.
  useEffect(() => setConfirmingSignOut(false), [userId])
  // A guest who opens the menu may choose Sign out: fetch its dialog now, so it opens at once.
  useEffect(() => {
    if (open && guest) void loadGuestSignOutDialog()
  }, [open, guest])

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

  if (isLoading) return <YStack width={36} height={36} aria-hidden />
  if (!user) {
    return (
      <Link href="/sign-in" className="text-link">
        Sign in
      </Link>
    )
  }

  const name = guest ? GUEST_NAME : displayNameOf(user)
  async function signOut() {
    setSigningOut(true)
    try {
      const { error } = await (await loadBrowserSupabase()).auth.signOut()
      if (error) await toastSignOutError(error)
      else setConfirmingSignOut(false)
    } catch (error) {
      await toastSignOutError(error)
    } finally {
      setSigningOut(false)
      setOpen(false)
    }
  }

  return (
    <div ref={rootRef} style={{ position: 'relative' }}>
      <Button
        ref={buttonRef}
        size="$3"
        circular
        aria-haspopup="true"
        aria-expanded={open}
        aria-controls={menuId}
        aria-label={`Account: ${name}`}
        onPress={() => setOpen((value) => !value)}
        backgroundColor="$color4"
        focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid', outlineOffset: 2 }}
      >
        <Text fontSize="$4" fontWeight="700" color="$color12" aria-hidden>
          {name.slice(0, 1).toUpperCase()}
        </Text>
      </Button>
      {open ? (
        <YStack
          id={menuId}
          position="absolute"
          right={0}
          top="100%"
          marginTop="$2"
          width={260}
          maxWidth="calc(100vw - 24px)"
          zIndex="$5"
          backgroundColor="$background"
          borderWidth={1}
          borderColor="$borderColor"
          borderRadius="$6"
          padding="$2"
          gap="$1"
          boxShadow="0 12px 32px -12px rgba(0,0,0,0.35)"
        >
          <YStack paddingHorizontal="$3" paddingVertical="$2" borderBottomWidth={1} borderBottomColor="$borderColor" marginBottom="$1">
            <Text fontSize="$2" color="$color11">
              Signed in as
            </Text>
            <Text fontSize="$4" fontWeight="600" color="$color12" numberOfLines={1} data-testid="user-menu-name">
              {name}
            </Text>
            {guest ? (
              <Text fontSize="$2" color="$color11">
                Notes live only in this browser
              </Text>
            ) : name !== user.email ? (
              <Text fontSize="$2" color="$color11" numberOfLines={1}>
                {user.email}
              </Text>
            ) : null}
          </YStack>
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
        </YStack>
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
    </div>
  )
}
