import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server'

import { attachmentsRouter } from './routers/attachments'
import { authRouter } from './routers/auth'
import { avatarRouter } from './routers/avatar'
import { notesRouter } from './routers/notes'
import { systemRouter } from './routers/system'
import { createCallerFactory, createTRPCRouter } from './trpc'

/** The app's API: one sub-router per feature (src/server/routers/<feature>.ts). */
export const appRouter = createTRPCRouter({
  attachments: attachmentsRouter,
  auth: authRouter,
  avatar: avatarRouter,
  notes: notesRouter,
  system: systemRouter,
})

export type AppRouter = typeof appRouter

/** Call procedures from server code (and tests) without HTTP: `createCaller(createInnerContext())`. */
export const createCaller = createCallerFactory(appRouter)

/** `RouterInputs['system']['clockSkew']` — the input type of a procedure. */
export type RouterInputs = inferRouterInputs<AppRouter>
/** `RouterOutputs['system']['health']` — the output type of a procedure. */
export type RouterOutputs = inferRouterOutputs<AppRouter>
