import { useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef } from 'react'

import { useTRPC } from '../../lib/trpc'
import { useNoteChanges, type LiveState } from './live-notes'

/** Changes arriving together (a bulk edit elsewhere) are fetched once. */
const COALESCE_MS = 100

/**
 * Keeps the notes list live: any change to the user's notes, from anywhere, refetches the list queries on screen
 * (and marks the others stale) — the page, its order, the total and the pinned-first rule all come from the server
 * again, so a note lands exactly where the current sort and page put it (docs/decisions/044-live-notes.md: why a
 * refetch and not a patch of the cache). The list shows its current rows until the new ones arrive (no flicker).
 * A deletion counts when the note is on a page this visit has listed; one on a page never opened leaves the total
 * one too high until the next fetch (Realtime does not say whose note it was).
 */
export function useLiveNotesList(): LiveState {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  useEffect(() => () => clearTimeout(timer.current), [])
  const listed = (id: string) =>
    queryClient
      .getQueriesData<{ items: { id: string }[] }>({ queryKey: trpc.notes.list.pathKey() })
      .some(([, data]) => data?.items.some((note) => note.id === id))
  return useNoteChanges((change) => {
    // A deletion of a note this page has never listed may be another user's (it carries the id alone): no refetch.
    if (change.type === 'DELETE' && !listed(change.id)) return
    clearTimeout(timer.current)
    timer.current = setTimeout(() => void queryClient.invalidateQueries({ queryKey: trpc.notes.list.pathKey() }), COALESCE_MS)
  })
}
