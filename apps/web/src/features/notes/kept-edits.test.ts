import { describe, expect, it } from 'vitest'

import { forgetKeptEdits, keepEdits, keptEditsKey, readKeptEdits } from './kept-edits'

/** A Storage in memory (the unit tests run in Node). */
function memoryStorage(): Storage {
  const items = new Map<string, string>()
  return {
    get length() {
      return items.size
    },
    clear: () => items.clear(),
    getItem: (key) => items.get(key) ?? null,
    key: (index) => [...items.keys()][index] ?? null,
    removeItem: (key) => void items.delete(key),
    setItem: (key, value) => void items.set(key, String(value)),
  }
}

describe('kept edits', () => {
  it('are read back for the same user and note only, and forgotten', () => {
    const store = memoryStorage()
    keepEdits('user-a', 'note-1', { title: 'T', body: 'typed' }, store)
    expect(readKeptEdits('user-a', 'note-1', store)).toEqual({ title: 'T', body: 'typed' })
    expect(readKeptEdits('user-b', 'note-1', store)).toBeNull()
    expect(readKeptEdits('user-a', 'note-2', store)).toBeNull()
    forgetKeptEdits('user-a', 'note-1', store)
    expect(readKeptEdits('user-a', 'note-1', store)).toBeNull()
    expect(store.length).toBe(0)
  })

  it('ignore what is not theirs to read (garbage, another shape) and a storage that throws', () => {
    const store = memoryStorage()
    store.setItem(keptEditsKey('u', 'n'), '{not json')
    expect(readKeptEdits('u', 'n', store)).toBeNull()
    store.setItem(keptEditsKey('u', 'n'), JSON.stringify({ title: 1 }))
    expect(readKeptEdits('u', 'n', store)).toBeNull()
    const refusing = { ...memoryStorage(), setItem: () => { throw new Error('QuotaExceededError') } } as Storage
    expect(() => keepEdits('u', 'n', { title: 'a', body: 'b' }, refusing)).not.toThrow()
    expect(readKeptEdits('u', 'n', null)).toBeNull()
  })
})
