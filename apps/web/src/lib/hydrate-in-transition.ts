/**
 * `react-dom/client` as Next's client entry sees it in browser builds (next.config.ts aliases it for
 * `next/dist/client/index.js` only; docs/decisions/057-hydration-in-a-transition.md): the same module, except that
 * `hydrateRoot` creates the root inside `startTransition`.
 *
 * Next's pages router hydrates with a plain `hydrateRoot`, which React schedules in its default hydration lane — a
 * blocking lane, so the whole page hydrates in one task (on `/` with a page of notes, ≈ 300 ms at the lab's 4× CPU
 * throttle: most of the page's Total Blocking Time). Created in a transition, the initial hydration runs in the
 * transition hydration lane, which React renders in time slices (≈ 5 ms, yielding to the browser between them), as
 * `hydrateRoot(...)` inside `startTransition` is documented to do. The server's HTML is on screen the whole time; an
 * event on a part not hydrated yet makes React hydrate it at once (React's own rule for discrete events), and nothing
 * else of the API changes.
 */
import { startTransition } from 'react'
import * as client from 'react-dom/client'

export * from 'react-dom/client'

export function hydrateRoot(...args: Parameters<typeof client.hydrateRoot>): ReturnType<typeof client.hydrateRoot> {
  let root: ReturnType<typeof client.hydrateRoot> | undefined
  startTransition(() => {
    root = client.hydrateRoot(...args)
  })
  if (!root) throw new Error('hydrateRoot did not return a root')
  return root
}

/** What Next's compiled client reads: `_interop_require_default(require('react-dom/client')).default.hydrateRoot`. */
export default { ...client, hydrateRoot }
