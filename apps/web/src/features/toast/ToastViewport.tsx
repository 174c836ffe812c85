import dynamic from 'next/dynamic'
import { useCallback, useEffect, useRef, useState } from 'react'
import { useStore } from 'zustand'

import { usePrefetchWhenIdle } from '../../lib/use-prefetch-when-idle'
import { escapeHasOtherUse } from './escape'
import { TOAST_INSET_PX, toastStore } from './toast-store'

export { TOAST_INSET_PX }
/** The toast layer sits above the route progress bar (z-index token $4 = 400) and the app. */
export const TOAST_Z_INDEX = 100_000

// A toast's own code (swipe, timers, layout) is not needed for the first paint of any page: it is fetched when the
// browser is idle after load (or at the first toast, whichever comes first) and stays loaded.
const loadToastView = () => import('./ToastView')
const ToastView = dynamic(loadToastView, { ssr: false })

/**
 * The notification region: fixed at the top, 10 px in from the edges, above everything. F8 focuses it; while it is
 * hovered or holds focus, every toast's timer pauses. Escape closes the newest toast: inside the region always,
 * elsewhere unless something else uses that Escape (an open dialog or menu, a select, a search box with text).
 *
 * "Holds focus" is read from `document.activeElement`, not only from focus events: a focused button that leaves the
 * DOM with its toast fires no blur. Likewise "hovered" is checked again where the mouse is when a toast leaves, and
 * by the next mouse move anywhere. When the toast that holds focus closes, focus goes back where the user was
 * before it entered the region (F8, a click, Tab); a keyboard user who closes one of several toasts stays in the
 * region, on its container, to go on with Tab or Escape.
 */
export function ToastViewport() {
  const toasts = useStore(toastStore, (state) => state.toasts)
  const regionRef = useRef<HTMLElement>(null)
  /** Closers of the open toasts (a closing toast is no longer here): Escape closes the newest of them. */
  const closers = useRef(new Map<number, () => void>())
  /** Where focus was before it entered the region, to give it back when the region has nothing left for it. */
  const returnFocusTo = useRef<HTMLElement | null>(null)
  const [hovered, setHovered] = useState(false)
  const [focusWithin, setFocusWithin] = useState(false)
  /** Where the mouse was last seen while over the region (to re-check "hovered" when a toast leaves under it). */
  const pointerAt = useRef<{ x: number; y: number } | null>(null)
  const hoveredRef = useRef(false)
  useEffect(() => {
    hoveredRef.current = hovered
  }, [hovered])

  usePrefetchWhenIdle(loadToastView)

  const registerCloser = useCallback((id: number, close: (() => void) | null) => {
    if (close) closers.current.set(id, close)
    else closers.current.delete(id)
  }, [])

  const giveFocusBack = useCallback(() => {
    const region = regionRef.current
    const target = returnFocusTo.current
    returnFocusTo.current = null
    if (target?.isConnected && !region?.contains(target)) target.focus({ preventScroll: true })
    // Nowhere to go back to (the page changed, the element left or cannot take focus): leave the region anyway.
    const active = document.activeElement
    if (region && active instanceof HTMLElement && region.contains(active)) active.blur()
  }, [])

  const closeNewest = useCallback((): boolean => {
    const newest = [...toastStore.getState().toasts].reverse().find((t) => closers.current.has(t.id))
    if (!newest) return false
    closers.current.get(newest.id)?.()
    return true
  }, [])

  // A toast starts to close (timer, swipe, Escape, its close button or action): it no longer counts as open, and
  // focus inside it moves on before the element goes.
  const onToastClosing = useCallback(
    (id: number, element: HTMLElement | null) => {
      closers.current.delete(id)
      const region = regionRef.current
      const active = document.activeElement
      if (!region || !(active instanceof HTMLElement) || !region.contains(active)) return
      const othersOpen = closers.current.size > 0
      if (active === region) {
        if (!othersOpen) giveFocusBack()
        return
      }
      if (!element?.contains(active)) return
      if (othersOpen && active.matches(':focus-visible')) region.focus({ preventScroll: true })
      else giveFocusBack()
    },
    [giveFocusBack],
  )

  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === 'F8' && !event.altKey && !event.ctrlKey && !event.metaKey) {
        event.preventDefault()
        // An empty region would hold focus out of sight (and pause the next toast): only with toasts open.
        if (closers.current.size > 0) regionRef.current?.focus()
        return
      }
      if (event.key !== 'Escape') return
      const region = regionRef.current
      if (region && event.target instanceof Node && region.contains(event.target)) return // the region's own handler
      if (escapeHasOtherUse(event)) return
      if (closeNewest()) event.preventDefault()
    }
    // Bubbling on window: runs after the page's own handlers (dialogs, menus, fields), which claim an Escape
    // they use with preventDefault().
    window.addEventListener('keydown', onKeyDown)
    return () => window.removeEventListener('keydown', onKeyDown)
  }, [closeNewest])

  // While hovered, follow the mouse over the whole page: when the toast under it is removed, the region gets no
  // pointerleave once the mouse moves away.
  useEffect(() => {
    if (!hovered) return
    const onMove = (event: PointerEvent) => {
      if (event.pointerType !== 'mouse') return
      pointerAt.current = { x: event.clientX, y: event.clientY }
      const region = regionRef.current
      if (region && !(event.target instanceof Node && region.contains(event.target))) setHovered(false)
    }
    document.addEventListener('pointermove', onMove, { passive: true })
    return () => document.removeEventListener('pointermove', onMove)
  }, [hovered])

  // After every change of the toasts (one removed with the element that had focus or the mouse, one added), read
  // where focus and the mouse really are; a focused region with no toast left gives focus back.
  useEffect(() => {
    const region = regionRef.current
    if (!region) return
    if (toasts.length === 0) {
      setHovered(false)
      if (document.activeElement === region) giveFocusBack()
    } else if (hoveredRef.current && pointerAt.current) {
      const under = document.elementFromPoint(pointerAt.current.x, pointerAt.current.y)
      setHovered(under !== null && region.contains(under))
    }
    setFocusWithin(region.contains(document.activeElement))
  }, [toasts, giveFocusBack])

  return (
    <section
      ref={regionRef}
      role="region"
      aria-label="Notifications (F8)"
      tabIndex={-1}
      onPointerEnter={(e) => {
        if (e.pointerType !== 'mouse') return
        pointerAt.current = { x: e.clientX, y: e.clientY }
        setHovered(true)
      }}
      onPointerMove={(e) => {
        if (e.pointerType === 'mouse') pointerAt.current = { x: e.clientX, y: e.clientY }
      }}
      onPointerLeave={(e) => e.pointerType === 'mouse' && setHovered(false)}
      onFocus={(event) => {
        const from = event.relatedTarget
        if (!(from instanceof Node) || !event.currentTarget.contains(from)) {
          returnFocusTo.current = from instanceof HTMLElement ? from : null
        }
        setFocusWithin(true)
      }}
      onBlur={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) setFocusWithin(false)
      }}
      onKeyDown={(event) => {
        if (event.key !== 'Escape') return
        if (!closeNewest()) return
        event.preventDefault()
        event.stopPropagation()
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
          <ToastView
            key={t.id}
            toast={t}
            paused={hovered || focusWithin}
            registerCloser={registerCloser}
            onClosing={onToastClosing}
          />
        ))}
      </div>
    </section>
  )
}
