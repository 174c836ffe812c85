import { QueryClient } from '@tanstack/react-query'
import { afterEach, describe, expect, it } from 'vitest'

import { publishSessionScope, sessionScopeOf } from '../../lib/session-scope'
import { tieQueryCacheToSession } from './query-scope'

// The browser keeps one query cache for the visit while the pages that call the API come and go (ADR 038): the cache
// must follow the session even when no page with the API is on screen.
const undo: Array<() => void> = []
afterEach(() => {
  while (undo.length) undo.pop()?.()
})

function tiedClient(): QueryClient {
  const client = new QueryClient()
  undo.push(tieQueryCacheToSession(client), () => client.clear())
  return client
}

describe('query cache tied to the session', () => {
  it("drops one user's answers when another user signs in, though no API page was mounted in between", () => {
    publishSessionScope(sessionScopeOf('user-a', false))
    const client = tiedClient()
    client.setQueryData(['notes', 'list'], ['a secret note of user A'])

    // Signed out (on a page without the API providers), then user B signs in.
    publishSessionScope(sessionScopeOf(null, false))
    publishSessionScope(sessionScopeOf('user-b', false))
    expect(client.getQueryData(['notes', 'list'])).toBeUndefined()
  })

  it('drops the answers read at aal2 when the session falls back to aal1', () => {
    publishSessionScope(sessionScopeOf('user-c', false))
    const client = tiedClient()
    client.setQueryData(['notes', 'list'], ['read with the second factor'])
    publishSessionScope(sessionScopeOf('user-c', true))
    expect(client.getQueryData(['notes', 'list'])).toBeUndefined()
  })

  it('keeps the cache while the session stays the same (a refreshed token, a new page)', () => {
    publishSessionScope(sessionScopeOf('user-d', false))
    const client = tiedClient()
    client.setQueryData(['notes', 'list'], ['kept'])
    publishSessionScope(sessionScopeOf('user-d', false))
    publishSessionScope(undefined) // a page whose session is still being read
    expect(client.getQueryData(['notes', 'list'])).toEqual(['kept'])
  })
})
