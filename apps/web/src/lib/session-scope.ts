/**
 * Whose API answers may be on screen: `<user id>:<aal1|full>` of the current session, `undefined` while the session
 * is still being read. SessionProvider (on every page) publishes it; the query cache, which only pages that call the
 * API load, listens (features/auth/query-scope.ts). A store of its own so the provider needs no TanStack Query code.
 */
export type SessionScope = string | undefined

let current: SessionScope
const listeners = new Set<(scope: string) => void>()

export function sessionScopeOf(userId: string | null, needsSecondFactor: boolean): string {
  return `${userId ?? ''}:${needsSecondFactor ? 'aal1' : 'full'}`
}

export function publishSessionScope(scope: SessionScope): void {
  if (scope === undefined || scope === current) return
  current = scope
  for (const listener of listeners) listener(scope)
}

export function currentSessionScope(): SessionScope {
  return current
}

/** Calls `listener` with every new (known) scope; returns the unsubscribe function. */
export function onSessionScopeChange(listener: (scope: string) => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}
