export { CREATE_SHORTCUT_KEY, CreateModal, useCreateShortcut } from './CreateModal'
export { isShortcutBlocked, useCreateModal, type CreateModalState } from './create-modal-store'
