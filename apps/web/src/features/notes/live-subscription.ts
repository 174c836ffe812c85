import { loadRealtime } from '../../lib/supabase/realtime'
import { RECONNECTING_AFTER_MS, type LiveState, type NoteChange } from './live-notes'

interface NoteRow {
  id?: unknown
  updated_at?: unknown
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
      const channel = realtime
        .channel(`notes:${userId}`)
        .on('postgres_changes', { event: '*', schema: 'public', table: 'notes', filter: `user_id=eq.${userId}` }, (payload) => {
          const row = payload.new as NoteRow
          if (payload.eventType === 'DELETE' || typeof row.id !== 'string') return
          onChange({ type: payload.eventType, id: row.id, updatedAt: String(row.updated_at) })
        })
        .on('postgres_changes', { event: 'DELETE', schema: 'public', table: 'notes' }, (payload) => {
          const row = payload.old as NoteRow
          if (typeof row.id === 'string') onChange({ type: 'DELETE', id: row.id })
        })
        .subscribe((status) => {
          if (stopped) return
          if (status === 'SUBSCRIBED') backUp()
          else if (status === 'CHANNEL_ERROR' || status === 'TIMED_OUT' || status === 'CLOSED') goneDown()
        })
      cleanup = () => void realtime.removeChannel(channel)
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
