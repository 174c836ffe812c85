import { useLiveNotesList } from './live-list'
import { LiveStatus } from './LiveStatus'

/**
 * The notes list's live part, loaded after the page is up (next/dynamic in NotesScreen): keeps the list in step with
 * changes made elsewhere and says when that is interrupted. None of it is first-load JS.
 */
export default function LiveList() {
  return <LiveStatus live={useLiveNotesList()} />
}
