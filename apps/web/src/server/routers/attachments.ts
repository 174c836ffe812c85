import { TRPCError } from '@trpc/server'
import { z } from 'zod'

import {
  ATTACHMENT_MAX_BYTES,
  ATTACHMENTS_PER_BATCH,
  formatBytes,
  storageSafeName,
  uniqueName,
} from '../../features/attachments/rules'
import { noteIdSchema } from '../../features/notes/schema'
import { storageAs, storageError, type UserStorage } from '../storage'
import { createTRPCRouter, protectedProcedure } from '../trpc'

/** The private bucket of note attachments: keys `<user id>/<note id>/<file>` (ADR 037). */
export const ATTACHMENTS_BUCKET = 'attachments'
/** Seconds a download link lives: long enough to start the download, too short to pass around. */
export const DOWNLOAD_URL_SECONDS = 60

export interface Attachment {
  name: string
  size: number
  type: string
  createdAt: Date
}

const NOTE_GONE = 'This note does not exist, or it is not yours.'
const LIST_LIMIT = 1000
/** The most files `newest` lists in one answer. */
const NEWEST_MAX = 100_000
/** Uploads a page may say it has on their way when it asks for more URLs (ten batches). */
const UPLOADS_IN_PROGRESS_MAX = 10 * ATTACHMENTS_PER_BATCH

const folderOf = (userId: string, noteId: string) => `${userId}/${noteId}`

/** Files the storage server lists at a time (Supabase Storage's `list`: `limit`, `offset`, `sortBy`). */
async function listSlice(
  storage: UserStorage,
  userId: string,
  noteId: string,
  options: { limit: number; offset: number; order: 'asc' | 'desc' },
): Promise<{ files: Attachment[]; read: number }> {
  const { data, error } = await storage.from(ATTACHMENTS_BUCKET).list(folderOf(userId, noteId), {
    limit: options.limit,
    offset: options.offset,
    sortBy: { column: 'created_at', order: options.order },
  })
  if (error) throw storageError(error, NOTE_GONE)
  const files: Attachment[] = []
  for (const item of data) {
    if (item.id === null) continue // a "folder": nothing the app puts there
    const meta = (item.metadata ?? {}) as { size?: number; mimetype?: string }
    files.push({
      name: item.name,
      size: typeof meta.size === 'number' ? meta.size : 0,
      type: typeof meta.mimetype === 'string' ? meta.mimetype : 'application/octet-stream',
      createdAt: new Date(item.created_at ?? 0),
    })
  }
  return { files, read: data.length }
}

/** Every file of a note the caller may see (RLS), oldest first. */
export async function listAttachments(storage: UserStorage, userId: string, noteId: string): Promise<Attachment[]> {
  const files: Attachment[] = []
  for (let offset = 0; ; offset += LIST_LIMIT) {
    const slice = await listSlice(storage, userId, noteId, { limit: LIST_LIMIT, offset, order: 'asc' })
    files.push(...slice.files)
    if (slice.read < LIST_LIMIT) return files
  }
}

/**
 * The newest `limit` files of a note (newest first), and whether it has more (ADR 157): storage is asked for
 * `limit + 1` entries, no more — the first view of a note with thousands of files does not wait for all of them.
 */
export async function newestAttachments(
  storage: UserStorage,
  userId: string,
  noteId: string,
  limit: number,
): Promise<{ files: Attachment[]; more: boolean }> {
  const files: Attachment[] = []
  for (let offset = 0; offset <= limit; offset += LIST_LIMIT) {
    const want = Math.min(LIST_LIMIT, limit + 1 - offset)
    const slice = await listSlice(storage, userId, noteId, { limit: want, offset, order: 'desc' })
    files.push(...slice.files)
    if (slice.read < want) break
  }
  return { files: files.slice(0, limit), more: files.length > limit }
}

/**
 * The names of the note's files that start with `start` (storage's `search`, a prefix it matches without regard to
 * case: more names than asked for, never fewer), every page of them.
 */
