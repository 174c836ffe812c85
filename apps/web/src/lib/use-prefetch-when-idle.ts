import { useEffect } from 'react'

/**
 * Starts `load` (a dynamic import) once the browser is idle after the page has loaded — or after 1.5 s where
 * requestIdleCallback is missing — so code kept out of the first-load bundle is there before it is needed.
 * Pass a stable function (defined at module level). With `enabled` false nothing is fetched (yet): it starts when
 * `enabled` turns true, e.g. once a user who may use the code has signed in.
 */
export function usePrefetchWhenIdle(load: () => Promise<unknown>, enabled = true): void {
  useEffect(() => {
    if (!enabled) return
    const prefetch = () => void load()
    if ('requestIdleCallback' in window) {
      const id = window.requestIdleCallback(prefetch, { timeout: 3000 })
      return () => window.cancelIdleCallback(id)
    }
    const id = setTimeout(prefetch, 1500)
    return () => clearTimeout(id)
  }, [load, enabled])
}
