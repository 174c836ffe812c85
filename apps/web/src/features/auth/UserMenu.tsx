import Link from 'next/link'
import { useEffect, useId, useRef, useState } from 'react'
import { Button, Text, YStack, type TamaguiElement } from 'tamagui'

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

/**
 * The header's account control: "Sign in" when signed out; when signed in a menu button with the user's name
 * (or email) that opens Account settings and Sign out. Escape and a click outside close it.
 */
export function UserMenu() {
  const { user, isLoading } = useSession()
  const [open, setOpen] = useState(false)
  const [signingOut, setSigningOut] = useState(false)
  const menuId = useId()
  const rootRef = useRef<HTMLDivElement>(null)
  const buttonRef = useRef<TamaguiElement>(null)

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

  const name = displayNameOf(user)
  async function signOut() {
    setSigningOut(true)
    try {
      const { error } = await (await loadBrowserSupabase()).auth.signOut()
      if (error) await toastSignOutError(error)
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
            {name !== user.email ? (
              <Text fontSize="$2" color="$color11" numberOfLines={1}>
                {user.email}
              </Text>
            ) : null}
          </YStack>
          <Link href="/settings/account" className="user-menu-item" onClick={() => setOpen(false)}>
            Account settings
          </Link>
          <Link href="/settings/security" className="user-menu-item" onClick={() => setOpen(false)}>
            Security
          </Link>
          <button type="button" className="user-menu-item" disabled={signingOut} onClick={() => void signOut()}>
            {signingOut ? 'Signing out…' : 'Sign out'}
          </button>
        </YStack>
      ) : null}
    </div>
  )
}
