import Link from 'next/link'
import type { ReactNode } from 'react'

import { UserMenu, useSession } from '../auth'
import { CreateModal, useCreateModal } from '../create-modal'
import { useFocusHeadingOnRouteChange } from '../../lib/focus-heading'
import { isGuest } from '../../lib/guest'
import { ThemeToggle } from '../theme'
import controls from '../../ui/controls.module.css'
import { PlusIcon } from '../../ui/icons'
import styles from './app-frame.module.css'
import { GuestBanner } from './GuestBanner'
import { ProgressBar } from './ProgressBar'
import { RenderErrorBoundary } from './RenderErrorBoundary'

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
    <button
      type="button"
      aria-keyshortcuts="N"
      onClick={toggleCreateModal}
      className={`${controls.button} ${controls.small} ${controls.iconGap} t_accent`}
    >
      <PlusIcon size={17} />
      New
      <kbd aria-hidden className={styles.shortcut}>
        N
      </kbd>
    </button>
  )
}

/**
 * The default layout: a header (brand, New when signed in and past two-factor sign-in, theme toggle, the user menu
 * or a Sign in link), for a guest the guest banner under it (unless they dismissed it), the route/mutation progress
 * bar and the page in <main> (whose heading gets focus after a route change that dropped it, ADR 161; a page that fails
 * to render in the browser is said in words there, RenderErrorBoundary, ADR 149). Mobile-first on the min-width
 * breakpoints 2xs…2xl. Plain HTML styled by app-frame.module.css with Tamagui's tokens and theme
 * variables: the frame is in every page's first load, and Tamagui's runtime is not (ADR 053). <main> is a flex
 * column, as the Tamagui stack it replaces, for the pages inside it.
 */
export function AppFrame({ children, guestBannerDismissed = false }: { children: ReactNode; guestBannerDismissed?: boolean }) {
  // "New" only for a session that may write notes (not one that still owes its second factor).
  const { user, needsSecondFactor } = useSession()
  // A link or button that went with the old page leaves focus on <body>: it goes to the new page's heading.
  useFocusHeadingOnRouteChange()
  return (
    <div className={styles.frame}>
      <ProgressBar />
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <header className={styles.header}>
        <div className={styles.bar}>
          {/* Signed out, `/` is prefetched on hover only: its code (the API client, ~25 kB gz) would otherwise be
              downloaded after every signed-out page's load (ADR 038). */}
          <Link href="/" className="brand-link" prefetch={user ? undefined : false}>
            <BrandMark />
            <span>Foyer</span>
          </Link>
          <nav aria-label="Actions" className={styles.actions}>
            {user && !needsSecondFactor ? <NewButton /> : null}
            <ThemeToggle />
            <UserMenu />
          </nav>
        </div>
      </header>
      {user && isGuest(user) && !needsSecondFactor ? <GuestBanner key={user.id} userId={user.id} dismissed={guestBannerDismissed} /> : null}
      <main id="main" className={styles.main}>
        <RenderErrorBoundary>{children}</RenderErrorBoundary>
      </main>
      <CreateModal />
    </div>
  )
}
