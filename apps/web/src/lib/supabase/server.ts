import type { IncomingMessage, ServerResponse } from 'node:http'

import { createServerClient, parseCookieHeader, serializeCookieHeader } from '@supabase/ssr'
import type { SupabaseClient, User } from '@supabase/supabase-js'

import { backendConfig } from '../env'
import { sessionNeedsSecondFactor } from './assurance'
import { SESSION_COOKIE_OPTIONS } from './cookie-options'

export { accessTokenAal } from './assurance'

export interface RequestResponse {
  req: Pick<IncomingMessage, 'headers'>
  res: Pick<ServerResponse, 'getHeader' | 'setHeader' | 'headersSent'>
}

/** Adds Set-Cookie lines to a Node response, keeping the ones already there. */
export function appendSetCookie(res: RequestResponse['res'], lines: string[]): void {
  if (lines.length === 0) return
  const existing = res.getHeader('Set-Cookie')
  const before = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)]
  res.setHeader('Set-Cookie', [...before, ...lines])
}

/**
 * A Supabase client for one server request (getServerSideProps, API routes): it reads the session cookies of
 * the request and writes refreshed/cleared ones to the response, with the no-cache headers @supabase/ssr hands
 * over (a response that sets a session must never be cached for someone else). Create one per request.
 */
export function createServerSupabase({ req, res }: RequestResponse): SupabaseClient {
  return createServerClient(backendConfig.supabaseUrl, backendConfig.supabaseAnonKey, {
    cookieOptions: SESSION_COOKIE_OPTIONS,
    auth: { flowType: 'pkce' },
    cookies: {
      getAll() {
        return parseCookieHeader(req.headers.cookie ?? '').map(({ name, value }) => ({ name, value: value ?? '' }))
      },
      setAll(cookies, headers) {
        if (res.headersSent) return
        appendSetCookie(
          res,
          cookies.map(({ name, value, options }) => serializeCookieHeader(name, value, options)),
        )
        for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
      },
    },
  })
}

/**
 * The signed-in user, verified by the auth server (`getUser()` checks the access token there), or null.
 * Never `getSession()` alone: its data comes from the cookie and anyone can write a cookie.
 */
export async function getVerifiedUser(supabase: SupabaseClient): Promise<User | null> {
  const { data, error } = await supabase.auth.getUser()
  if (error || !data.user) return null
  return data.user
}

/**
 * True when the session is at aal1 but its user has a verified factor (next level aal2): the user must finish
 * two-factor sign-in at `/mfa` before protected pages and procedures open. Call after a verified `getUser()`.
 */
export async function needsSecondFactor(supabase: SupabaseClient): Promise<boolean> {
  // With the access token passed, the level is read from a token and a user the auth server verifies (not from
  // the cookie's copy of the user, which anyone could edit).
  const { data: session } = await supabase.auth.getSession()
  const accessToken = session.session?.access_token
  if (!accessToken) return false
  const { data, error } = await supabase.auth.mfa.getAuthenticatorAssuranceLevel(accessToken)
  if (error || !data) return false
  return data.currentLevel === 'aal1' && data.nextLevel === 'aal2'
}

/**
 * needsSecondFactor without another round trip, for a user the auth server has just verified with `getUser()`:
 * that call checked the session's access token, so its `aal` claim can be read as is, and the verified user carries
 * its factors. Saves one /auth/v1/user call per protected page or procedure.
 */
export async function needsSecondFactorFor(supabase: SupabaseClient, user: User): Promise<boolean> {
  const { data } = await supabase.auth.getSession()
  const token = data.session?.access_token
  return token ? sessionNeedsSecondFactor(token, user) : false
}
