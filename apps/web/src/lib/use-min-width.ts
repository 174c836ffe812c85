import { useEffect, useState } from 'react'

/**
 * Whether the viewport is at least `px` wide (`(min-width: px)`), followed live. False on the server and in the first
 * client render (the server does not know the width): a component that must match the server's HTML waits for its
 * own hydrated flag before it trusts this (NotesScreen's list shapes).
 */
export function useMinWidth(px: number): boolean {
  const [matches, setMatches] = useState(false)
  useEffect(() => {
    const query = window.matchMedia(minWidthQuery(px))
    const update = () => setMatches(query.matches)
    update()
    query.addEventListener('change', update)
    return () => query.removeEventListener('change', update)
  }, [px])
  return matches
}

const minWidthQuery = (px: number) => `(min-width: ${px}px)`

/** Whether the viewport is at least `px` wide right now; null on the server, which does not know. */
export function viewportAtLeast(px: number): boolean | null {
  return typeof window === 'undefined' ? null : window.matchMedia(minWidthQuery(px)).matches
}
