import dynamic from 'next/dynamic'
import { useCallback, useEffect, useRef, useState } from 'react'
import { useStore } from 'zustand'

import { usePrefetchWhenIdle } from '../../lib/use-prefetch-when-idle'
import { TOAST_INSET_PX, toastStore } from './toast-store'

export { TOAST_INSET_PX }
/** The toast layer sits above the route progress bar (z-index token $4 = 400) and the app. */
export const TOAST_Z_INDEX = 100_000

// A toast's own code (swipe, timers, layout) is not needed for the first paint of any page: it is fetched when the
// browser is idle after load (or at the first toast, whichever comes first) and stays loaded.
const loadToastView = () => import('./ToastView')
const ToastView = dynamic(loadToastView, { ssr: false })

/**
 * The notification region: fixed at the top, 10 px in from the edges, above everything. F8 focuses it;
 * while it is hovered or holds focus, every toast's timer pauses; Escape closes the newest toast.
 */
export function ToastViewport() {
  const toasts = useStore(toastStore, (state) => state.toasts)
  const regionRef = useRef<HTMLElement>(null)
  const closers = useRef(new Map<number, () => void>())
  const [hovered, setHovered] = useState(false)
  const [focusWithin, setFocusWithin] = useState(false)

  usePrefetchWhenIdle(loadToastView)

  const registerCloser = useCallback((id: number, close: (() => void) | null) => {
    if (close) closers.current.set(id, close)
    else closers.current.delete(id)
  }, [])

  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === 'F8' && !event.altKey && !event.ctrlKey && !event.metaKey) {
        event.preventDefault()
        regionRef.current?.focus()
      }
    }
    window.addEventListener('keydown', onKeyDown)
    return () => window.removeEventListener('keydown', onKeyDown)
  }, [])

  // With no toasts left under the pointer, the region cannot be hovered any more.
  useEffect(() => {
    if (toasts.length === 0) setHovered(false)
  }, [toasts.length])

  return (
    <section
      ref={regionRef}
      role="region"
      aria-label="Notifications (F8)"
      tabIndex={-1}
      onPointerEnter={(e) => e.pointerType === 'mouse' && setHovered(true)}
      onPointerLeave={(e) => e.pointerType === 'mouse' && setHovered(false)}
      onFocus={() => setFocusWithin(true)}
      onBlur={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setFocusWithin(false)
      }}
      onKeyDown={(event) => {
        if (event.key !== 'Escape') return
        const newest = [...toasts].reverse().find((t) => closers.current.has(t.id))
        if (!newest) return
        event.stopPropagation()
        closers.current.get(newest.id)?.()
      }}
      data-paused={hovered || focusWithin ? 'true' : 'false'}
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
      <div
        style={{
          display: 'flex',
          flexDirection: 'column',
          alignItems: 'center',
          gap: 8,
        }}
      >
        {toasts.map((t) => (
          <ToastView key={t.id} toast={t} paused={hovered || focusWithin} registerCloser={registerCloser} />
        ))}
      </div>
    </section>
  )
}
