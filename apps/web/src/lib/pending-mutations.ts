import { useSyncExternalStore } from 'react'

/**
 * How many API mutations are under way, for the progress bar in the app frame. The frame is on every page but the
 * query client is not (lib/api-provider.tsx: only pages and components that call the API bring it), so the client
 * reports here and the frame reads this tiny store instead of importing TanStack Query.
 */
let pending = 0
const listeners = new Set<() => void>()

export function setPendingMutations(count: number): void {
  if (count === pending) return
  pending = count
  for (const listener of listeners) listener()
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

/** True while at least one mutation is pending (always false on the server). */
export function useMutationPending(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => pending > 0,
    () => false,
  )
}
