import type { RealtimeChannel } from '@supabase/realtime-js'

import { loadRealtime } from '../../lib/supabase/realtime'
import { RECONNECTING_AFTER_MS, type LiveState, type NoteChange } from './live-notes'

interface NoteRow {
  id?: unknown
  updated_at?: unknown
  pinned?: unknown
}

interface Listeners {
  onChange: (change: NoteChange) => void
  onState: (state: LiveState) => void
}

/**
 * The subscription behind useNoteChanges (./live-notes.ts), in a chunk of its own: one channel on the page's Realtime
 * client with inserts and updates of the user's notes (filtered by owner; Realtime checks each against the notes'
 * RLS as this user) and deletions (which carry the id alone, so no owner filter can match them: every subscriber of
 * the table hears them and the page keeps the ids it holds). Reports the connection: `reconnecting` once it has been
 * down RECONNECTING_AFTER_MS, and a `resync` change when it is back after a loss. Returns the unsubscribe.
 */
export function subscribeNoteChanges(userId: string, { onChange, onState }: Listeners): () => void {
  let stopped = false
  let everSubscribed = false
  let down = false
  let downTimer: ReturnType<typeof setTimeout> | undefined
  const goneDown = () => {
    if (down) return
    down = true
    onState({ subscribed: false, reconnecting: false })
    downTimer = setTimeout(() => !stopped && onState({ subscribed: false, reconnecting: true }), RECONNECTING_AFTER_MS)
  }
  const backUp = () => {
    clearTimeout(downTimer)
    onState({ subscribed: true, reconnecting: false })
    if (down && everSubscribed) onChange({ type: 'resync' })
    down = false
    everSubscribed = true
  }
  const onOffline = () => goneDown()
  window.addEventListener('offline', onOffline)

  let cleanup = () => {}
  loadRealtime()
    .then((realtime) => {
      if (stopped) return
      let channel: RealtimeChannel | undefined
      let retry: ReturnType<typeof setTimeout> | undefined
      let attempts = 0
      const open = () => {
        // Set when Realtime ends the channel itself (its token expired before a fresh one reached it, or the
        // policies changed): it sends a system error, then closes the channel, and realtime-js does not join again.
        let shutByServer = false
        const current = realtime
          .channel(`notes:${userId}`)
          .on('postgres_changes', { event: '*', schema: 'public', table: 'notes', filter: `user_id=eq.${userId}` }, (payload) => {
            const row = payload.new as NoteRow
            if (payload.eventType === 'DELETE' || typeof row.id !== 'string') return
            const pinned = typeof row.pinned === 'boolean' ? row.pinned : undefined
            onChange({ type: payload.eventType, id: row.id, updatedAt: String(row.updated_at), pinned })
          })
          .on('postgres_changes', { event: 'DELETE', schema: 'public', table: 'notes' }, (payload) => {
            const row = payload.old as NoteRow
            if (typeof row.id === 'string') onChange({ type: 'DELETE', id: row.id })
          })
          .on('system', {}, (payload: { extension?: unknown; status?: unknown }) => {
            if (payload.extension === 'system' && payload.status === 'error') shutByServer = true
          })
          .subscribe((status) => {
            if (stopped || current !== channel) return
            if (status === 'SUBSCRIBED') {
              attempts = 0
              backUp()
            } else if (status === 'CHANNEL_ERROR' || status === 'TIMED_OUT') goneDown()
            else if (status === 'CLOSED') {
              goneDown()
              // Closed by the server — not by us (unmount) nor by the realtime client (sign-out, no system error):
              // join again once the session has a token that is good now.
              if (shutByServer) reopen()
            }
          })
        channel = current
      }
      const reopen = () => {
        clearTimeout(retry)
        const wait = REJOIN_AFTER_MS[Math.min(attempts, REJOIN_AFTER_MS.length - 1)]
        attempts += 1
        retry = setTimeout(() => {
          // The session's token now (auth-js refreshes one that is about to expire), pushed to the client first.
          void realtime
            .setAuth()
            .catch(() => {})
            .then(() => {
              if (stopped) return
              // None that Realtime would take (signed out meanwhile, the auth server unreachable): try again later.
              if (usableToken(realtime.accessTokenValue)) open()
              else reopen()
            })
        }, wait)
      }
      open()
      cleanup = () => {
        clearTimeout(retry)
        if (channel) void realtime.removeChannel(channel)
      }
    })
    .catch(() => {
      // realtime-js could not be loaded (offline on a cold load): the page works as before, without live updates.
      if (!stopped) goneDown()
    })

  return () => {
    stopped = true
    clearTimeout(downTimer)
    window.removeEventListener('offline', onOffline)
    cleanup()
  }
}

/** Waits before joining again a channel the server closed: 1 s, then 2, 5 and every 10 s while there is no token. */
const REJOIN_AFTER_MS = [1_000, 2_000, 5_000, 10_000]

/** A JWT whose `exp` is still ahead (with a few seconds to spare for the join to arrive). */
export function usableToken(token: string | null, now = Date.now()): boolean {
  const payload = token?.split('.')[1]
  if (!payload) return false
  try {
    const claims = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: unknown }
    return typeof claims.exp === 'number' && claims.exp * 1000 > now + 5_000
  } catch {
    return false
  }
}
