import type { PostgrestError } from '@supabase/supabase-js'
import { TRPCError } from '@trpc/server'
import { z } from 'zod'

import type { AppDataClient, Tables } from '../../lib/supabase/client-type'
import { defaultDirFor, titleSearchPattern, type NoteSort } from '../../features/notes/rules'
import {
  listNotesInputSchema,
  noteBodySchema,
  noteIdSchema,
  noteInputSchema,
  noteTitleSchema,
  noteUpdateSchema,
} from '../../features/notes/schema'
import { secondFactorRequiredError } from '../second-factor'
import { removeAllAttachments, storageOf } from './attachments'
import { createTRPCRouter, protectedProcedure } from '../trpc'

/** A note as the app sees it. */
export interface Note {
  id: string
  title: string
  body: string | null
  pinned: boolean
  createdAt: Date
  updatedAt: Date
}

/** A row of the list: the body shortened to an excerpt (the list never needs 20,000 characters per row). */
export type NoteListItem = Omit<Note, 'body'> & { excerpt: string | null }

/** The columns the router reads (NOTE_COLUMNS), typed by the generated `Database` (lib/supabase/database.types.ts). */
type NoteRow = Pick<Tables<'notes'>, 'id' | 'title' | 'body' | 'pinned' | 'created_at' | 'updated_at'>
/** The columns the list reads (LIST_COLUMNS): the body's flattened first 200 characters in place of the body. */
type NoteListRow = Omit<NoteRow, 'body'> & Pick<Tables<'notes'>, 'excerpt_source'>

const NOTE_COLUMNS = 'id,title,body,pinned,created_at,updated_at'
/**
 * The list never reads bodies: `excerpt_source` is the body with whitespace runs folded, cut to 200 characters (a
 * stored generated column, supabase/migrations/20261129100000_notes_excerpt_source.sql), enough for excerptOf to
 * give the excerpt of the whole body (ADR 180). 20 notes of 20,000 characters were 380 kB a page from the Data API.
 */
const LIST_COLUMNS = 'id,title,excerpt_source,pinned,created_at,updated_at'
export const EXCERPT_LENGTH = 160

/** The database columns each sort orders by: titles by their case-insensitive key, then as written. */
const SORT_COLUMNS: Record<NoteSort, string[]> = {
  updated_at: ['updated_at'],
  created_at: ['created_at'],
  title: ['title_key', 'title'],
}

function toNote(row: NoteRow): Note {
  return {
    id: row.id,
    title: row.title,
    body: row.body,
    pinned: row.pinned,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  }
}

/**
 * The list's excerpt of a body: whitespace runs as one space, trimmed; at most EXCERPT_LENGTH characters (code
 * points), a longer one cut to EXCERPT_LENGTH − 1 and ended with "…". One pass over the body that stops at the
 * (EXCERPT_LENGTH + 1)th character of the flattened text, so a body of up to 20,000 characters costs what its start
 * does (20 of them on every list page); the runs between whitespace are copied as slices, not character by character.
 */
export function excerptOf(body: string | null): string | null {
  if (body === null) return null
  let flat = ''
  /** code points of the flattened text so far, the current run's included */
  let count = 0
  /** where the current run of non-whitespace started, -1 between runs */
  let runStart = -1
  /** a space is owed before the next run (some text came before this whitespace) */
  let owed = false
  const n = body.length
  let i = 0
  while (i < n) {
    const unit = body.charCodeAt(i)
    if (isWhitespace(unit)) {
      if (runStart >= 0) {
        flat += body.slice(runStart, i)
        runStart = -1
        owed = true
      }
      i++
      continue
    }
    if (runStart < 0) {
      if (owed) {
        flat += ' '
        owed = false
        if (++count > EXCERPT_LENGTH) return cutExcerpt(flat)
      }
      runStart = i
    }
    i += isSurrogatePair(unit, i + 1 < n ? body.charCodeAt(i + 1) : 0) ? 2 : 1
    if (++count > EXCERPT_LENGTH) return cutExcerpt(flat + body.slice(runStart, i))
  }
  if (runStart >= 0) flat += body.slice(runStart)
  return flat === '' ? null : flat
}

/** What `\s` and `trim()` take for whitespace (ECMAScript's WhiteSpace and LineTerminator). */
function isWhitespace(unit: number): boolean {
  if (unit <= 0x20) return unit === 0x20 || (unit >= 0x09 && unit <= 0x0d)
  if (unit < 0xa0) return false
  return (
    unit === 0xa0 ||
    unit === 0x1680 ||
    (unit >= 0x2000 && unit <= 0x200a) ||
    unit === 0x2028 ||
    unit === 0x2029 ||
    unit === 0x202f ||
    unit === 0x205f ||
    unit === 0x3000 ||
    unit === 0xfeff
  )
}

