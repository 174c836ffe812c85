/**
 * The notes feature's rules, shared by the form (inline validation) and the tRPC router (input validation), and
 * mirrored by the database's CHECK constraints (supabase/migrations/20261122010000_notes.sql).
 */
import { z } from 'zod'

export const NOTE_TITLE_MAX = 200
export const NOTE_BODY_MAX = 20_000
export const NOTES_PAGE_SIZE = 20
export const NOTES_PAGE_SIZE_MAX = 100
export const NOTES_QUERY_MAX = 200

/** Characters as PostgreSQL's char_length counts them (code points), not UTF-16 units. */
export const charLength = (value: string) => [...value].length

export const noteTitleSchema = z
  .string()
  .trim()
  .min(1, 'Give the note a title.')
  .refine((title) => charLength(title) <= NOTE_TITLE_MAX, `Keep the title to ${NOTE_TITLE_MAX} characters.`)

/** An empty body is stored as null. */
export const noteBodySchema = z
  .string()
  .refine((body) => charLength(body) <= NOTE_BODY_MAX, `Keep the note to ${NOTE_BODY_MAX.toLocaleString('en-US')} characters.`)
  .nullish()
  .transform((body) => (body && body.trim() !== '' ? body : null))

export const noteIdSchema = z.uuid('Not a note id.')

export const noteInputSchema = z.object({
  title: noteTitleSchema,
  body: noteBodySchema,
  pinned: z.boolean().default(false),
})
export type NoteInput = z.input<typeof noteInputSchema>

export const noteUpdateSchema = z.object({
  id: noteIdSchema,
  title: noteTitleSchema,
  body: noteBodySchema,
})

export const NOTE_SORTS = ['updated_at', 'created_at', 'title'] as const
export type NoteSort = (typeof NOTE_SORTS)[number]
export type SortDir = 'asc' | 'desc'

/** The direction a column sorts in when first chosen: newest first for times, A→Z for titles. */
export const defaultDirFor = (sort: NoteSort): SortDir => (sort === 'title' ? 'asc' : 'desc')

export const listNotesInputSchema = z.object({
  sort: z.enum(NOTE_SORTS).default('updated_at'),
  dir: z.enum(['asc', 'desc']).optional(),
  page: z.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.number().int().min(1).max(NOTES_PAGE_SIZE_MAX).default(NOTES_PAGE_SIZE),
  q: z.string().trim().max(NOTES_QUERY_MAX).optional(),
})
export type ListNotesInput = z.input<typeof listNotesInputSchema>

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
