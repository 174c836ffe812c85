import { beforeEach, describe, expect, it } from 'vitest'

import { swipeOutcome, toast, toastStore, TOAST_ANIMATION_MS, TOAST_DURATION_MS } from './toast-store'

beforeEach(() => toastStore.setState({ toasts: [] }))

describe('toast API', () => {
  it('adds toasts of each kind in order, with an optional description', () => {
    const a = toast.success('Saved', 'All good')
    const b = toast.error('Failed')
    const c = toast.info('Heads up', 'FYI')
    expect(toastStore.getState().toasts).toEqual([
      { id: a, kind: 'success', title: 'Saved', description: 'All good' },
      { id: b, kind: 'error', title: 'Failed' },
      { id: c, kind: 'info', title: 'Heads up', description: 'FYI' },
    ])
    expect(new Set([a, b, c]).size).toBe(3)
  })

  it('a toast with the key of an open one takes its place (the newest, a new id); other keys and keyless toasts stay', () => {
    const other = toast.info('Pinned', 'Journal')
    const first = toast.success('Saved', 'Journal', { key: 'saved:1' })
    const elsewhere = toast.success('Saved', 'Groceries', { key: 'saved:2' })
    const again = toast.success('Saved', 'Journal', { key: 'saved:1' })
    expect(again).not.toBe(first)
    expect(toastStore.getState().toasts.map((t) => t.id)).toEqual([other, elsewhere, again])
  })

  it('dismisses one toast by id and leaves the others', () => {
    const a = toast.info('one')
    const b = toast.info('two')
    toast.dismiss(a)
    expect(toastStore.getState().toasts.map((t) => t.id)).toEqual([b])
  })

  it('uses the spec timings', () => {
    expect(TOAST_DURATION_MS).toBe(6000)
    expect(TOAST_ANIMATION_MS).toBe(100)
  })

  it('starts a swipe after 10 px upward and dismisses past 20 px', () => {
    expect(swipeOutcome(-30)).toBe('none')
    expect(swipeOutcome(10)).toBe('none')
    expect(swipeOutcome(11)).toBe('dragging')
    expect(swipeOutcome(20)).toBe('dragging')
    expect(swipeOutcome(21)).toBe('dismiss')
  })
})