async function namesStartingWith(storage: UserStorage, userId: string, noteId: string, start: string): Promise<Set<string>> {
  const names = new Set<string>()
  for (let offset = 0; ; offset += LIST_LIMIT) {
    const { data, error } = await storage.from(ATTACHMENTS_BUCKET).list(folderOf(userId, noteId), {
      limit: LIST_LIMIT,
      offset,
      search: start,
      sortBy: { column: 'name', order: 'asc' },
    })
    if (error) throw storageError(error, NOTE_GONE)
    for (const item of data) if (item.id !== null) names.add(item.name)
    if (data.length < LIST_LIMIT) return names
  }
}

/** What every name uniqueName may give `name` starts with: its part before the extension ("scan (2).pdf" ← "scan"). */
function stemOf(name: string): string {
  const dot = name.lastIndexOf('.')
  return dot > 0 ? name.slice(0, dot) : name
}

function commonStart(names: readonly string[]): string {
  let start = names[0] ?? ''
  for (const name of names) while (!name.startsWith(start)) start = start.slice(0, -1)
  return start
}

/** Keys one storage removal takes at most: Supabase Storage refuses more (400, "between 1 and 1000 items"). */
const REMOVE_LIMIT = 1000

/**
 * Removes every file of a note (before the note itself goes: the policies allow it only while the note exists),
 * REMOVE_LIMIT keys per request. Returns how many were removed.
 */
export async function removeAllAttachments(storage: UserStorage, userId: string, noteId: string): Promise<number> {
  let removed = 0
  for (;;) {
    const files = await listAttachments(storage, userId, noteId)
    if (files.length === 0) return removed
    let removedNow = 0
    for (let start = 0; start < files.length; start += REMOVE_LIMIT) {
      const keys = files.slice(start, start + REMOVE_LIMIT).map((f) => `${folderOf(userId, noteId)}/${f.name}`)
      const { data, error } = await storage.from(ATTACHMENTS_BUCKET).remove(keys)
      if (error) throw storageError(error, NOTE_GONE)
      removedNow += data.length
    }
    if (removedNow === 0) return removed // listed but not removable: nothing more this caller can do
    removed += removedNow
  }
}

const fileNameSchema = z.string().trim().min(1, 'A file needs a name.').max(1000, 'The file name is too long.')
/**
 * A file of a note, by its name in storage (one key segment). Stored names are storage-safe (storageSafeName): no
 * `/`, `%` or NUL. Those three are refused here rather than sent on: storage-js puts the name into the URL as it is,
 * so the storage server reads a `%` as percent-encoding (`%2F` a slash, `%zz` an error) and a NUL as a key its
 * database cannot hold — a 500 instead of "no such file".
 */
const storedNameSchema = fileNameSchema.refine((name) => !name.includes('/') && !name.includes('%') && !name.includes('\u0000'), 'Not a file name.')

/** The caller's storage client, made from the token of the session protectedProcedure verified. */
export async function storageOf(ctx: { getSession: () => Promise<{ session: { access_token: string } } | null>; db: Parameters<typeof storageAs>[0] }) {
  const verified = await ctx.getSession()
  if (!verified) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Sign in to do this.' })
  return storageAs(ctx.db, verified.session.access_token)
}

