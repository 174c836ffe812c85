export { CREATE_SHORTCUT_KEY, LazyCreateModal as CreateModal, useCreateShortcut } from './LazyCreateModal'
export { isShortcutBlocked, takeCreateModalOpener, useCreateModal, type CreateModalState } from './create-modal-store'