/** A flattened text of EXCERPT_LENGTH + 1 characters, cut to EXCERPT_LENGTH − 1 (its last two off), trimmed, and "…". */
function cutExcerpt(flat: string): string {
  const shorter = dropLastCodePoint(dropLastCodePoint(flat))
  return `${shorter.endsWith(' ') ? shorter.slice(0, -1) : shorter}…`
}

/** The text without its last code point (a surrogate pair whole, a lone surrogate alone). */
function dropLastCodePoint(text: string): string {
  const before = text.length > 1 ? text.charCodeAt(text.length - 2) : 0
  return text.slice(0, text.length - (isSurrogatePair(before, text.charCodeAt(text.length - 1)) ? 2 : 1))
}

/** Two UTF-16 units that make one code point (a high surrogate, then a low one). */
function isSurrogatePair(high: number, low: number): boolean {
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff
}

function toListItem(row: NoteListRow): NoteListItem {
  return {
    id: row.id,
    title: row.title,
    pinned: row.pinned,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    excerpt: excerptOf(row.excerpt_source),
  }
}

const NOT_FOUND_MESSAGE = 'This note does not exist, or it is not yours.'
const CHANGED_ELSEWHERE_MESSAGE =
  'This note was changed in another tab or device after the version you edited. Your changes were not saved.'

/**
 * A Data API error as a tRPC error with a message a person can act on. Status 0 is a network failure (the
 * backend is down or unreachable); the SQLSTATEs are those our CHECK constraints, keys and policies raise.
 */
export function notesError(error: PostgrestError & { status?: number }, status?: number): TRPCError {
  const code = error.code ?? ''
  const message = error.message ?? ''
  if (status === 0 || (code === '' && /fetch|network|ECONNREFUSED/i.test(message)))
    return new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: "Can't reach the server. Check your connection and try again." })
  if (code === 'PGRST116') return new TRPCError({ code: 'NOT_FOUND', message: NOT_FOUND_MESSAGE })
  if (code === '23514') {
    if (message.includes('notes_title_length')) return new TRPCError({ code: 'BAD_REQUEST', message: 'The title must be 1 to 200 characters.' })
    if (message.includes('notes_body_length')) return new TRPCError({ code: 'BAD_REQUEST', message: 'The note must be at most 20,000 characters.' })
    return new TRPCError({ code: 'BAD_REQUEST', message: 'The note breaks a rule of the database.' })
  }
  if (code === '23502') return new TRPCError({ code: 'BAD_REQUEST', message: 'A required field is missing.' })
  // SQLSTATE class 22, "data exception": a value PostgreSQL cannot take (bad text, number out of range…).
  if (code.startsWith('22')) return new TRPCError({ code: 'BAD_REQUEST', message: 'A value has the wrong form.' })
  if (code === '23505') return new TRPCError({ code: 'CONFLICT', message: 'This note exists already.' })
  // The notes' only foreign key is user_id → auth.users: the caller's user was deleted while their access token is
  // still trusted (ADR 031); no retry can help.
  if (code === '23503') return new TRPCError({ code: 'UNAUTHORIZED', message: 'Your session ended. Sign in again.' })
  // The notes' only policy that refuses with an error (the others filter rows) is the AAL2 one: a write of a user
  // with a second factor whose session is at aal1.
  if (code === '42501') return secondFactorRequiredError('You may not change this note. Finish two-factor sign-in if asked.')
  if (code === 'PGRST301' || code === 'PGRST303') return new TRPCError({ code: 'UNAUTHORIZED', message: 'Your session ended. Sign in again.' })
  return new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'The notes could not be loaded or saved. Try again.' })
}

type DataResult<T> = { data: T | null; error: PostgrestError | null; status: number }

/** The data of a Data API call, or the matching tRPC error; null data (no row) → NOT_FOUND. */
function rowOrThrow<T>(result: DataResult<T>): T {
  if (result.error) throw notesError(result.error, result.status)
  if (result.data === null) throw new TRPCError({ code: 'NOT_FOUND', message: NOT_FOUND_MESSAGE })
  return result.data
}

/** The list query the router runs (exported for the benchmark, which times it beside the tRPC call). */
export function notesListQuery(db: AppDataClient, input: z.output<typeof listNotesInputSchema>) {
  const dir = input.dir ?? defaultDirFor(input.sort)
  const from = (input.page - 1) * input.pageSize
  let query = db.from('notes').select(LIST_COLUMNS, { count: 'exact' })
  if (input.q) query = query.ilike('title', titleSearchPattern(input.q))
  query = query.order('pinned', { ascending: false })
  for (const column of SORT_COLUMNS[input.sort]) query = query.order(column, { ascending: dir === 'asc' })
  return query.order('id', { ascending: true }).range(from, from + input.pageSize - 1)
}

