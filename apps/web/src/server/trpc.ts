/**
 * tRPC server setup, in three parts (after create-t3-app):
 *  1. CONTEXT — what every procedure receives.
 *  2. INITIALISATION — the tRPC instance: superjson transformer and the error formatter.
 *  3. PROCEDURES — the building blocks routers use.
 */
import { initTRPC } from '@trpc/server'
import type { CreateNextContextOptions } from '@trpc/server/adapters/next'
import superjson from 'superjson'
import { z, ZodError } from 'zod'

/* ------------------------------------------------------------------------------------------------
 * 1. CONTEXT
 * ------------------------------------------------------------------------------------------------ */

export interface Context {
  /** The incoming request's headers (cookies arrive here once sessions do). Absent for server-side callers. */
  headers: Headers
}

export function createInnerContext(opts: { headers?: Headers } = {}): Context {
  return { headers: opts.headers ?? new Headers() }
}

/** Context for the Next.js API route `/api/trpc`. */
export function createContext({ req }: CreateNextContextOptions): Context {
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value)
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v)
  }
  return createInnerContext({ headers })
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
      },
    }
  },
})

export const createCallerFactory = t.createCallerFactory
export const createTRPCRouter = t.router

/* ------------------------------------------------------------------------------------------------
 * 3. PROCEDURES
 * ------------------------------------------------------------------------------------------------ */

/** A procedure anyone may call. Authenticated procedures arrive with the auth issue. */
export const publicProcedure = t.procedure
