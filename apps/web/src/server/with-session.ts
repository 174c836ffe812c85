import type { Session } from '@supabase/supabase-js'
import type { GetServerSideProps, GetServerSidePropsContext, GetServerSidePropsResult } from 'next'

import {
  AuthServerUnavailable,
  createServerSupabase,
  knownRequestSession,
  unverifiedRequestSession,
  verifySession,
  type VerifiedSession,
} from '../lib/supabase/server'
import type { AppSupabaseClient } from '../lib/supabase/client-type'
import { mfaPathFor, signInPathFor } from '../lib/safe-next'
import { guestBannerDismissed } from '../lib/guest'

export interface SessionPageProps {
  /** The verified session for the session provider; null when signed out. */
  initialSession: Session | null
  /** A guest who dismissed the guest banner (its cookie names them): the page renders without it, no flash. */
  guestBannerDismissed: boolean
  /** The backend could not be reached (503): _app shows ServerUnreachableScreen instead of the page. */
  serverUnreachable?: true
}

/** What a page's `load` may answer: more props, or Next's notFound / redirect. */
export type LoadResult<P> = { props: P } | { notFound: true } | { redirect: { destination: string; permanent: boolean } }

export interface WithSessionOptions<P = object> {
  /**
   * Loads the page's data after the session checks passed, with the request's Supabase client (acting as the
   * user, under RLS) and the verified session (null on a public page when signed out).
   */
  load?: (ctx: GetServerSidePropsContext, supabase: AppSupabaseClient, session: Session | null) => Promise<LoadResult<P>>
  /**
   * Like `load`, without a Supabase client: it gets the request's verified session (null when signed out) and queries
   * through server-side tRPC callers acting as it (`createInnerContext({ verified })`), so a known token still builds
   * no client (ADR 040). Runs after `load` when both are given.
   */
  loadVerified?: (ctx: GetServerSidePropsContext, verified: VerifiedSession | null) => Promise<LoadResult<P>>
  /** Signed-out visitors are redirected to `/sign-in?next=<this path>`. */
  protected?: boolean
  /** Signed-in visitors are redirected here (e.g. the sign-in page sends them on). */
  signedInRedirect?: (ctx: GetServerSidePropsContext) => string
  /**
   * The page is public but shows the user's own data when signed in (`/`: the welcome page signed out, the notes
   * signed in): like a protected page, it sends a session that still needs its second factor to
   * `/mfa?next=<this path>` first. Signed-out visitors stay.
   */
  secondFactorWhenSignedIn?: boolean
  /**
   * The page opens at aal1 even when the user has a verified factor (the `/mfa` challenge itself). Otherwise a
   * protected page sends such a session to `/mfa?next=<this path>`.
   */
  allowAal1?: boolean
  /** Sessions that need no second factor are redirected here (the `/mfa` page sends them on to `next`). */
  redirectUnlessMfaNeeded?: (ctx: GetServerSidePropsContext) => string
  /**
   * Verify the session with the auth server (`getUser()`) instead of the token's signature alone, so a session
   * signed out or deleted elsewhere is refused at once: the account and security settings, `/mfa`, `/reset-password`
   * (docs/decisions/031-local-session-verification.md names every such place).
   */
  fresh?: boolean
}

/**
 * The session of a page request, verified (lib/supabase/server.ts `verifySession`): the access token's signature
 * against the auth server's published keys, or the auth server itself for HS256 tokens and `fresh` pages; an
 * expired access token is refreshed through the cookie first (new cookies go to the response). Only then is the
 * cookie's session passed on, with a user from the verified claims in it. Responses are private and never stored:
 * they carry a session. An auth server out of reach counts as signed out here (a public page offers sign-in; a
 * protected one answers 503 instead, see withSession).
 */
export async function readVerifiedSession(ctx: Pick<GetServerSidePropsContext, 'req' | 'res'>): Promise<Session | null> {
  return (await readVerifiedSessionAndLevel(ctx)).session
}

/** The verified session and whether it still needs a second factor (aal1 with a verified factor). */
export async function readVerifiedSessionAndLevel(
  ctx: Pick<GetServerSidePropsContext, 'req' | 'res'>,
  supabase: AppSupabaseClient = createServerSupabase(ctx),
  options: { fresh?: boolean } = {},
): Promise<{ session: Session | null; needsMfa: boolean; verified: VerifiedSession | null; unreachable: boolean }> {
  let unreachable = false
  const verified = await verifySession(supabase, { ...options, cookieHeader: ctx.req.headers.cookie }).catch((error: unknown) => {
    unreachable = error instanceof AuthServerUnavailable
    return null
  })
  if (!verified) return { session: null, needsMfa: false, verified: null, unreachable }
  return { session: verified.session, needsMfa: verified.needsSecondFactor, verified, unreachable }
}

