/**
 * tRPC server setup, in three parts (after create-t3-app):
 *  1. CONTEXT — what every procedure receives.
 *  2. INITIALISATION — the tRPC instance: superjson transformer and the error formatter.
 *  3. PROCEDURES — the building blocks routers use.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'

import type { User } from '@supabase/supabase-js'
import { initTRPC, TRPCError } from '@trpc/server'
import { z, ZodError } from 'zod'

import { addressBudgetKey, clientAddress } from '../lib/client-address'
import { fastSuperjson } from './fast-superjson'
import type { AppDataClient, AppSupabaseClient } from '../lib/supabase/client-type'
import {
  AuthServerUnavailable,
  createDataClient,
  createServerSupabase,
  knownRequestSession,
  verifySession,
  type RequestResponse,
  type VerifiedSession,
  type VerifyOptions,
} from '../lib/supabase/server'
import { API_RATE_LIMITS, crossSiteReason, nodeHeaderReader, RateLimiter, readRateLimitRule, type HeaderReader } from './request-guards'
import { SecondFactorRequired, secondFactorRequiredError } from './second-factor'

/* ------------------------------------------------------------------------------------------------
 * 1. CONTEXT
 * ------------------------------------------------------------------------------------------------ */

export interface Context {
  /** The incoming request's headers. Empty for server-side callers. */
  headers: HeaderReader
  /**
   * A Supabase client acting as the caller (the request's session cookies, anon key — never the service key), made
   * on first use: most requests never need one (see getSession). Null for server-side callers without a request.
   */
  getSupabase: () => AppSupabaseClient | null
  /**
   * The caller's verified session (once per request, memoised): a token this process verified already needs no
   * client at all (lib/supabase/server.ts `knownRequestSession`); otherwise `verifySession` — by the access
   * token's signature, no round trip for an ES256 token — with the request's client. Null when signed out.
   */
  getSession: () => Promise<VerifiedSession | null>
  /**
   * Whether getSession() answers without verifying anything: a session given, verified before by this process or
   * already asked for in this request, or no cookie to verify. Otherwise it costs a signature check, a key set or a
   * round trip to the auth server, which a caller past its address budget does not get (protectedProcedure).
   */
  sessionAtHand: () => boolean
  /** The client for table queries as the verified caller (protectedProcedure hands it to procedures as `db`). */
  dataClientFor: (verified: VerifiedSession) => AppDataClient
  /** The caller, from getSession(); null when signed out. */
  getUser: () => Promise<User | null>

  /** The browser's address (src/lib/client-address.ts), found on first use; null for server-side callers. */
  clientAddress: () => string | null
  /**
   * Per-caller budgets of this request (src/server/request-guards.ts), or null where no budget applies
   * (server-side callers and tests through `createCaller`).
   */
  limits: ApiLimits | null
}

export interface ApiLimits {
  query: RateLimiter | null
  mutation: RateLimiter | null
}

/** The API's budgets, shared by every request this server process handles (env overrides: request-guards.ts). */
function configuredLimits(): ApiLimits {
  const query = readRateLimitRule('FOYER_API_QUERY_LIMIT', process.env.FOYER_API_QUERY_LIMIT, API_RATE_LIMITS.query)
  const mutation = readRateLimitRule('FOYER_API_MUTATION_LIMIT', process.env.FOYER_API_MUTATION_LIMIT, API_RATE_LIMITS.mutation)
  return { query: query && new RateLimiter(query), mutation: mutation && new RateLimiter(mutation) }
}
const apiLimits: ApiLimits = configuredLimits()

/** The seconds a refused caller should wait, carried by a TOO_MANY_REQUESTS error to the `Retry-After` header. */
export class RetryAfter extends Error {
  readonly seconds: number
  constructor(seconds: number) {
    super(`retry after ${seconds} s`)
    this.name = 'RetryAfter'
    this.seconds = seconds
  }
}

/**
 * The caller's verified session, or null. When the auth server cannot be reached the call fails with
 * SERVICE_UNAVAILABLE instead: "sign in" would be the wrong thing to tell a signed-in user.
 */
