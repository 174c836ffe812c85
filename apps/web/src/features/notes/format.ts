/** Dates as the notes screens show them: relative when recent ("5 min ago"), the date when older. */

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })
const dayMonth = new Intl.DateTimeFormat('en', { day: 'numeric', month: 'short' })
const dayMonthYear = new Intl.DateTimeFormat('en', { day: 'numeric', month: 'short', year: 'numeric' })
const full = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' })

export function formatWhen(date: Date, now: Date = new Date()): string {
  const ago = now.getTime() - date.getTime()
  if (ago < MINUTE) return 'just now'
  if (ago < HOUR) return relative.format(-Math.floor(ago / MINUTE), 'minute')
  if (ago < DAY) return relative.format(-Math.floor(ago / HOUR), 'hour')
  if (ago < 7 * DAY) return relative.format(-Math.floor(ago / DAY), 'day')
  return date.getFullYear() === now.getFullYear() ? dayMonth.format(date) : dayMonthYear.format(date)
}

/** The exact time, for a tooltip or a detail line: "Nov 22, 2026, 2:24 AM". */
export const formatFull = (date: Date) => full.format(date)

/** "1 note", "245 notes". */
export const countNotes = (n: number) => `${n.toLocaleString('en-US')} ${n === 1 ? 'note' : 'notes'}`