/** An error of a page's load that says the backend did not answer (the API's SERVICE_UNAVAILABLE, the auth server's). */
function isUnreachable(error: unknown): boolean {
  return error instanceof AuthServerUnavailable || (error as { code?: unknown } | null)?.code === 'SERVICE_UNAVAILABLE'
}

/**
 * The answer of a page whose server render could not reach the backend: 503 and `serverUnreachable` (the page says so,
 * with "Try again"), the session this process already verified for the cookie if any (the header stays as it was),
 * else the cookie's session unverified — one the server could not check or refresh (its token near or past expiry,
 * or never seen by this process) is most likely still good, and the header must not offer "Sign in" to its user.
 * Not a redirect to sign-in: the user may well be signed in, and the sign-in page would send them back (a loop).
 */
function unreachableAnswer(ctx: GetServerSidePropsContext): { props: SessionPageProps } {
  ctx.res.statusCode = 503
  ctx.res.setHeader('Retry-After', '5')
  const cookie = ctx.req.headers.cookie
  const session = knownRequestSession(cookie)?.session ?? unverifiedRequestSession(cookie)
  return { props: { initialSession: session, guestBannerDismissed: guestBannerDismissed(ctx.req.headers.cookie, session?.user), serverUnreachable: true } }
}

/**
 * `export const getServerSideProps = withSession({ protected: true })` — one line per page; passes
 * `initialSession` to the page (and so to the session provider in _app).
 */
export function withSession<P extends object = object>(
  options: WithSessionOptions<P> = {},
): GetServerSideProps<SessionPageProps & P> {
  return async (ctx): Promise<GetServerSidePropsResult<SessionPageProps & P>> => {
    ctx.res.setHeader('Cache-Control', 'private, no-cache, no-store, must-revalidate, max-age=0')
    // A token this process verified before needs no Supabase client (ADR 040); the fresh pages always ask the auth server.
    const known = options.fresh ? undefined : knownRequestSession(ctx.req.headers.cookie)
    let supabase: AppSupabaseClient | undefined
    const { session: initialSession, needsMfa, verified, unreachable } = known
      ? { session: known.session, needsMfa: known.needsSecondFactor, verified: known, unreachable: false }
      : await readVerifiedSessionAndLevel(ctx, (supabase = createServerSupabase(ctx)), { fresh: options.fresh === true })
    // A protected page whose session could not be checked (the auth server out of reach) says so, rather than send a
    // user who may be signed in to sign in (public pages go on as signed out).
    if (!initialSession && options.protected && unreachable) return unreachableAnswer(ctx) as GetServerSidePropsResult<SessionPageProps & P>
    if (!initialSession && options.protected) {
      return { redirect: { destination: signInPathFor(ctx.resolvedUrl), permanent: false } }
    }
    if (initialSession && needsMfa && (options.protected || options.secondFactorWhenSignedIn) && !options.allowAal1) {
      return { redirect: { destination: mfaPathFor(ctx.resolvedUrl), permanent: false } }
    }
    if (initialSession && !needsMfa && options.redirectUnlessMfaNeeded) {
      return { redirect: { destination: options.redirectUnlessMfaNeeded(ctx), permanent: false } }
    }
    if (initialSession && options.signedInRedirect) {
      return { redirect: { destination: options.signedInRedirect(ctx), permanent: false } }
    }
    const sessionProps: SessionPageProps = {
      initialSession,
      guestBannerDismissed: guestBannerDismissed(ctx.req.headers.cookie, initialSession?.user),
    }
    let props = {} as P
    try {
      if (options.load) {
        const loaded = await options.load(ctx, supabase ?? createServerSupabase(ctx), initialSession)
        if (!('props' in loaded)) return loaded
        props = { ...props, ...loaded.props }
      }
      if (options.loadVerified) {
        const loaded = await options.loadVerified(ctx, verified)
        if (!('props' in loaded)) return loaded
        props = { ...props, ...loaded.props }
      }
    } catch (error) {
      // The page's data could not be had from the backend: said as such, not as a 500 "Internal Server Error".
      if (isUnreachable(error)) return unreachableAnswer(ctx) as GetServerSidePropsResult<SessionPageProps & P>
      throw error
    }
    return { props: { ...props, ...sessionProps } }
  }
}
