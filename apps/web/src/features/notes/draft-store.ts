import { create } from 'zustand'

import type { NoteDraft } from './NoteForm'

interface DraftState {
  draft: NoteDraft
  setDraft: (draft: NoteDraft) => void
  clear: () => void
}

const EMPTY: NoteDraft = { title: '', body: '', pinned: false }

/**
 * The note being written in the create modal. It outlives the modal: closing it, a failed save or a visit to
 * another page never loses what was typed; only a successful create clears it. Browser memory only.
 */
export const useNoteDraft = create<DraftState>()((set) => ({
  draft: EMPTY,
  setDraft: (draft) => set({ draft }),
  clear: () => set({ draft: EMPTY }),
}))
