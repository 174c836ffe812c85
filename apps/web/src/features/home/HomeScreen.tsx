import Link from 'next/link'
import type { ReactNode } from 'react'

import { TryAsGuest } from './TryAsGuest'
import { SystemStatusCard } from '../system'
import styles from './home.module.css'

function Hint({ keys, children }: { keys: string; children: ReactNode }) {
  return (
    <div className={styles.hint}>
      <kbd className={styles.key}>{keys}</kbd>
      <span>{children}</span>
    </div>
  )
}

/**
 * The signed-out landing page: what Foyer is, the way in (sign up / sign in / try it as a guest), keyboard hints, the
 * live system status. Plain HTML in Tamagui's tokens and theme variables (ADR 053).
 */
export function HomeScreen() {
  return (
    <div className={styles.screen}>
      <div className={styles.intro}>
        <p className={styles.eyebrow}>Your workspace</p>
        <h1 className={styles.title}>Welcome to Foyer</h1>
        <p className={styles.lead}>
          A calm place to keep your notes. Capture a thought in a second, pin what matters, and find it again in a
          sorted, searchable list — on your laptop or your phone, in light or dark. Private to you, with two-factor
          sign-in when you want it.
        </p>
        <div className={styles.ways}>
          <Link href="/sign-up" className="button-link button-link--primary">
            Create an account
          </Link>
          <Link href="/sign-in" className="button-link">
            Sign in
          </Link>
          <TryAsGuest />
        </div>
        <div className={styles.hints}>
          <p className={styles.eyebrow}>Once you are in</p>
          <Hint keys="N">writes a new note</Hint>
          <Hint keys="F8">jumps to notifications</Hint>
          <Hint keys="Esc">closes dialogs and notifications</Hint>
        </div>
      </div>
      <div className={styles.status}>
        <SystemStatusCard />
      </div>
    </div>
  )
}
