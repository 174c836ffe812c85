/**
 * Unsaved note text kept through the end of a session (signed out in another tab, or the session ended elsewhere),
 * so that the same user, signed in again in this tab, is offered it back on the note (docs/decisions/065-note-edits-survive-saves-back-and-sign-out.md).
 * Kept in this tab's sessionStorage under the user's id and the note's id: another user never reads it (the note
 * page reads only the signed-in user's key, and another user's note is a 404), and it goes with the tab.
 */
export interface KeptEdits {
  title: string
  body: string
}

const PREFIX = 'foyer:unsaved-note:'

export const keptEditsKey = (userId: string, noteId: string) => `${PREFIX}${userId}:${noteId}`

/** The storage, or null where there is none (server render, storage switched off). */
function storage(): Storage | null {
  try {
    return typeof window === 'undefined' ? null : window.sessionStorage
  } catch {
    return null
  }
}

export function keepEdits(userId: string, noteId: string, edits: KeptEdits, store = storage()): void {
  try {
    store?.setItem(keptEditsKey(userId, noteId), JSON.stringify({ title: edits.title, body: edits.body }))
  } catch {
    // Full or refused: nothing more can be done once the session is gone.
  }
}

export function readKeptEdits(userId: string, noteId: string, store = storage()): KeptEdits | null {
  try {
    const raw = store?.getItem(keptEditsKey(userId, noteId))
    if (!raw) return null
    const value = JSON.parse(raw) as Partial<KeptEdits>
    return typeof value.title === 'string' && typeof value.body === 'string' ? { title: value.title, body: value.body } : null
  } catch {
    return null
  }
}

export function forgetKeptEdits(userId: string, noteId: string, store = storage()): void {
  try {
    store?.removeItem(keptEditsKey(userId, noteId))
  } catch {
    // Nothing to forget.
  }
}
