import { createTRPCRouter, protectedProcedure } from '../trpc'

/** Who the caller is: the first protected procedure. */
export const authRouter = createTRPCRouter({
  me: protectedProcedure.query(({ ctx }) => {
    const metadata = ctx.user.user_metadata as Record<string, unknown> | undefined
    const displayName = typeof metadata?.display_name === 'string' ? metadata.display_name : null
    return { id: ctx.user.id, email: ctx.user.email ?? null, displayName }
  }),
})
