// The behaviour of the notification region, loaded with the toast view when the browser is idle after load (or at
// the first toast): which toast Escape closes, where focus goes when a toast closes, whether the timers pause. None
// of it matters before a toast is shown, so none of it is in the first-load bundle (ToastViewport is the shell).
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react'
import { useStore } from 'zustand'

import { escapeHasOtherUse } from './escape'
import { toastStore } from './toast-store'
import styles from './toast.module.css'
import ToastView from './ToastView'

/**
 * Renders the toasts inside the region element and drives it. F8 focuses the region; while it is hovered or holds
 * focus, every toast's timer pauses. Escape closes the newest toast: inside the region always, elsewhere unless
 * something else uses that Escape (an open dialog or menu, a select, a search box with text).
 *
 * "Holds focus" is read from `document.activeElement`, not only from focus events: a focused button that leaves the
 * DOM with its toast fires no blur. Likewise "hovered" is checked again where the mouse is when a toast leaves, and
 * by the next mouse move anywhere. When the toast that holds focus closes, focus goes back where the user was
 * before it entered the region (F8, a click, Tab); a keyboard user who closes one of several toasts stays in the
 * region, on its container, to go on with Tab or Escape.
 */
export default function ToastRegion({ regionRef }: { regionRef: RefObject<HTMLElement | null> }) {
  const toasts = useStore(toastStore, (state) => state.toasts)
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
  }, [regionRef])

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
    [giveFocusBack, regionRef],
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
  }, [closeNewest, regionRef])

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
  }, [hovered, regionRef])

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
  }, [toasts, giveFocusBack, regionRef])

  // The region element belongs to the shell (always on the page); its listeners and pause flag are set here.
  const paused = hovered || focusWithin
  useEffect(() => {
    const region = regionRef.current
    if (!region) return
    const pointerEnter = (e: PointerEvent) => {
      if (e.pointerType !== 'mouse') return
      pointerAt.current = { x: e.clientX, y: e.clientY }
      setHovered(true)
    }
    const pointerMove = (e: PointerEvent) => {
      if (e.pointerType === 'mouse') pointerAt.current = { x: e.clientX, y: e.clientY }
    }
    const pointerLeave = (e: PointerEvent) => {
      if (e.pointerType === 'mouse') setHovered(false)
    }
    const focusIn = (event: FocusEvent) => {
      const from = event.relatedTarget
      if (!(from instanceof Node) || !region.contains(from)) {
        returnFocusTo.current = from instanceof HTMLElement ? from : null
      }
      setFocusWithin(true)
    }
    const focusOut = (event: FocusEvent) => {
      if (!region.contains(event.relatedTarget as Node | null)) setFocusWithin(false)
    }
    const keyDown = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return
      if (!closeNewest()) return
      event.preventDefault()
      event.stopPropagation()
    }
    region.addEventListener('pointerenter', pointerEnter)
    region.addEventListener('pointermove', pointerMove)
    region.addEventListener('pointerleave', pointerLeave)
    region.addEventListener('focusin', focusIn)
    region.addEventListener('focusout', focusOut)
    region.addEventListener('keydown', keyDown)
    return () => {
      region.removeEventListener('pointerenter', pointerEnter)
      region.removeEventListener('pointermove', pointerMove)
      region.removeEventListener('pointerleave', pointerLeave)
      region.removeEventListener('focusin', focusIn)
      region.removeEventListener('focusout', focusOut)
      region.removeEventListener('keydown', keyDown)
    }
  }, [closeNewest, regionRef])
  useEffect(() => {
    regionRef.current?.setAttribute('data-paused', paused ? 'true' : 'false')
  }, [paused, regionRef])

  // On a narrow screen the toasts fold into the newest one and a "N more notifications" line under it while the
  // region is neither hovered nor focused (ADR 151): four toasts at once would cover the page's top controls. Every
  // timer runs as before; shown (hover, focus, F8, a tap on the line) they are all there, and paused, as always.
  const expand = () => regionRef.current?.focus({ preventScroll: true })
  return (
    <div className={styles.stack} data-expanded={paused}>
      {toasts.map((t) => (
        <ToastView key={t.id} toast={t} paused={paused} registerCloser={registerCloser} onClosing={onToastClosing} />
      ))}
      {toasts.length > 1 ? (
        // Focus goes on to the region at once: this line is hidden while the toasts are shown, and focus must not
        // stay on a hidden element (it would drop to <body> and fold them again).
        <button type="button" className={styles.more} onFocus={expand} onClick={expand}>
          {toasts.length - 1} more {toasts.length === 2 ? 'notification' : 'notifications'}
        </button>
      ) : null}
    </div>
  )
}
