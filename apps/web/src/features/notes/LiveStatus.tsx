import type { LiveState } from './live-notes'
import styles from './notes.module.css'

/**
 * Says that live updates are interrupted — only then (useNoteChanges decides when: after a few seconds down). The
 * text sits in a polite live region that is always present, so a screen reader hears it appear and disappear.
 * `data-live` tells tests (and anyone inspecting the page) whether changes are arriving.
 */
export function LiveStatus({ live }: { live: LiveState }) {
  const { reconnecting } = live
  return (
    <span role="status" className={styles.liveStatus} aria-live="polite" data-testid="live-status" data-live={live.subscribed ? 'on' : 'off'}>
      {reconnecting ? 'Reconnecting… changes made elsewhere will appear when the connection is back.' : ''}
    </span>
  )
}
