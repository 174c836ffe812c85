import { describe, expect, it } from 'vitest'

import { countNotes, formatWhen } from './format'

describe('formatWhen', () => {
  const now = new Date('2026-11-22T12:00:00Z')
  it('is relative for the last week and a date after that', () => {
    expect(formatWhen(new Date('2026-11-22T11:59:30Z'), now)).toBe('just now')
    expect(formatWhen(new Date('2026-11-22T11:55:00Z'), now)).toBe('5 minutes ago')
    expect(formatWhen(new Date('2026-11-22T09:00:00Z'), now)).toBe('3 hours ago')
    expect(formatWhen(new Date('2026-11-21T11:00:00Z'), now)).toBe('yesterday')
    expect(formatWhen(new Date('2026-11-02T11:00:00Z'), now)).toBe('Nov 2')
    expect(formatWhen(new Date('2025-11-02T11:00:00Z'), now)).toBe('Nov 2, 2025')
  })
  it('counts notes in words', () => {
    expect(countNotes(1)).toBe('1 note')
    expect(countNotes(1245)).toBe('1,245 notes')
  })
})
