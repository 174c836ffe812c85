import { useCallback, useEffect, useRef } from 'react'

/**
 * Gives focus back, once `pending` ends, to what had it when the action started: a field or button disabled while
 * the action runs drops focus to <body>, and a keyboard user would then press Enter or Tab from nowhere (after a
 * refused save, a failed create). Only while focus is still on <body>: whoever moved on meanwhile keeps their place.
 * Call the returned function just before starting the action.
 */
export function useFocusBack(pending: boolean): () => void {
  const focusedAtStart = useRef<Element | null>(null)
  useEffect(() => {
    if (pending || !focusedAtStart.current) return
    const focused = focusedAtStart.current
    focusedAtStart.current = null
    const active = document.activeElement
    if ((active === document.body || active === null) && focused instanceof HTMLElement && focused.isConnected) focused.focus()
  }, [pending])
  return useCallback(() => {
    focusedAtStart.current = document.activeElement
  }, [])
}
