import { create } from 'zustand'

export interface CreateModalState {
  open: boolean
  toggleCreateModal: () => void
  setOpen: (open: boolean) => void
}

/** The one global flag behind the create modal (spec §2, §4). */
export const useCreateModal = create<CreateModalState>()((set) => ({
  open: false,
  toggleCreateModal: () => set((state) => ({ open: !state.open })),
  setOpen: (open) => set({ open }),
}))

// Remember what had focus when the modal opened (the New button, or wherever `n` was pressed). The store
// notifies synchronously, before the dialog moves focus inside, and before its code has even loaded.
let opener: HTMLElement | null = null
if (typeof document !== 'undefined') {
  useCreateModal.subscribe((state, previous) => {
    if (state.open && !previous.open) {
      const active = document.activeElement
      opener = active instanceof HTMLElement && active !== document.body ? active : null
    }
  })
}

/** The element to give focus back to when the modal closes (once). */
export function takeCreateModalOpener(): HTMLElement | null {
  const element = opener
  opener = null
  return element
}

/** True when a key press should not trigger app shortcuts: typing in a field, or a modifier held. */
export function isShortcutBlocked(event: Pick<KeyboardEvent, 'target' | 'altKey' | 'ctrlKey' | 'metaKey' | 'shiftKey'>) {
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return true
  const target = event.target as (Element & { isContentEditable?: boolean }) | null
  if (!target || typeof target.closest !== 'function') return false
  if (target.isContentEditable) return true
  return target.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]') !== null
}