export const notesRouter = createTRPCRouter({
  /** One page of the caller's notes: pinned first, then by the chosen column; `total` counts every match. */
  list: protectedProcedure.input(listNotesInputSchema).query(async ({ ctx, input }) => {
    const result = await notesListQuery(ctx.db, input)
    // Past the last page PostgREST answers 416 (PGRST103): report the total so the client can go back.
    if (result.error?.code === 'PGRST103') {
      let countQuery = ctx.db.from('notes').select('id', { count: 'exact', head: true })
      if (input.q) countQuery = countQuery.ilike('title', titleSearchPattern(input.q))
      const counted = await countQuery
      if (counted.error) throw notesError(counted.error, counted.status)
      return { items: [], total: counted.count ?? 0, page: input.page, pageSize: input.pageSize }
    }
    if (result.error) throw notesError(result.error, result.status)
    const rows: NoteListRow[] = result.data ?? []
    return { items: rows.map(toListItem), total: result.count ?? rows.length, page: input.page, pageSize: input.pageSize }
  }),

  get: protectedProcedure.input(z.object({ id: noteIdSchema })).query(async ({ ctx, input }) => {
    const result = await ctx.db.from('notes').select(NOTE_COLUMNS).eq('id', input.id).maybeSingle()
    return toNote(rowOrThrow(result))
  }),

  create: protectedProcedure.input(noteInputSchema).mutation(async ({ ctx, input }) => {
    const result = await ctx.db.from('notes').insert(input).select(NOTE_COLUMNS).single()
    return toNote(rowOrThrow(result))
  }),

  /**
   * Saves a note's title and body. With `baseUpdatedAt` (the version the edits are based on) the row is updated only
   * if it is still that version, in the UPDATE's own filter (atomic: two saves of one version cannot both land); a
   * note changed meanwhile is a CONFLICT, one that is gone (or not the caller's) stays NOT_FOUND (ADR 066).
   */
  update: protectedProcedure.input(noteUpdateSchema).mutation(async ({ ctx, input }) => {
    const { id, baseUpdatedAt, ...changes } = input
    let query = ctx.db.from('notes').update(changes).eq('id', id)
    // The app knows times to the millisecond, PostgreSQL stores microseconds: the stored version is the one whose
    // time falls in the base's millisecond.
    if (baseUpdatedAt)
      query = query
        .gte('updated_at', baseUpdatedAt.toISOString())
        .lt('updated_at', new Date(baseUpdatedAt.getTime() + 1).toISOString())
    const result = await query.select(NOTE_COLUMNS).maybeSingle()
    if (result.error || result.data !== null || !baseUpdatedAt) return toNote(rowOrThrow(result))
    // Nothing updated: changed since that version, or gone. Which one, only to say so (the update already refused).
    const found = await ctx.db.from('notes').select('id').eq('id', id).maybeSingle()
    if (found.error) throw notesError(found.error, found.status)
    if (found.data === null) throw new TRPCError({ code: 'NOT_FOUND', message: NOT_FOUND_MESSAGE })
    throw new TRPCError({ code: 'CONFLICT', message: CHANGED_ELSEWHERE_MESSAGE })
  }),

  setPinned: protectedProcedure
    .input(z.object({ id: noteIdSchema, pinned: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      const result = await ctx.db
        .from('notes')
        .update({ pinned: input.pinned })
        .eq('id', input.id)
        .select(NOTE_COLUMNS)
        .maybeSingle()
      return toNote(rowOrThrow(result))
    }),

  /**
   * Deletes a note and returns it whole, so the client can offer Undo (`restore`), with the number of attached files
   * that went with it. The files go first and for good (the storage policies reach them only while their note
   * exists); Undo brings back the note without them (ADR 037).
   */
  delete: protectedProcedure.input(z.object({ id: noteIdSchema })).mutation(async ({ ctx, input }) => {
    const attachmentsRemoved = await removeAllAttachments(await storageOf(ctx), ctx.user.id, input.id)
    const result = await ctx.db.from('notes').delete().eq('id', input.id).select(NOTE_COLUMNS).maybeSingle()
    return { ...toNote(rowOrThrow(result)), attachmentsRemoved }
  }),

  /** Puts a deleted note back as it was (same id, times and pin). CONFLICT when it exists (restored already). */
  restore: protectedProcedure
    .input(
      z.object({
        id: noteIdSchema,
        title: noteTitleSchema,
        body: noteBodySchema,
        pinned: z.boolean(),
        createdAt: z.date(),
        updatedAt: z.date(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const result = await ctx.db
        .from('notes')
        .insert({
          id: input.id,
          title: input.title,
          body: input.body,
          pinned: input.pinned,
          created_at: input.createdAt.toISOString(),
          updated_at: input.updatedAt.toISOString(),
        })
        .select(NOTE_COLUMNS)
        .single()
      return toNote(rowOrThrow(result))
    }),
})