export const attachmentsRouter = createTRPCRouter({
  /** The note's files: name, size, type, when attached (all of them, oldest first). */
  list: protectedProcedure.input(z.object({ noteId: noteIdSchema })).query(async ({ ctx, input }) => {
    return listAttachments(await storageOf(ctx), ctx.user.id, input.noteId)
  }),

  /** The note's newest `limit` files, newest first, and whether there are more (the panel's list, ADR 157). */
  newest: protectedProcedure
    .input(z.object({ noteId: noteIdSchema, limit: z.number().int().min(1).max(NEWEST_MAX) }))
    .query(async ({ ctx, input }) => {
      return newestAttachments(await storageOf(ctx), ctx.user.id, input.noteId, input.limit)
    }),

  /**
   * How many files the note has (the heading's "of 3,000", the note's delete dialog). Storage's list gives no
   * total, so this reads every name: the panel asks for it only when the note has more files than it shows, and
   * after its first rows are there (ADR 157).
   */
  count: protectedProcedure.input(z.object({ noteId: noteIdSchema })).query(async ({ ctx, input }) => {
    return { count: (await listAttachments(await storageOf(ctx), ctx.user.id, input.noteId)).length }
  }),

  /**
   * One signed upload URL per file (RLS checks the INSERT now, as the caller). The browser PUTs each file to its
   * URL itself (progress, cancel): the bytes never pass through this server. Names are made storage-safe and
   * unique among the note's files ("a.pdf", "a (2).pdf").
   */
  createUploadUrls: protectedProcedure
    .input(
      z.object({
        noteId: noteIdSchema,
        files: z
          .array(
            z.object({
              name: fileNameSchema,
              size: z
                .number()
                .int()
                .min(0)
                .max(ATTACHMENT_MAX_BYTES, `Files can be at most ${formatBytes(ATTACHMENT_MAX_BYTES)}.`),
            }),
          )
          .min(1, 'Choose at least one file.')
          .max(ATTACHMENTS_PER_BATCH, `Attach at most ${ATTACHMENTS_PER_BATCH} files at once.`),
        /**
         * Names of the page's uploads still on their way (URLs made, files not stored yet): taken too, or a second
         * file of the same name attached meanwhile would get the same key, and one of the two would be refused.
         */
        inProgress: z.array(storedNameSchema).max(UPLOADS_IN_PROGRESS_MAX, 'Too many uploads at once. Wait for some to finish.').optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const storage = await storageOf(ctx)
      // Only the stored names that could clash are read: those starting as the new files' names do (the start
      // they share), not every file of the note (thousands on a heavy note).
      const wanted = input.files.map((file) => storageSafeName(file.name))
      const taken = await namesStartingWith(storage, ctx.user.id, input.noteId, commonStart(wanted.map(stemOf)))
      for (const name of input.inProgress ?? []) taken.add(name)
      const uploads: { name: string; url: string }[] = []
      for (const safe of wanted) {
        const name = uniqueName(safe, taken)
        taken.add(name)
        const { data, error } = await storage.from(ATTACHMENTS_BUCKET).createSignedUploadUrl(`${folderOf(ctx.user.id, input.noteId)}/${name}`)
        if (error) throw storageError(error, NOTE_GONE)
        uploads.push({ name, url: data.signedUrl })
      }
      return uploads
    }),

  /**
   * A download link that lives DOWNLOAD_URL_SECONDS and makes the browser save the file under its name.
   * `download: true` ("Content-Disposition: attachment;" without a file name): the browser names the file after
   * the URL's last path segment, which is the stored name (ADR 068). Not `download: <name>`: storage-js puts the
   * name through URLSearchParams and then the whole URL through encodeURI, so it arrives encoded twice and
   * "dup (2).txt" would be saved as "dup %282%29.txt" — an upstream storage-js behaviour that hosted Supabase
   * Storage answers the same way.
   */
  downloadUrl: protectedProcedure
    .input(z.object({ noteId: noteIdSchema, name: storedNameSchema }))
    .mutation(async ({ ctx, input }) => {
      const storage = await storageOf(ctx)
      const { data, error } = await storage
        .from(ATTACHMENTS_BUCKET)
        .createSignedUrl(`${folderOf(ctx.user.id, input.noteId)}/${input.name}`, DOWNLOAD_URL_SECONDS, { download: true })
      if (error) throw storageError(error, NOTE_GONE)
      return { url: data.signedUrl }
    }),

  /**
   * Deletes one file. NOT_FOUND when it is not there (deleted already) or not the caller's — unless `ifStored`:
   * the clean-up after a cancelled upload, where a file that never arrived is the usual case and no error, answers
   * `removed: false` instead.
   */
  delete: protectedProcedure
    .input(z.object({ noteId: noteIdSchema, name: storedNameSchema, ifStored: z.boolean().optional() }))
    .mutation(async ({ ctx, input }) => {
      const storage = await storageOf(ctx)
      const { data, error } = await storage.from(ATTACHMENTS_BUCKET).remove([`${folderOf(ctx.user.id, input.noteId)}/${input.name}`])
      if (error) throw storageError(error, NOTE_GONE)
      if (data.length === 0 && !input.ifStored) throw new TRPCError({ code: 'NOT_FOUND', message: 'This file does not exist any more.' })
      return { name: input.name, removed: data.length > 0 }
    }),
})
