/**
 * The notes feature's rules as plain functions, with no validation library: the browser bundle checks the form
 * with these, and the router's zod schemas (schema.ts, server only) are built from the same functions, so a rule
 * lives in one place. The database's CHECK constraints (supabase/migrations/20261122010000_notes.sql) mirror them.
 */
import { groupDigits } from '../../lib/digits'

export const NOTE_TITLE_MAX = 200
export const NOTE_BODY_MAX = 20_000
export const NOTES_PAGE_SIZE = 20
export const NOTES_PAGE_SIZE_MAX = 100
export const NOTES_QUERY_MAX = 200
/** The id of the list's element on `/`. */
export const NOTES_LIST_ID = 'notes-list'
/** The id of an empty element right after it, which the page's first frame waits for (NotesScreen's `rel=expect`). */
export const NOTES_LIST_END_ID = 'notes-list-end'

export const NOTE_SORTS = ['updated_at', 'created_at', 'title'] as const
export type NoteSort = (typeof NOTE_SORTS)[number]
export type SortDir = 'asc' | 'desc'

/** Characters as PostgreSQL's char_length counts them (code points), not UTF-16 units. */
export const charLength = (value: string) => [...value].length

export const TITLE_REQUIRED = 'Give the note a title.'
export const TITLE_TOO_LONG = `Keep the title to ${NOTE_TITLE_MAX} characters.`
export const BODY_TOO_LONG = `Keep the note to ${groupDigits(NOTE_BODY_MAX)} characters.`

export const TITLE_CONTROL_CHARACTERS = 'The title cannot contain control characters or line breaks.'
export const TEXT_UNSTORABLE = 'The text contains a character that cannot be stored (a NUL or a broken surrogate pair).'

/**
 * Text PostgreSQL cannot store: NUL (text columns never hold it) and UTF-16 surrogates without their pair (not
 * valid Unicode; JSON carries them, PostgreSQL refuses them).
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
/** C0 controls and DEL: a title is one line of text. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001F\u007F]/

/** What is wrong with a title (after trimming), or null. */
export function titleProblem(title: string): string | null {
  const trimmed = title.trim()
  if (trimmed === '') return TITLE_REQUIRED
  if (charLength(trimmed) > NOTE_TITLE_MAX) return TITLE_TOO_LONG
  if (UNSTORABLE.test(trimmed)) return TEXT_UNSTORABLE
  if (CONTROL.test(trimmed)) return TITLE_CONTROL_CHARACTERS
  return null
}

/** What is wrong with a search text, or null (it is sent to the database as a LIKE pattern). */
export const searchProblem = (query: string): string | null => (UNSTORABLE.test(query) ? TEXT_UNSTORABLE : null)

/** What is wrong with a body, or null. */
export function bodyProblem(body: string): string | null {
  if (charLength(body) > NOTE_BODY_MAX) return BODY_TOO_LONG
  if (UNSTORABLE.test(body)) return TEXT_UNSTORABLE
  return null
}

/** The direction a column sorts in when first chosen: newest first for times, A→Z for titles. */
export const defaultDirFor = (sort: NoteSort): SortDir => (sort === 'title' ? 'asc' : 'desc')

/**
 * A search text as a LIKE pattern that matches it literally anywhere in the title. `%` and `_` (LIKE wildcards)
 * and the escape character itself get a backslash. PostgREST (and localbase) turn every `*` of a like/ilike value
 * into `%`, with no way to escape it, so a `*` becomes `_` (any one character): the closest literal match left.
 */
export function titleSearchPattern(q: string): string {
  const escaped = q.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '_')
  return `%${escaped}%`
}

/** "21–40 of 245": the rows a page shows, 1-based, or null when there are none. */
export function pageRange(page: number, pageSize: number, total: number): { from: number; to: number } | null {
  const from = (page - 1) * pageSize + 1
  if (total === 0 || from > total) return null
  return { from, to: Math.min(page * pageSize, total) }
}

export const pageCount = (total: number, pageSize: number) => Math.max(1, Math.ceil(total / pageSize))
