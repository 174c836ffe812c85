import { startTransition } from 'react'
import type * as ReactDOMClientNamespace from 'react-dom/client'

type HydrateRoot = typeof ReactDOMClientNamespace.hydrateRoot

/**
 * Makes Next's Pages Router hydrate the page inside a transition, as its App Router does: React then hydrates in
 * slices of a few milliseconds, yielding to the browser between them, instead of one long task.
 */
export function hydrateInTransition(client: { hydrateRoot: HydrateRoot }): void {
  const hydrateRoot = client.hydrateRoot
  client.hydrateRoot = ((container, initialChildren, options) => {
    let root: ReturnType<HydrateRoot> | undefined
    startTransition(() => {
      root = hydrateRoot(container, initialChildren, options)
    })
    return root!
  }) as HydrateRoot
}
