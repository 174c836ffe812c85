/**
 * The notes router's input schemas (zod), built from the plain rules in rules.ts. Server only: the browser
 * bundle checks forms with rules.ts and never loads zod.
 */
import { z } from 'zod'

import {
  bodyProblem,
  NOTE_SORTS,
  NOTES_PAGE_SIZE,
  NOTES_PAGE_SIZE_MAX,
  NOTES_QUERY_MAX,
  searchProblem,
  titleProblem,
} from './rules'

/** A zod check from one of rules.ts's `…Problem` functions: its message, or nothing. */
const ruleCheck = (problem: (value: string) => string | null) => (value: string, ctx: z.RefinementCtx) => {
  const message = problem(value)
  if (message) ctx.addIssue({ code: 'custom', message })
}

export const noteTitleSchema = z.string().trim().superRefine(ruleCheck(titleProblem))

/** An empty body is stored as null. */
export const noteBodySchema = z
  .string()
  .superRefine(ruleCheck(bodyProblem))
  .nullish()
  .transform((body) => (body && body.trim() !== '' ? body : null))

export const noteIdSchema = z.uuid('Not a note id.')

export const noteInputSchema = z.object({
  title: noteTitleSchema,
  body: noteBodySchema,
  pinned: z.boolean().default(false),
})
export type NoteInput = z.input<typeof noteInputSchema>

/**
 * The latest `baseUpdatedAt` a save may name: one millisecond before the end of year 9999, so that the update's
 * upper bound (base + 1 ms) is still a time ISO 8601 writes with a four-digit year. A later one (a Date goes up to year 275760) is no version a note can have, and at the very last
 * millisecond a Date holds the update's upper bound (base + 1 ms) is no date at all ("Invalid time value", a 500).
 */
const LATEST_VERSION = new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 998))

export const noteUpdateSchema = z.object({
  id: noteIdSchema,
  title: noteTitleSchema,
  body: noteBodySchema,
  /**
   * The note's `updatedAt` the edits are based on (the version the page last knew): the update is made only if the
   * stored note is still that version, else CONFLICT (docs/decisions/066-note-saves-never-overwrite-unseen-versions.md).
   * Left out, the save replaces whatever is stored.
   */
  baseUpdatedAt: z.date().max(LATEST_VERSION, 'Not a version of this note.').optional(),
})

export const listNotesInputSchema = z.object({
  sort: z.enum(NOTE_SORTS).default('updated_at'),
  dir: z.enum(['asc', 'desc']).optional(),
  page: z.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.number().int().min(1).max(NOTES_PAGE_SIZE_MAX).default(NOTES_PAGE_SIZE),
  q: z.string().trim().max(NOTES_QUERY_MAX).superRefine(ruleCheck(searchProblem)).optional(),
})
export type ListNotesInput = z.input<typeof listNotesInputSchema>
