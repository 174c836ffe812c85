import { create } from 'zustand'

import type { NoteDraft } from './NoteForm'

interface DraftState {
  /** Whose draft it is: the user id that typed it. */
  owner: string | null
  draft: NoteDraft
  setDraft: (owner: string, draft: NoteDraft) => void
  clear: () => void
}

export const EMPTY_DRAFT: NoteDraft = { title: '', body: '', pinned: false }

/**
 * The note being written in the create modal. It outlives the modal: closing it, a failed save or a visit to
 * another page never loses what was typed; only a successful create clears it. Browser memory only, and its
 * writer's alone: after a sign-out the tab lives on (client-side navigation), so another user signing in there
 * must find an empty form, not the last one's text (`draftOf`).
 */
export const useNoteDraft = create<DraftState>()((set) => ({
  owner: null,
  draft: EMPTY_DRAFT,
  setDraft: (owner, draft) => set({ owner, draft }),
  clear: () => set({ owner: null, draft: EMPTY_DRAFT }),
}))

/** The draft as `userId` may see it: theirs, or an empty one. */
export function draftOf(state: Pick<DraftState, 'owner' | 'draft'>, userId: string | undefined): NoteDraft {
  return userId !== undefined && state.owner === userId ? state.draft : EMPTY_DRAFT
}
