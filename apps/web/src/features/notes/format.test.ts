import { afterEach, describe, expect, it } from 'vitest'

import { seededRandom } from '../../lib/seeded-random'
import { attachedFiles, countMatches, countNotes, filesDeletedForGood, formatFull, formatWhen } from './format'

/** What the functions replace (ADR 058): `Intl` for `en`, in the runtime's zone. */
function byIntl() {
  const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })
  const dayMonth = new Intl.DateTimeFormat('en', { day: 'numeric', month: 'short' })
  const dayMonthYear = new Intl.DateTimeFormat('en', { day: 'numeric', month: 'short', year: 'numeric' })
  const full = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' })
  const when = (date: Date, now: Date) => {
    const elapsed = now.getTime() - date.getTime()
    if (elapsed < 60_000) return 'just now'
    if (elapsed < 3_600_000) return relative.format(-Math.floor(elapsed / 60_000), 'minute')
    if (elapsed < 86_400_000) return relative.format(-Math.floor(elapsed / 3_600_000), 'hour')
    if (elapsed < 7 * 86_400_000) return relative.format(-Math.floor(elapsed / 86_400_000), 'day')
    return date.getFullYear() === now.getFullYear() ? dayMonth.format(date) : dayMonthYear.format(date)
  }
  // ICU may put a narrow no-break space before AM/PM (CLDR 42–43); the app writes a plain space
  return { when, full: (date: Date) => full.format(date).replace(/\u202f/g, ' ') }
}

const ZONE = process.env.TZ
afterEach(() => {
  if (ZONE === undefined) delete process.env.TZ
  else process.env.TZ = ZONE
})

describe('formatWhen', () => {
  const now = new Date('2026-11-22T12:00:00Z')
  it('is relative for the last week and a date after that', () => {
    expect(formatWhen(new Date('2026-11-22T11:59:30Z'), now)).toBe('just now')
    expect(formatWhen(new Date('2026-11-22T12:00:30Z'), now)).toBe('just now') // a clock a little ahead
    expect(formatWhen(new Date('2026-11-22T11:59:00Z'), now)).toBe('1 minute ago')
    expect(formatWhen(new Date('2026-11-22T11:55:00Z'), now)).toBe('5 minutes ago')
    expect(formatWhen(new Date('2026-11-22T11:00:00Z'), now)).toBe('1 hour ago')
    expect(formatWhen(new Date('2026-11-22T09:00:00Z'), now)).toBe('3 hours ago')
    expect(formatWhen(new Date('2026-11-21T11:00:00Z'), now)).toBe('yesterday')
    expect(formatWhen(new Date('2026-11-16T11:00:00Z'), now)).toBe('6 days ago')
    expect(formatWhen(new Date('2026-11-02T11:00:00Z'), now)).toBe('Nov 2')
    expect(formatWhen(new Date('2025-11-02T11:00:00Z'), now)).toBe('Nov 2, 2025')
  })
  it('reads as Intl.RelativeTimeFormat and Intl.DateTimeFormat for en in every zone, without Intl', () => {
    for (const zone of ['UTC', 'America/Los_Angeles', 'Asia/Kolkata', 'Pacific/Chatham', 'Australia/Lord_Howe']) {
      process.env.TZ = zone
      const intl = byIntl()
      const next = seededRandom(zone.length * 7919)
      for (let i = 0; i < 4000; i++) {
        // now between 2000 and 2100; the date up to 3 years before it, often within the last week
        const now = new Date(Date.UTC(2000, 0, 1) + next() * 100 * 365 * 86_400_000)
        const span = next() < 0.5 ? 8 * 86_400_000 : 3 * 365 * 86_400_000
        const date = new Date(now.getTime() - Math.floor(next() * span))
        expect([zone, date.toISOString(), now.toISOString(), formatWhen(date, now)]).toEqual([zone, date.toISOString(), now.toISOString(), intl.when(date, now)])
        expect([zone, date.toISOString(), formatFull(date)]).toEqual([zone, date.toISOString(), intl.full(date)])
      }
    }
  })
})

describe('formatFull', () => {
  it('is the date and the time on a 12-hour clock', () => {
    process.env.TZ = 'UTC'
    expect(formatFull(new Date('2026-11-22T14:05:00Z'))).toBe('Nov 22, 2026, 2:05 PM')
    expect(formatFull(new Date('2026-01-02T00:07:00Z'))).toBe('Jan 2, 2026, 12:07 AM')
    expect(formatFull(new Date('2026-01-02T12:07:00Z'))).toBe('Jan 2, 2026, 12:07 PM')
  })
})

describe('counts', () => {
  it('counts notes in words', () => {
    expect(countNotes(0)).toBe('0 notes')
    expect(countNotes(1)).toBe('1 note')
    expect(countNotes(1245)).toBe('1,245 notes')
  })
})

describe('countMatches', () => {
  it('one note matches, several match', () => {
    expect(countMatches(1, 'milk')).toBe('1 note matches “milk”')
    expect(countMatches(0, 'milk')).toBe('0 notes match “milk”')
    expect(countMatches(1200, 'a')).toBe(`${countNotes(1200)} match “a”`)
  })
})

describe('the files of a deleted note', () => {
  it('are counted with grouped digits, in the toast and in the confirmation', () => {
    expect(filesDeletedForGood(0)).toBe('')
    expect(filesDeletedForGood(1)).toBe(' — its file was deleted for good')
    expect(filesDeletedForGood(1005)).toBe(' — its 1,005 files were deleted for good')
    expect(attachedFiles(1)).toBe('attached file')
    expect(attachedFiles(1005)).toBe('1,005 attached files')
  })
})
