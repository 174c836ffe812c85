// One toast: icon, title, description, an optional action, the close button; its own timer (paused with the
// region), swipe up to dismiss, and the enter/exit animation. Loaded on demand with ToastRegion, since no
// page shows a toast on its first paint.
import Link from 'next/link'
import { useCallback, useEffect, useRef, useState, type PointerEvent as ReactPointerEvent } from 'react'

import controls from '../../ui/controls.module.css'
import { AlertCircleIcon, CheckCircleIcon, CloseIcon, InfoIcon } from '../../ui/icons'
import {
  SWIPE_START_PX,
  swipeOutcome,
  TOAST_ANIMATION_MS,
  TOAST_INSET_PX,
  TOAST_DURATION_MS,
  toastStore,
  type ToastItem,
  type ToastKind,
} from './toast-store'
import styles from './toast.module.css'

/** The icon's colour: step 10 of Tamagui's green, red or blue theme (its class on the icon). */
const ACCENT: Record<ToastKind, string> = { success: 't_green', error: 't_red', info: 't_blue' }
const ICON = { success: CheckCircleIcon, error: AlertCircleIcon, info: InfoIcon } as const

/** Entering is a CSS animation (.toast in base.css), so it runs even where frames are throttled. */
type Phase = 'open' | 'closing'

export interface ToastViewProps {
  toast: ToastItem
  paused: boolean
  registerCloser: (id: number, close: (() => void) | null) => void
  /** Called once when the toast starts to close, with its element (the viewport moves focus out of it). */
  onClosing: (id: number, element: HTMLElement | null) => void
}

export default function ToastView({ toast, paused, registerCloser, onClosing }: ToastViewProps) {
  const [phase, setPhase] = useState<Phase>('open')
  const [offset, setOffset] = useState(0)
  const [dragging, setDragging] = useState(false)
  const remaining = useRef(TOAST_DURATION_MS)
  const drag = useRef<{ pointerId: number; startY: number; active: boolean } | null>(null)
  const elementRef = useRef<HTMLDivElement>(null)

  const closing = useRef(false)
  const close = useCallback(
    (exitOffset?: number) => {
      if (closing.current) return
      closing.current = true
      onClosing(toast.id, elementRef.current)
      if (exitOffset !== undefined) setOffset(exitOffset)
      setPhase('closing')
      window.setTimeout(() => toastStore.getState().remove(toast.id), TOAST_ANIMATION_MS)
    },
    [toast.id, onClosing],
  )

  useEffect(() => {
    registerCloser(toast.id, () => close())
    return () => registerCloser(toast.id, null)
  }, [close, registerCloser, toast.id])

  // Auto-close after the remaining time; pausing keeps what is left.
  useEffect(() => {
    if (paused || dragging || phase === 'closing') return
    const startedAt = Date.now()
    const timer = window.setTimeout(() => close(), remaining.current)
    return () => {
      window.clearTimeout(timer)
      remaining.current = Math.max(0, remaining.current - (Date.now() - startedAt))
    }
  }, [paused, dragging, phase, close])

  const onPointerDown = (event: ReactPointerEvent<HTMLDivElement>) => {
    if (event.button !== 0 || phase === 'closing') return
    if ((event.target as Element).closest('button, a')) return
    drag.current = { pointerId: event.pointerId, startY: event.clientY, active: false }
  }
  const onPointerMove = (event: ReactPointerEvent<HTMLDivElement>) => {
    const state = drag.current
    if (!state || state.pointerId !== event.pointerId) return
    const upward = state.startY - event.clientY
    if (!state.active && upward > SWIPE_START_PX) {
      state.active = true
      setDragging(true)
      elementRef.current?.setPointerCapture(event.pointerId)
    }
    if (state.active) setOffset(-Math.max(0, upward))
  }
  const endDrag = (event: ReactPointerEvent<HTMLDivElement>, cancelled: boolean) => {
    const state = drag.current
    if (!state || state.pointerId !== event.pointerId) return
    drag.current = null
    if (!state.active) return
    setDragging(false)
    const upward = state.startY - event.clientY
    if (!cancelled && swipeOutcome(upward) === 'dismiss') {
      close(-((elementRef.current?.offsetHeight ?? 80) + TOAST_INSET_PX))
    } else {
      setOffset(0) // snap back
    }
  }

  const Icon = ICON[toast.kind]
  const visible = phase === 'open'
  const translateY = offset + (phase === 'closing' && offset === 0 ? -12 : 0)

  return (
    <div
      ref={elementRef}
      data-testid="toast"
      data-state={phase}
      className="toast"
      role={toast.kind === 'error' ? 'alert' : 'status'}
      aria-atomic="true"
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={(e) => endDrag(e, false)}
      onPointerCancel={(e) => endDrag(e, true)}
      style={{
        width: '100%',
        maxWidth: 420,
        pointerEvents: 'auto',
        touchAction: 'none',
        // A drag must never start a text selection: a later press on selected text would begin a native
        // drag-and-drop and cancel the pointer stream.
        userSelect: 'none',
        WebkitUserSelect: 'none',
        cursor: dragging ? 'grabbing' : undefined,
        opacity: visible ? 1 : 0,
        transform: `translateY(${translateY}px)`,
        transition: dragging
          ? 'none'
          : `opacity ${TOAST_ANIMATION_MS}ms ease-out, transform ${TOAST_ANIMATION_MS}ms ease-out`,
      }}
    >
      <div className={styles.card}>
        <span className={`${styles.icon} ${ACCENT[toast.kind]}`}>
          <Icon size={20} />
        </span>
        <div className={styles.text}>
          <span className={styles.title}>{toast.title}</span>
          {toast.description ? <span className={styles.description}>{toast.description}</span> : null}
        </div>
        {toast.action && 'href' in toast.action ? (
          <Link href={toast.action.href} className="toast-action" onClick={(event) => !event.defaultPrevented && close()}>
            {toast.action.label}
          </Link>
        ) : toast.action ? (
          <button
            type="button"
            className={`${controls.button} ${controls.tiny} ${controls.outlined} ${styles.action}`}
            onClick={() => {
              const action = toast.action
              if (action && 'onAction' in action) action.onAction()
              close()
            }}
          >
            {toast.action.label}
          </button>
        ) : null}
        <button
          type="button"
          aria-label="Close notification"
          className={`${controls.button} ${controls.tiny} ${controls.circular} ${controls.chromeless} ${styles.close}`}
          onClick={() => close()}
        >
          <CloseIcon size={16} />
        </button>
      </div>
    </div>
  )
}
