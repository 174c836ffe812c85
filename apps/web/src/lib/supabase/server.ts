import type { IncomingMessage, ServerResponse } from 'node:http'

import { createServerClient, parseCookieHeader, serializeCookieHeader } from '@supabase/ssr'
import type { SupabaseClient, User } from '@supabase/supabase-js'

import { clientAddress } from '../client-address'
import { backendConfig } from '../env'
import { sessionNeedsSecondFactor } from './assurance'
import type { AppSupabaseClient, Database } from './client-type'
import { SESSION_COOKIE_OPTIONS } from './cookie-options'

export { accessTokenAal } from './assurance'

export interface RequestResponse {
  req: Pick<IncomingMessage, 'headers'> & { socket?: { remoteAddress?: string | undefined } | null }
  res: Pick<ServerResponse, 'getHeader' | 'setHeader' | 'headersSent'>
}

/**
 * A fetch for the server's Supabase client that tells Supabase Auth whose request it carries. Every sign-in,
 * token refresh and user check of a server-rendered page or tRPC call reaches Auth from this server's address;
 * Auth limits such calls per address (token refreshes: 150 per 5 minutes), so without this every user of the app
 * would share one budget and the 151st refresh would sign someone out.
 *
 * Requests to `/auth/v1` carry the browser's address (src/lib/client-address.ts):
 * - always as `X-Forwarded-For`, which localbase and a self-hosted Auth read when this server is one of their
 *   trusted proxies (`LOCALBASE_TRUSTED_PROXIES`; GoTrue's `GOTRUE_RATE_LIMIT_HEADER`);
 * - and, when `SUPABASE_SECRET_KEY` is set, as `Sb-Forwarded-For` with that secret key as the apikey: hosted
 *   Supabase's "IP address forwarding", which it accepts only with a secret key. The secret key goes to `/auth/v1`
 *   only; table queries keep the anon key and the user's token, so they always run under RLS as the user.
 */
export function forwardingFetch(address: string | null, secretKey: string | undefined = serverSecretKey()): typeof fetch {
  if (address === null) return fetch
  const authPrefix = `${backendConfig.supabaseUrl}/auth/v1/`
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    if (!url.startsWith(authPrefix)) return fetch(input, init)
    const headers = new Headers(input instanceof Request ? input.headers : undefined)
    new Headers(init?.headers).forEach((value, name) => headers.set(name, value))
    headers.set('X-Forwarded-For', address)
    if (secretKey) {
      headers.set('Sb-Forwarded-For', address)
      headers.set('apikey', secretKey)
      // The anon key as a bearer only stood in for "no user": leave the secret key to speak for the request.
      if (headers.get('authorization') === `Bearer ${backendConfig.supabaseAnonKey}`) headers.delete('authorization')
    }
    return fetch(input, { ...init, headers })
  }
}

/** `SUPABASE_SECRET_KEY`: server-only (never `NEXT_PUBLIC_`), optional; an empty value counts as unset. */
export function serverSecretKey(): string | undefined {
  const value = process.env.SUPABASE_SECRET_KEY?.trim()
  return value ? value : undefined
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
export function createServerSupabase({ req, res }: RequestResponse): AppSupabaseClient {
  return createServerClient<Database>(backendConfig.supabaseUrl, backendConfig.supabaseAnonKey, {
    cookieOptions: SESSION_COOKIE_OPTIONS,
    auth: { flowType: 'pkce' },
    global: { fetch: forwardingFetch(clientAddress(req)) },
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
