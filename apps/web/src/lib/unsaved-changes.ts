/**
 * The page's unsaved changes, for actions outside the page that would end them: the account menu's Sign out asks
 * through here as a link out of the note asks (features/notes/NoteScreen.tsx). A store of its own so the menu needs
 * nothing of the notes feature. One guard at a time: the page with the open editor.
 */
type Guard = () => boolean

let current: Guard | null = null

/** Registers the page's guard: returns true when the user agrees to lose the changes. Returns the unregister. */
export function guardUnsavedChanges(guard: Guard): () => void {
  current = guard
  return () => {
    if (current === guard) current = null
  }
}

/** True when nothing unsaved would be lost, or the user agreed to lose it. */
export function confirmLeavingUnsaved(): boolean {
  return current ? current() : true
}
