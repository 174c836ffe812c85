import { TRPCError } from '@trpc/server'
import { randomBytes } from 'node:crypto'
import { z } from 'zod'

import { AVATAR_MAX_BYTES, AVATAR_TYPES, avatarExtension, formatBytes } from '../../features/attachments/rules'
import { storageError } from '../storage'
import { createTRPCRouter, freshProcedure, protectedProcedure } from '../trpc'
import { storageOf } from './attachments'

/** The public bucket of profile pictures: keys `<user id>/<time>-<random>.<ext>` (ADR 037). */
export const AVATARS_BUCKET = 'avatars'

const REFUSED = 'You may not change this picture. Sign in again.'

export const avatarRouter = createTRPCRouter({
  /**
   * A signed upload URL for a new picture under a new key (so a replaced picture never lingers in a cache: its
   * URL changes). The browser PUTs the file to it with progress, then saves the key in `user_metadata.avatar_path`
   * and removes the old picture. The auth server is asked first (freshProcedure): a user deleted or signed out
   * elsewhere gets no URL, so no picture is stored for an account that can no longer save it.
   */
  createUploadUrl: freshProcedure
    .input(
      z.object({
        type: z.enum(AVATAR_TYPES, 'A picture must be a PNG, JPEG, WebP or GIF image.'),
        size: z.number().int().min(1, 'A picture cannot be empty.').max(AVATAR_MAX_BYTES, `A picture can be at most ${formatBytes(AVATAR_MAX_BYTES)}.`),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const storage = await storageOf(ctx)
      const path = `${ctx.user.id}/${Date.now().toString(36)}-${randomBytes(4).toString('hex')}.${avatarExtension(input.type)}`
      const { data, error } = await storage.from(AVATARS_BUCKET).createSignedUploadUrl(path)
      if (error) throw storageError(error, REFUSED)
      return { path, url: data.signedUrl }
    }),

  /** Removes one of the caller's pictures (the old one after a replace, or the current one). */
  remove: protectedProcedure.input(z.object({ path: z.string().max(200) })).mutation(async ({ ctx, input }) => {
    const [owner, file, ...rest] = input.path.split('/')
    if (owner !== ctx.user.id || !file || rest.length > 0 || file.includes('\u0000')) throw new TRPCError({ code: 'BAD_REQUEST', message: 'Not one of your pictures.' })
    const storage = await storageOf(ctx)
    const { data, error } = await storage.from(AVATARS_BUCKET).remove([input.path])
    if (error) throw storageError(error, REFUSED)
    return { removed: data.length }
  }),
})
