import dynamic from 'next/dynamic'
import { useRef, useState } from 'react'
import { useStore } from 'zustand'

import { usePrefetchWhenIdle } from '../../lib/use-prefetch-when-idle'
import { TOAST_INSET_PX, toastStore } from './toast-store'

export { TOAST_INSET_PX }
/** The toast layer sits above the route progress bar (z-index token $4 = 400) and the app. */
export const TOAST_Z_INDEX = 100_000

// The toasts and everything they do (swipe, timers, Escape, focus, pause) are not needed for the first paint of any
// page: fetched when the browser is idle after load (or at the first toast, whichever comes first), kept loaded.
const loadToastRegion = () => import('./ToastRegion')
const ToastRegion = dynamic(loadToastRegion, { ssr: false })

/**
 * The notification region: fixed at the top, 10 px in from the edges, above everything, always on the page (F8
 * and screen readers find it in one place). What happens inside is ToastRegion's, from the first toast on.
 */
export function ToastViewport() {
  const hasToasts = useStore(toastStore, (state) => state.toasts.length > 0)
  const regionRef = useRef<HTMLElement>(null)
  const [started, setStarted] = useState(false)
  if (hasToasts && !started) setStarted(true)
  usePrefetchWhenIdle(loadToastRegion)
  return (
    <section
      ref={regionRef}
      role="region"
      aria-label="Notifications (F8)"
      tabIndex={-1}
      data-paused="false"
      className="toast-viewport"
      style={{
        position: 'fixed',
        top: TOAST_INSET_PX,
        left: TOAST_INSET_PX,
        right: TOAST_INSET_PX,
        zIndex: TOAST_Z_INDEX,
        pointerEvents: 'none',
        outline: 'none',
      }}
    >
      {started ? <ToastRegion regionRef={regionRef} /> : null}
    </section>
  )
}
