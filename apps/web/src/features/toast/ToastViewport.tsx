import { useCallback, useEffect, useRef, useState, type PointerEvent as ReactPointerEvent } from 'react'
import { Button, Text, Theme, XStack, YStack } from 'tamagui'
import { useStore } from 'zustand'

import { AlertCircleIcon, CheckCircleIcon, CloseIcon, InfoIcon } from '../../ui/icons'
import {
  SWIPE_START_PX,
  swipeOutcome,
  TOAST_ANIMATION_MS,
  TOAST_DURATION_MS,
  toastStore,
  type ToastItem,
  type ToastKind,
} from './toast-store'

/** Inset of the viewport from the top, left and right edges of the window, in px (spec §9). */
export const TOAST_INSET_PX = 10
/** The toast layer sits above the route progress bar (z-index token $4 = 400) and the app. */
export const TOAST_Z_INDEX = 100_000

const ACCENT: Record<ToastKind, 'green' | 'red' | 'blue'> = { success: 'green', error: 'red', info: 'blue' }
const ICON = { success: CheckCircleIcon, error: AlertCircleIcon, info: InfoIcon } as const

/** Entering is a CSS animation (.toast in base.css), so it runs even where frames are throttled. */
type Phase = 'open' | 'closing'

interface ToastViewProps {
  toast: ToastItem
  paused: boolean
  registerCloser: (id: number, close: (() => void) | null) => void
}

function ToastView({ toast, paused, registerCloser }: ToastViewProps) {
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
      if (exitOffset !== undefined) setOffset(exitOffset)
      setPhase('closing')
      window.setTimeout(() => toastStore.getState().remove(toast.id), TOAST_ANIMATION_MS)
    },
    [toast.id],
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
    if ((event.target as Element).closest('button')) return
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
      <XStack
        // $backgroundHover: white on the light page, a step lighter than the page in dark (a raised surface)
        backgroundColor="$backgroundHover"
        borderColor="$borderColor"
        borderWidth={1}
        borderRadius="$6"
        paddingVertical="$3"
        paddingLeft="$3.5"
        paddingRight="$2"
        gap="$3"
        alignItems="flex-start"
        boxShadow="0 10px 30px -12px rgba(0,0,0,0.35), 0 2px 6px -2px rgba(0,0,0,0.12)"
      >
        <Theme name={ACCENT[toast.kind]}>
          <YStack paddingTop={2} flexShrink={0}>
            <Text color="$color10" display="flex">
              <Icon size={20} />
            </Text>
          </YStack>
        </Theme>
        <YStack flex={1} gap="$0.75" paddingTop={1} minWidth={0}>
          <Text fontSize="$4" fontWeight="600" color="$color12">
            {toast.title}
          </Text>
          {toast.description ? (
            <Text fontSize="$3" color="$color11" lineHeight="$3">
              {toast.description}
            </Text>
          ) : null}
        </YStack>
        {toast.action ? (
          <Button
            size="$2"
            alignSelf="center"
            flexShrink={0}
            borderWidth={1}
            borderColor="$borderColor"
            backgroundColor="$background"
            onPress={() => {
              toast.action?.onAction()
              close()
            }}
            focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid' }}
          >
            <Text fontSize="$3" fontWeight="600" color="$color12">
              {toast.action.label}
            </Text>
          </Button>
        ) : null}
        <Button
          aria-label="Close notification"
          size="$2"
          circular
          chromeless
          icon={<CloseIcon size={16} />}
          onPress={() => close()}
          focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid' }}
        />
      </XStack>
    </div>
  )
}

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