async function verifiedSessionOf(supabase: AppSupabaseClient, options: VerifyOptions = {}): Promise<VerifiedSession | null> {
  try {
    return await verifySession(supabase, options)
  } catch (error) {
    if (error instanceof AuthServerUnavailable)
      throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: "Can't reach the server. Check your connection and try again." })
    throw error
  }
}

/** The context's `clientAddress`: a known address (or none) as is, a way to find it run once, on first use. */
function addressOf(given: string | null | undefined | (() => string | null)): () => string | null {
  if (typeof given !== 'function') return () => given ?? null
  let found: string | null | undefined
  return () => (found === undefined ? (found = given()) : found)
}

/**
 * A context from its parts: `supabase`, a client acting as the caller (server-side callers, tests), used for the
 * session and the queries; or `request`, the HTTP request and response it came with, whose client is made only when
 * the session cannot be taken from a token verified before, and whose queries go through a data client carrying
 * the verified access token.
 */
export function createInnerContext(
  opts: {
    headers?: HeaderReader
    supabase?: AppSupabaseClient | null
    request?: RequestResponse
    /**
     * A session the caller verified already (a page's `withSession`): the context's session, its queries through a
     * data client carrying its access token; no cookie is read and no client is built.
     */
    verified?: VerifiedSession | null
    /** The browser's address, or how to find it (read only when a budget needs it). */
    clientAddress?: string | null | (() => string | null)
    limits?: ApiLimits | null
  } = {},
): Context {
  const { request } = opts
  let supabase: AppSupabaseClient | null | undefined = opts.supabase ?? undefined
  const getSupabase = () => (supabase ??= request ? createServerSupabase(request) : null)
  let session: Promise<VerifiedSession | null> | undefined
  const verify = async () => {
    if (opts.verified !== undefined) return opts.verified
    const known = opts.supabase ? undefined : knownRequestSession(request?.req.headers.cookie)
    if (known) return known
    const client = getSupabase()
    return client ? verifiedSessionOf(client, { cookieHeader: request?.req.headers.cookie }) : null
  }
  const getSession = () => (session ??= verify())
  const sessionAtHand = () => {
    if (opts.verified !== undefined || session !== undefined || opts.supabase || !request) return true
    const cookie = request.req.headers.cookie
    return !cookie || knownRequestSession(cookie) !== undefined
  }
  return {
    headers: opts.headers ?? new Headers(),
    getSupabase,
    getSession,
    sessionAtHand,
    dataClientFor: (verified) => opts.supabase ?? createDataClient(verified.session.access_token),
    getUser: async () => (await getSession())?.user ?? null,
    clientAddress: addressOf(opts.clientAddress),
    limits: opts.limits ?? null,
  }
}

/** Context for the API route `/api/trpc` (server/api-handler.ts), from its Node request and response. */
export function createContext({ req, res }: { req: IncomingMessage; res: ServerResponse }): Context {
  return createInnerContext({
    headers: nodeHeaderReader(req.headers),
    request: { req, res },
    clientAddress: () => clientAddress(req),
    limits: apiLimits,
  })
}

/* ------------------------------------------------------------------------------------------------
 * 2. INITIALISATION
 * ------------------------------------------------------------------------------------------------ */

/** Flattened zod issues, sent in `error.data.zodError` for invalid input (BAD_REQUEST). */
export interface ZodErrorData {
  formErrors: string[]
  fieldErrors: Record<string, string[] | undefined>
}

/** The different messages of zod's issues, in order, as one text: "Give the note a title. Keep the note to …". */
const readableIssues = (error: ZodError): string => [...new Set(error.issues.map((issue) => issue.message))].join(' ')

