import { beforeEach, describe, expect, it } from 'vitest'

import { isShortcutBlocked, useCreateModal } from './create-modal-store'

beforeEach(() => useCreateModal.setState({ open: false }))

describe('create modal store', () => {
  it('starts closed and flips with toggleCreateModal', () => {
    const { toggleCreateModal } = useCreateModal.getState()
    expect(useCreateModal.getState().open).toBe(false)
    toggleCreateModal()
    expect(useCreateModal.getState().open).toBe(true)
    toggleCreateModal()
    expect(useCreateModal.getState().open).toBe(false)
  })

  it('sets the flag directly with setOpen', () => {
    useCreateModal.getState().setOpen(true)
    useCreateModal.getState().setOpen(true)
    expect(useCreateModal.getState().open).toBe(true)
    useCreateModal.getState().setOpen(false)
    expect(useCreateModal.getState().open).toBe(false)
  })

  it('notifies subscribers of each change', () => {
    const seen: boolean[] = []
    const unsubscribe = useCreateModal.subscribe((state) => seen.push(state.open))
    useCreateModal.getState().toggleCreateModal()
    useCreateModal.getState().setOpen(false)
    unsubscribe()
    expect(seen).toEqual([true, false])
  })
})

describe('shortcut guard', () => {
  const key = (target: unknown, mods: Partial<Record<'altKey' | 'ctrlKey' | 'metaKey' | 'shiftKey', boolean>> = {}) => ({
    target: target as EventTarget,
    altKey: false,
    ctrlKey: false,
    metaKey: false,
    shiftKey: false,
    ...mods,
  })
  const element = (editable: boolean) => ({ closest: () => (editable ? {} : null), isContentEditable: false })

  it('lets a bare key through outside fields and blocks it in fields or with modifiers', () => {
    expect(isShortcutBlocked(key(element(false)))).toBe(false)
    expect(isShortcutBlocked(key(null))).toBe(false)
    expect(isShortcutBlocked(key(element(true)))).toBe(true)
    expect(isShortcutBlocked(key({ closest: () => null, isContentEditable: true }))).toBe(true)
    for (const mod of ['altKey', 'ctrlKey', 'metaKey', 'shiftKey'] as const) {
      expect(isShortcutBlocked(key(element(false), { [mod]: true }))).toBe(true)
    }
  })
})
