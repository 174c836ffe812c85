/**
 * tRPC server setup, in three parts (after create-t3-app):
 *  1. CONTEXT — what every procedure receives.
 *  2. INITIALISATION — the tRPC instance: superjson transformer and the error formatter.
 *  3. PROCEDURES — the building blocks routers use.
 */
import { isAuthRetryableFetchError, type SupabaseClient, type User } from '@supabase/supabase-js'
import { initTRPC, TRPCError } from '@trpc/server'
import type { CreateNextContextOptions } from '@trpc/server/adapters/next'
import superjson from 'superjson'
import { z, ZodError } from 'zod'

import { createServerSupabase, needsSecondFactorFor } from '../lib/supabase/server'
import { SecondFactorRequired, secondFactorRequiredError } from './second-factor'

/* ------------------------------------------------------------------------------------------------
 * 1. CONTEXT
 * ------------------------------------------------------------------------------------------------ */

export interface Context {
  /** The incoming request's headers. Empty for server-side callers. */
  headers: Headers
  /**
   * A Supabase client acting as the caller (the request's session cookies, anon key — never the service key),
   * so data calls run under RLS as that user. Null for server-side callers without a request.
   */
  supabase: SupabaseClient | null
  /** The caller, verified by the auth server (once per request, memoised); null when signed out. */
  getUser: () => Promise<User | null>
}

/**
 * The caller as the auth server verifies them, or null. When the auth server cannot be reached the call fails
 * with SERVICE_UNAVAILABLE instead: "sign in" would be the wrong thing to tell a signed-in user.
 */
async function verifiedUserOf(supabase: SupabaseClient): Promise<User | null> {
  const { data, error } = await supabase.auth.getUser()
  if (error && isAuthRetryableFetchError(error))
    throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: "Can't reach the server. Check your connection and try again." })
  return error || !data.user ? null : data.user
}

export function createInnerContext(opts: { headers?: Headers; supabase?: SupabaseClient | null } = {}): Context {
  const supabase = opts.supabase ?? null
  let user: Promise<User | null> | undefined
  return {
    headers: opts.headers ?? new Headers(),
    supabase,
    getUser: () => (user ??= supabase ? verifiedUserOf(supabase) : Promise.resolve(null)),
  }
}

/** Context for the Next.js API route `/api/trpc`. */
export function createContext({ req, res }: CreateNextContextOptions): Context {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value)
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v)
  }
  return createInnerContext({ headers, supabase: createServerSupabase({ req, res }) })
}

/* ------------------------------------------------------------------------------------------------
 * 2. INITIALISATION
 * ------------------------------------------------------------------------------------------------ */

/** Flattened zod issues, sent in `error.data.zodError` for invalid input (BAD_REQUEST). */
export interface ZodErrorData {
  formErrors: string[]
  fieldErrors: Record<string, string[] | undefined>
}

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    const zodError: ZodErrorData | null =
      error.code === 'BAD_REQUEST' && error.cause instanceof ZodError ? z.flattenError(error.cause) : null
    return {
      ...shape,
      data: {
        ...shape.data,
        zodError,
        /** True when finishing two-factor sign-in (/mfa) would let the call through. */
        secondFactorRequired: error.cause instanceof SecondFactorRequired,
      },
    }
  },
})

export const createCallerFactory = t.createCallerFactory
export const createTRPCRouter = t.router

/* ------------------------------------------------------------------------------------------------
 * 3. PROCEDURES
 * ------------------------------------------------------------------------------------------------ */

/** A procedure anyone may call. */
export const publicProcedure = t.procedure

/**
 * A procedure for signed-in callers: UNAUTHORIZED without a user the auth server vouches for; FORBIDDEN while the
 * session is at aal1 and the user has a verified factor (AAL2 enforcement). Its context
 * carries `user` and a non-null `supabase` acting as that user.
 */
export const protectedProcedure = t.procedure.use(async ({ ctx, next }) => {
  const user = await ctx.getUser()
  if (!user || !ctx.supabase) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Sign in to do this.' })
  if (await needsSecondFactorFor(ctx.supabase, user)) throw secondFactorRequiredError()
  return next({ ctx: { ...ctx, user, supabase: ctx.supabase } })
})
