import dynamic from 'next/dynamic'
import { useEffect, useState } from 'react'

import { usePrefetchWhenIdle } from '../../lib/use-prefetch-when-idle'
import { useSession } from '../auth'
import { isShortcutBlocked, useCreateModal } from './create-modal-store'

/** Keyboard shortcut that toggles the create modal (also announced via aria-keyshortcuts on the opener). */
export const CREATE_SHORTCUT_KEY = 'n'

/**
 * Toggles the create modal on `n` when focus is not in an editable field and no modifier is held — for signed-in
 * users who may write notes (nothing to create signed out, or before two-factor sign-in is finished).
 */
export function useCreateShortcut(enabled = true) {
  const toggleCreateModal = useCreateModal((s) => s.toggleCreateModal)
  useEffect(() => {
    if (!enabled) return
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.defaultPrevented || event.repeat || event.key.toLowerCase() !== CREATE_SHORTCUT_KEY) return
      if (isShortcutBlocked(event)) return
      event.preventDefault()
      toggleCreateModal()
    }
    window.addEventListener('keydown', onKeyDown)
    return () => window.removeEventListener('keydown', onKeyDown)
  }, [enabled, toggleCreateModal])
}

const loadCreateModal = () => import('./CreateModal')
const CreateModal = dynamic(loadCreateModal, { ssr: false })

/**
 * The create modal, kept out of the first-load bundle: its code (the native dialog, the note form
 * and its API providers) is fetched when the browser is idle after load for a signed-in user who may write notes,
 * and mounted the first time the modal opens.
 */
export function LazyCreateModal() {
  const open = useCreateModal((s) => s.open)
  const [used, setUsed] = useState(false)
  const { user, needsSecondFactor } = useSession()
  const canWrite = Boolean(user) && !needsSecondFactor
  useCreateShortcut(canWrite)

  useEffect(() => {
    if (open) setUsed(true)
  }, [open])

  // Only for a user who can open it (New, the n shortcut): a signed-out visitor never downloads it.
  usePrefetchWhenIdle(loadCreateModal, canWrite)

  return used || open ? <CreateModal /> : null
}