const t = initTRPC.context<Context>().create({
  // superjson's wire format; its serialize with a fast path for plain answers (fast-superjson.ts, ADR 040)
  transformer: fastSuperjson,
  errorFormatter({ shape, error }) {
    const zodError: ZodErrorData | null =
      error.code === 'BAD_REQUEST' && error.cause instanceof ZodError ? z.flattenError(error.cause) : null
    return {
      ...shape,
      // tRPC's message for invalid input is the JSON of zod's issues, which a page showing the message would show
      // as is: the issues' own messages instead, in words (the fields are in `data.zodError`).
      ...(error.cause instanceof ZodError && zodError ? { message: readableIssues(error.cause) } : {}),
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

/**
 * Every procedure: a mutation that a browser says comes from another site is refused (FORBIDDEN) before it runs,
 * whatever cookies it carries (defence in depth beside SameSite=Lax; see request-guards.ts).
 */
const baseProcedure = t.procedure.use(({ ctx, type, next }) => {
  if (type === 'mutation') {
    const reason = crossSiteReason(ctx.headers)
    if (reason) throw new TRPCError({ code: 'FORBIDDEN', message: `Cross-site request refused (${reason}).` })
  }
  return next()
})

/** Takes one call of `type` from the caller's budget, or refuses with TOO_MANY_REQUESTS and when to retry. */
function spendBudget(limits: ApiLimits | null, type: string, key: string | null): void {
  if (!limits || key === null) return
  const limiter = type === 'mutation' ? limits.mutation : limits.query
  const wait = limiter ? limiter.take(key) : 0
  if (wait > 0) throw tooManyRequests(wait)
}

const tooManyRequests = (wait: number) =>
  new TRPCError({
    code: 'TOO_MANY_REQUESTS',
    message: `Too many requests. Try again in ${wait} second${wait === 1 ? '' : 's'}.`,
    cause: new RetryAfter(wait),
  })

/** Refuses with TOO_MANY_REQUESTS, taking nothing, when the key's budget of `type` calls is spent. */
function refuseSpentAddress(limits: ApiLimits | null, type: string, key: string | null): void {
  if (!limits || key === null) return
  const limiter = type === 'mutation' ? limits.mutation : limits.query
  const wait = limiter ? limiter.wait(key) : 0
  if (wait > 0) throw tooManyRequests(wait)
}

/**
 * The budget key of a signed-out caller: its address (an IPv6 one by its /64, one client's share: ADR 177), or null
 * where no address is known (server-side callers).
 */
function addressKey(ctx: Context): string | null {
  const address = ctx.clientAddress()
  return address === null ? null : `address:${addressBudgetKey(address)}`
}

/** A procedure anyone may call; signed-out callers share a budget per client address. */
export const publicProcedure = baseProcedure.use(({ ctx, type, next }) => {
  spendBudget(ctx.limits, type, addressKey(ctx))
  return next()
})

/**
 * A procedure for signed-in callers: UNAUTHORIZED without a verified session; FORBIDDEN while the session is at
 * aal1 and the user has a verified factor (AAL2 enforcement). The session is verified by the access token's
 * signature (no round trip for ES256 tokens), so a session signed out elsewhere keeps working here until its token
 * expires (docs/decisions/031-local-session-verification.md); a procedure that changes the account or its security
 * must ask the auth server instead (`verifySession(ctx.getSupabase(), { fresh: true })`). Its context carries `user`, the verified
 * `claims` and `db`, the client for table queries as that user (under RLS).
 */
export const protectedProcedure = baseProcedure.use(async ({ ctx, type, next }) => {
  // A session still to verify, from an address whose budget is spent (by refused sessions: a forged cookie costs a
  // round trip to the auth server or a key set fetch each time): refused before that work, as a signed-out call.
  if (!ctx.sessionAtHand()) refuseSpentAddress(ctx.limits, type, addressKey(ctx))
  const verified = await ctx.getSession()
  if (!verified) {
    spendBudget(ctx.limits, type, addressKey(ctx))
    throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Sign in to do this.' })
  }
  spendBudget(ctx.limits, type, `user:${verified.user.id}`)
  if (verified.needsSecondFactor) throw secondFactorRequiredError()
  return next({ ctx: { ...ctx, user: verified.user, claims: verified.claims, db: ctx.dataClientFor(verified) } })
})

/**
 * A protected procedure that also asks the auth server whether the session still stands (not signed out elsewhere,
 * the user not deleted) before it gives anything that outlives the call, such as an upload URL for the profile
 * picture: the one round trip that ADR 031's trust in a token's signature leaves to the calls where freshness matters.
 */
export const freshProcedure = protectedProcedure.use(async ({ ctx, next }) => {
  const supabase = ctx.getSupabase()
  const fresh = supabase ? await verifiedSessionOf(supabase, { fresh: true }) : null
  if (!fresh || fresh.user.id !== ctx.user.id) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Your session ended. Sign in again.' })
  return next()
})

