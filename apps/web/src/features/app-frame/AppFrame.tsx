import Link from 'next/link'
import type { ReactNode } from 'react'
import { Button, Text, XStack, YStack } from 'tamagui'

import { UserMenu, useSession } from '../auth'
import { CreateModal, useCreateModal } from '../create-modal'
import { isGuest } from '../../lib/guest'
import { ThemeToggle } from '../theme'
import { PlusIcon } from '../../ui/icons'
import { GuestBanner } from './GuestBanner'
import { ProgressBar } from './ProgressBar'

function BrandMark() {
  return (
    <svg width="26" height="26" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
      <rect width="32" height="32" rx="8" fill="var(--color12)" />
      <path d="M10 23V9h12M10 16h9" stroke="var(--background)" strokeWidth="3.2" strokeLinecap="round" fill="none" />
    </svg>
  )
}

function NewButton() {
  const toggleCreateModal = useCreateModal((s) => s.toggleCreateModal)
  return (
    <Button
      aria-keyshortcuts="N"
      onPress={toggleCreateModal}
      size="$3"
      theme="accent"
      paddingHorizontal="$3"
      gap="$1.5"
      icon={<PlusIcon size={17} />}
      focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid', outlineOffset: 2 }}
    >
      <Text fontSize="$3" fontWeight="600" color="$color">
        New
      </Text>
      <Text
        render="kbd"
        aria-hidden
        display="none"
        $md={{ display: 'flex' }}
        fontSize="$1"
        color="$color"
        opacity={0.7}
        borderWidth={1}
        borderColor="$color"
        borderRadius="$2"
        paddingHorizontal={5}
        lineHeight={16}
      >
        N
      </Text>
    </Button>
  )
}

/**
 * The default layout: a header (brand, New when signed in and past two-factor sign-in, theme toggle, the user menu
 * or a Sign in link), for a guest the guest banner under it (unless they dismissed it), the route/mutation progress
 * bar and the page in <main>. Mobile-first on the min-width breakpoints 2xs…2xl.
 */
export function AppFrame({ children, guestBannerDismissed = false }: { children: ReactNode; guestBannerDismissed?: boolean }) {
  // "New" only for a session that may write notes (not one that still owes its second factor).
  const { user, needsSecondFactor } = useSession()
  return (
    <YStack minHeight="100vh" backgroundColor="$background">
      <ProgressBar />
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <YStack
        render="header"
        position="sticky"
        top={0}
        zIndex="$3"
        backgroundColor="$background"
        borderBottomWidth={1}
        borderBottomColor="$borderColor"
      >
        <XStack
          width="100%"
          maxWidth={1200}
          marginHorizontal="auto"
          height={56}
          alignItems="center"
          justifyContent="space-between"
          paddingHorizontal="$3"
          $sm={{ paddingHorizontal: '$5' }}
          $lg={{ height: 64, paddingHorizontal: '$6' }}
          gap="$3"
        >
          {/* Signed out, `/` is prefetched on hover only: its code (the API client, ~25 kB gz) would otherwise be
              downloaded after every signed-out page's load (ADR 038). */}
          <Link href="/" className="brand-link" prefetch={user ? undefined : false}>
            <BrandMark />
            <span>Foyer</span>
          </Link>
          <XStack render="nav" aria-label="Actions" alignItems="center" gap="$2" $sm={{ gap: '$2.5' }}>
            {user && !needsSecondFactor ? <NewButton /> : null}
            <ThemeToggle />
            <UserMenu />
          </XStack>
        </XStack>
      </YStack>
      {user && isGuest(user) && !needsSecondFactor ? <GuestBanner key={user.id} userId={user.id} dismissed={guestBannerDismissed} /> : null}
      <YStack
        render="main"
        id="main"
        flexGrow={1}
        width="100%"
        maxWidth={1200}
        marginHorizontal="auto"
        paddingHorizontal="$3"
        paddingVertical="$5"
        $sm={{ paddingHorizontal: '$5', paddingVertical: '$7' }}
        $lg={{ paddingHorizontal: '$6', paddingVertical: '$8' }}
      >
        {children}
      </YStack>
      <CreateModal />
    </YStack>
  )
}
