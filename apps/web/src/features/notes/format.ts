/**
 * Dates and counts as the notes screens show them: relative when recent ("5 minutes ago"), the date when older.
 *
 * Written out in English rather than through `Intl` (docs/decisions/058-no-intl-on-first-pages.md): a page's first
 * `Intl` formatter, or its first `toLocaleString`, makes Chromium load ICU's locale data, 50–90 ms of main thread on
 * the bench machine (4 × that at the lab's throttle), in the task that renders the list. The strings are exactly
 * what `Intl` gives for the `en` locale with the options named beside each function (format.test.ts compares them
 * over many dates), in the runtime's time zone, as `Intl` without a `timeZone` would.
 */
import { groupDigits } from '../../lib/digits'

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const

/** `Intl.RelativeTimeFormat('en', { numeric: 'auto' }).format(-n, unit)` for n ≥ 1. */
const ago = (n: number, unit: 'minute' | 'hour' | 'day') => (unit === 'day' && n === 1 ? 'yesterday' : `${n} ${unit}${n === 1 ? '' : 's'} ago`)

/** `Intl.DateTimeFormat('en', { day: 'numeric', month: 'short' })`: "Nov 2". */
const dayMonth = (date: Date) => `${MONTHS[date.getMonth()] ?? ''} ${date.getDate()}`

/** `Intl.DateTimeFormat('en', { day: 'numeric', month: 'short', year: 'numeric' })`: "Nov 2, 2025" (years 1–9999). */
const dayMonthYear = (date: Date) => `${dayMonth(date)}, ${date.getFullYear()}`

export function formatWhen(date: Date, now: Date = new Date()): string {
  const elapsed = now.getTime() - date.getTime()
  if (elapsed < MINUTE) return 'just now'
  if (elapsed < HOUR) return ago(Math.floor(elapsed / MINUTE), 'minute')
  if (elapsed < DAY) return ago(Math.floor(elapsed / HOUR), 'hour')
  if (elapsed < 7 * DAY) return ago(Math.floor(elapsed / DAY), 'day')
  return date.getFullYear() === now.getFullYear() ? dayMonth(date) : dayMonthYear(date)
}

/**
 * The exact time, for a tooltip or a detail line: "Nov 22, 2026, 2:24 PM", as
 * `Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' })`.
 */
export function formatFull(date: Date): string {
  const hours = date.getHours()
  const minutes = String(date.getMinutes()).padStart(2, '0')
  return `${dayMonthYear(date)}, ${hours % 12 || 12}:${minutes} ${hours < 12 ? 'AM' : 'PM'}`
}

/** "1 note", "245 notes". */
/** The end of the "Note deleted" toast for a note that had n files: " — its 1,005 files were deleted for good". */
export const filesDeletedForGood = (n: number) =>
  n === 0 ? '' : ` — ${n === 1 ? 'its file was' : `its ${groupDigits(n)} files were`} deleted for good`

/** "attached file" / "1,005 attached files", as the delete confirmation names a note's files. */
export const attachedFiles = (n: number) => (n === 1 ? 'attached file' : `${groupDigits(n)} attached files`)

export const countNotes = (n: number) => `${groupDigits(n)} ${n === 1 ? 'note' : 'notes'}`
/** The count line of a search: "1 note matches “q”", "2 notes match “q”". */
export const countMatches = (n: number, q: string) => `${countNotes(n)} ${n === 1 ? 'matches' : 'match'} “${q}”`
