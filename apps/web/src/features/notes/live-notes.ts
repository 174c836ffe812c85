import { useEffect, useRef, useState } from 'react'

import { useSession } from '../auth'

/**
 * A change to one of the signed-in user's notes made anywhere (another tab, another device, this tab), as Realtime
 * delivers it — or `resync` after the connection was lost, when changes may have been missed.
 */
export type NoteChange =
  | { type: 'INSERT' | 'UPDATE'; id: string; updatedAt: string; pinned?: boolean }
  | { type: 'DELETE'; id: string }
  | { type: 'resync' }

/** `subscribed`: changes are arriving; `reconnecting`: they have not for RECONNECTING_AFTER_MS, the user is told. */
export interface LiveState {
  subscribed: boolean
  reconnecting: boolean
}

/** How long the connection may be down before the page says so (a blip while a laptop wakes up is not news). */
export const RECONNECTING_AFTER_MS = 3_000

/**
 * Calls `onChange` for every change to the signed-in user's notes while mounted (docs/decisions/044-live-notes.md):
 * inserts and updates of `public.notes` filtered to the user's rows — Realtime checks each one against the notes' RLS
 * as this user, so nothing of another user arrives even without the filter — and deletions, which arrive for any
 * note of the table with its id alone (`DELETE` changes: the caller ignores ids it does not show). Nothing is
 * subscribed while signed out or while a second factor is still due (the notes are closed then).
 *
 * Returns whether to tell the user that live updates are interrupted: true once the channel has been down (socket
 * closed, offline, join refused) for RECONNECTING_AFTER_MS; realtime-js keeps retrying meanwhile, and when it is back
 * `onChange({ type: 'resync' })` lets the page fetch what it missed.
 */
export function useNoteChanges(onChange: (change: NoteChange) => void): LiveState {
  const { user, needsSecondFactor } = useSession()
  const userId = user && !needsSecondFactor ? user.id : null
  const callback = useRef(onChange)
  useEffect(() => {
    callback.current = onChange
  })
  const [reconnecting, setReconnecting] = useState(false)
  const [subscribed, setSubscribed] = useState(false)

  useEffect(() => {
    if (!userId) return
    let stopped = false
    let stop = () => {}
    // The subscription's code (and realtime-js behind it) loads after the page is up: none of it is first-load JS.
    import('./live-subscription')
      .then(({ subscribeNoteChanges }) => {
        if (stopped) return
        stop = subscribeNoteChanges(userId, {
          onChange: (change) => callback.current(change),
          onState: (state) => {
            setSubscribed(state.subscribed)
            setReconnecting(state.reconnecting)
          },
        })
      })
      .catch(() => {
        // The chunk could not be fetched (offline on a cold load): the page works as before, without live updates.
        if (!stopped) setTimeout(() => !stopped && setReconnecting(true), RECONNECTING_AFTER_MS)
      })
    return () => {
      stopped = true
      stop()
      setReconnecting(false)
      setSubscribed(false)
    }
  }, [userId])

  return { subscribed, reconnecting }
}
