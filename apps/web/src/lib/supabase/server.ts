import type { IncomingMessage, ServerResponse } from 'node:http'

import { PostgrestClient } from '@supabase/postgrest-js'
import { createServerClient, parseCookieHeader, serializeCookieHeader } from '@supabase/ssr'
import { isAuthApiError, isAuthRetryableFetchError, type JwtPayload, type Session, type SupabaseClient, type User } from '@supabase/supabase-js'

import { sessionCookieName } from '../../server/node-server'
import { clientAddress } from '../client-address'
import { backendConfig } from '../env'
import type { AppDataClient, AppSupabaseClient, Database } from './client-type'
import { isHttpsRequest, sessionCookieOptions } from './cookie-options'
import { serverFetch } from './server-fetch'

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

const BASE64_PREFIX = 'base64-'

/**
 * The request's cookies for @supabase/ssr, read once per request (it asks on every `getSession()`: at least three
 * times per request), with each `base64-` session value (whole, or its chunks `<name>.0`, `.1`, … joined) decoded
 * here once, natively, and handed over as the JSON it holds — which @supabase/ssr reads as is (its raw cookie
 * format) instead of decoding the 3 kB in JavaScript again on each `getSession()` (≈ 0.3 ms each). The decoded
 * value sits in the first chunk, the others are left empty; every name stays, so when @supabase/ssr writes new
 * cookies it still clears the chunks a shorter value no longer uses. A value that is not base64 JSON is left as is
 * (then @supabase/ssr treats it as absent, as before).
 */
export function readRequestCookies(header: string): { name: string; value: string }[] {
  const cookies = parseCookieHeader(header).map(({ name, value }) => ({ name, value: value ?? '' }))
  const byName = new Map(cookies.map((cookie) => [cookie.name, cookie]))
  for (const cookie of cookies) {
    const chunked = cookie.name.endsWith('.0')
    if (!cookie.value.startsWith(BASE64_PREFIX) || (!chunked && /\.\d+$/.test(cookie.name))) continue
    const base = chunked ? cookie.name.slice(0, -2) : cookie.name
    if (chunked && byName.has(base)) continue // @supabase/ssr reads the whole cookie then, not the chunks
    const parts = [cookie]
    for (let i = 1; chunked; i++) {
      const next = byName.get(`${base}.${i}`)
      if (!next?.value) break
      parts.push(next)
    }
    const encoded = parts.map((part) => part.value).join('').slice(BASE64_PREFIX.length)
    if (!/^[A-Za-z0-9_-]*$/.test(encoded)) continue
    const decoded = Buffer.from(encoded, 'base64url').toString('utf8')
    try {
      JSON.parse(decoded)
    } catch {
      continue
    }
    parts.forEach((part, i) => (part.value = i === 0 ? decoded : ''))
  }
  return cookies
}

/**
 * A Supabase client for one server request (getServerSideProps, API routes): it reads the session cookies of
 * the request and writes refreshed/cleared ones to the response, with the no-cache headers @supabase/ssr hands
 * over (a response that sets a session must never be cached for someone else). Create one per request.
 */
export function createServerSupabase({ req, res }: RequestResponse): AppSupabaseClient {
  let requestCookies: { name: string; value: string }[] | undefined
  return createServerClient<Database>(backendConfig.supabaseUrl, backendConfig.supabaseAnonKey, {
    cookieOptions: sessionCookieOptions(isHttpsRequest(req)),
    auth: { flowType: 'pkce' },
    // No retries of table reads here (supabase-js retries a failed GET three times, ≈ 7 s): the browser's query
    // layer retries the whole call with its own backoff and shows that it does, and "can't reach the server" should
    // come back in one attempt's time. (Before ADR 031 the auth round trip failed first and this never ran.)
    db: { retry: false },
    global: { fetch: forwardingFetch(clientAddress(req)) },
    cookies: {
      getAll() {
        return (requestCookies ??= readRequestCookies(req.headers.cookie ?? ''))
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
 * The client for table queries of a request whose session is verified: PostgREST (`/rest/v1`) with the anon key and
 * the verified access token, so the queries run under RLS as that user — what the full client's `from()` sends,
 * without building a whole Supabase client (auth, realtime, storage) per request and reading the session cookie again
 * for every query. No retries of reads (see createServerSupabase).
 */
export function createDataClient(accessToken: string): AppDataClient {
  const known = dataClients.get(accessToken)
  if (known) return known
  const client = new PostgrestClient<Database>(`${backendConfig.supabaseUrl}/rest/v1`, {
    headers: { apikey: backendConfig.supabaseAnonKey, Authorization: `Bearer ${accessToken}` },
    fetch: serverFetch,
    retry: false,
  })
  if (dataClients.size >= DATA_CLIENTS_KEPT) dataClients.delete(dataClients.keys().next().value as string)
  dataClients.set(accessToken, client)
  return client
}

/**
 * The data clients of the access tokens seen last, by token: a PostgrestClient holds nothing but its URL, headers and
 * fetch (each `from()` copies them into a new query), so the requests of one session share one instead of building
 * its WHATWG Headers again on every call. Keyed by the whole token, so a client only ever carries the token it was
 * looked up with; the oldest goes first when full.
 */
const dataClients = new Map<string, AppDataClient>()
const DATA_CLIENTS_KEPT = 1000

/**
 * The auth server could not be reached while verifying a session (a network failure, or its 5xx): not the same as
 * "signed out", so a tRPC call answers SERVICE_UNAVAILABLE instead of UNAUTHORIZED.
 */
export class AuthServerUnavailable extends Error {
  override name = 'AuthServerUnavailable'
}

/** A request's session after verification (docs/decisions/031-local-session-verification.md). */
export interface VerifiedSession {
  /** The cookie's session with `user` replaced by `user` below (never the cookie's own copy of the user). */
  session: Session
  /**
   * Who is signed in: as the auth server returned it (`verifiedBy: 'auth-server'`), or built from the verified
   * claims alone (`'signature'`, see userFromClaims).
   */
  user: User
  /** The access token's claims, verified by its signature (ES256/RS256 via the JWKS) or by the auth server. */
  claims: JwtPayload
  verifiedBy: 'signature' | 'auth-server'
  /** aal1 while the user has a verified factor: protected pages and procedures stay closed until /mfa. */
  needsSecondFactor: boolean
}

export interface VerifyOptions {
  /**
   * Ask the auth server (`GET /auth/v1/user`), which also checks that the token's session still exists: for the
   * places where a session revoked elsewhere must be refused at once (the ADR lists them).
   */
  fresh?: boolean
  /**
   * The request's Cookie header: when its session must be refreshed first, the auth server is asked once whether it
   * answers at all before auth-js tries (its refresh retries a connection failure for ≈ 25 s).
   */
  cookieHeader?: string | undefined
}

/**
 * Access tokens verified here, for at most TOKEN_TTL_MS (and never past their `exp`): their claims — a browser sends
 * the same token with every request for its lifetime, and the signature check (WebCrypto ECDSA, ≈ 0.5–1 ms here) is
 * the largest part of verifying it — and, once the auth server has said so for this token, that its user has no
 * verified factor (so an aal1 token needs no round trip to know it need not pass /mfa). Per token, not per user:
 * a new sign-in or a refresh (after a factor was added, or a session lowered to aal1 by removing a factor) is a new
 * token and asks again. Keyed by the whole token, so a changed byte is a miss; bounded in size (oldest dropped).
 */
export const TOKEN_TTL_MS = 60_000
const TOKENS_MAX = 5_000
interface KnownToken {
  claims: JwtPayload
  /** false once the auth server returned the user without a verified factor for this token */
  hasVerifiedFactor?: boolean
  until: number
}
const knownTokens = new Map<string, KnownToken>()

function knownToken(token: string): KnownToken | undefined {
  const hit = knownTokens.get(token)
  if (!hit) return undefined
  if (hit.until > Date.now()) return hit
  knownTokens.delete(token)
  return undefined
}

function rememberToken(token: string, entry: Omit<KnownToken, 'until'>): void {
  knownTokens.delete(token)
  if (knownTokens.size >= TOKENS_MAX) {
    const oldest = knownTokens.keys().next()
    if (!oldest.done) knownTokens.delete(oldest.value)
  }
  knownTokens.set(token, { ...entry, until: Math.min(Date.now() + TOKEN_TTL_MS, entry.claims.exp * 1000) })
}

const hasVerifiedFactorOf = (user: User) => (user.factors ?? []).some((factor) => factor.status === 'verified')

/** The header of a JWT, or null when it is not one. */
function jwtHeader(token: string): { alg?: unknown; kid?: unknown } | null {
  const part = token.split('.')[0]
  if (!part) return null
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as { alg?: unknown; kid?: unknown }
  } catch {
    return null
  }
}

/** The payload of a JWT the auth server has just accepted (no signature check here). */
function jwtPayload(token: string): JwtPayload | null {
  const part = token.split('.')[1]
  if (!part) return null
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as JwtPayload
  } catch {
    return null
  }
}

/**
 * auth-js verifies locally only an asymmetric token with a `kid` (ES256/RS256 against the published JWKS); any
 * other token (HS256 with the legacy secret) it sends to `GET /auth/v1/user` anyway, so for those we ask for the
 * user directly: one round trip, which also brings the user's factors.
 */
function verifiableLocally(token: string): boolean {
  const header = jwtHeader(token)
  return (header?.alg === 'ES256' || header?.alg === 'RS256') && typeof header.kid === 'string' && header.kid !== ''
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** GoTrue's checks of a user's access token beyond its signature: a sub, the session it belongs to, the audience. */
function isSessionToken(claims: JwtPayload): boolean {
  const aud = claims.aud as unknown
  const audOk = aud === undefined || aud === 'authenticated' || (Array.isArray(aud) && aud.includes('authenticated'))
  return typeof claims.sub === 'string' && UUID_RE.test(claims.sub) && typeof claims.session_id === 'string' && audOk
}

/**
 * The user of a session verified by its signature, from the verified claims alone (never the cookie's copy of the
 * user, which its holder can edit): id, email, phone, role, aud, metadata, is_anonymous. What the token does not
 * carry stays out: no identities, no factors (such a session needs no second factor: verifySession asks the auth
 * server for the others), and `created_at` is empty.
 */
export function userFromClaims(claims: JwtPayload): User {
  return {
    id: claims.sub,
    aud: typeof claims.aud === 'string' ? claims.aud : 'authenticated',
    role: claims.role,
    email: claims.email,
    phone: claims.phone,
    app_metadata: claims.app_metadata ?? {},
    user_metadata: claims.user_metadata ?? {},
    is_anonymous: claims.is_anonymous ?? false,
    created_at: '',
  }
}

function retryable(error: unknown): boolean {
  return isAuthRetryableFetchError(error) || (isAuthApiError(error) && error.status >= 500)
}

/**
 * The request's session, verified — or null when signed out or the token is refused. `getSession()` reads the
 * cookie and, when the access token has expired, refreshes it through the refresh token (@supabase/ssr writes the
 * new cookies to the response). The access token is then verified:
 * - ES256/RS256 with a `kid`: by `getClaims()`, locally with the auth server's published keys (auth-js keeps them
 *   per storage key for every client of this process, refetches them after 10 minutes or for an unknown `kid`); no
 *   round trip (claims kept per token for TOKEN_TTL_MS). An aal2 session needs nothing more; for an aal1 token the
 *   auth server is asked once whether the user has a verified factor (and every time while the answer is yes).
 * - anything else (HS256, the legacy secret), or `fresh`: by `getUser()` at the auth server, which also refuses a
 *   session that was signed out or deleted.
 * Throws AuthServerUnavailable when the auth server cannot be reached.
 */
export async function verifySession(supabase: SupabaseClient, options: VerifyOptions = {}): Promise<VerifiedSession | null> {
  // A session whose token needs refreshing, with the auth server out of reach: said at once. auth-js would retry the
  // refresh grant with backoff for ≈ 25 s (its 30 s tick), and the page or call would hang that long before its 503.
  const stored = options.cookieHeader ? storedSessionOf(options.cookieHeader) : null
  if (stored && stored.expires_at * 1000 - Date.now() < REFRESH_MARGIN_MS && !(await authServerAnswers()))
    throw new AuthServerUnavailable('The auth server did not answer')
  const { data: current, error: sessionError } = await supabase.auth.getSession()
  if (sessionError && retryable(sessionError)) throw new AuthServerUnavailable(sessionError.message)
  const cookieSession = current.session
  if (!cookieSession) return null
  const token = cookieSession.access_token
  const locally = verifiableLocally(token)

  const fromAuthServer = async (): Promise<VerifiedSession | null> => {
    const { data, error } = await supabase.auth.getUser()
    if (error && retryable(error)) throw new AuthServerUnavailable(error.message)
    if (error || !data.user) return null
    const claims = jwtPayload(token)
    if (!claims || claims.sub !== data.user.id) return null
    const hasVerifiedFactor = hasVerifiedFactorOf(data.user)
    // Only tokens this server can verify itself: an HS256 token goes to the auth server every time, as before.
    if (locally && typeof claims.exp === 'number') rememberToken(token, { claims, hasVerifiedFactor })
    return {
      session: { ...cookieSession, user: data.user },
      user: data.user,
      claims,
      verifiedBy: 'auth-server',
      needsSecondFactor: hasVerifiedFactor && claims.aal !== 'aal2',
    }
  }
  if (options.fresh || !locally) return fromAuthServer()

  const known = knownToken(token)
  let claims = known?.claims
  if (!claims) {
    const { data, error } = await supabase.auth.getClaims(token)
    if (error && retryable(error)) throw new AuthServerUnavailable(error.message)
    if (error || !data || !isSessionToken(data.claims)) return null
    claims = data.claims
    rememberToken(token, { claims })
  }
  // An aal2 session has nothing to step up to. An aal1 one needs its second factor when the user has one: known for
  // this token once the auth server said "no verified factor"; otherwise — not known yet, or the session must still
  // pass /mfa (rare: between sign-in and the code) — the auth server tells, and brings the user's factors for the page.
  if (claims.aal !== 'aal2' && known?.hasVerifiedFactor !== false) return fromAuthServer()
  const user = userFromClaims(claims)
  return { session: { ...cookieSession, user }, user, claims, verifiedBy: 'signature', needsSecondFactor: false }
}

/**
 * auth-js refreshes a session whose access token expires within this margin (its EXPIRY_MARGIN_MS) before it hands
 * the session out; the fast path below leaves such a session to it.
 */
const REFRESH_MARGIN_MS = 90_000

interface StoredSession {
  access_token: string
  refresh_token: string
  expires_at: number
}

/**
 * The session a Cookie header carries, as @supabase/ssr reads it (the whole cookie when there is one, else its chunks
 * joined), or null. Remembered for the last STORED_SESSIONS_KEPT headers: a browser sends the very same header with
 * every request until its session changes, and decoding its 3 kB costs more than the rest of a known session's check.
 * Only the parsing is remembered; whether the token is known and far from expiry is checked on every request.
 */
const STORED_SESSIONS_KEPT = 256
const storedSessions = new Map<string, StoredSession | null>()

function storedSessionOf(cookieHeader: string): StoredSession | null {
  const remembered = storedSessions.get(cookieHeader)
  if (remembered !== undefined) return remembered
  const base = sessionCookieName(backendConfig.supabaseUrl)
  const cookies = readRequestCookies(cookieHeader)
  const value = (cookies.find((cookie) => cookie.name === base) ?? cookies.find((cookie) => cookie.name === `${base}.0`))?.value
  let stored: StoredSession | null = null
  try {
    const parsed: unknown = value ? JSON.parse(value) : null
    if (isStoredSession(parsed)) stored = parsed
  } catch {
    stored = null
  }
  if (storedSessions.size >= STORED_SESSIONS_KEPT) storedSessions.delete(storedSessions.keys().next().value as string)
  storedSessions.set(cookieHeader, stored)
  return stored
}

function isStoredSession(value: unknown): value is StoredSession {
  if (typeof value !== 'object' || value === null) return false
  const session = value as Record<string, unknown>
  return typeof session.access_token === 'string' && typeof session.refresh_token === 'string' && typeof session.expires_at === 'number'
}

/** How long the auth server's health check may take before it counts as out of reach. */
const AUTH_PROBE_TIMEOUT_MS = 3_000

/** Whether the auth server answers at all: any HTTP answer to its health check in time (a refused connection: no). */
async function authServerAnswers(): Promise<boolean> {
  try {
    const answer = await fetch(`${backendConfig.supabaseUrl}/auth/v1/health`, {
      headers: { apikey: backendConfig.supabaseAnonKey },
      signal: AbortSignal.timeout(AUTH_PROBE_TIMEOUT_MS),
    })
    await answer.body?.cancel()
    return true
  } catch {
    return false
  }
}

/**
 * The request's session without a Supabase client, when this process verified its access token already (a browser
 * sends the same token with every request for the token's lifetime): the cookie's session holds a token found among
 * the known tokens (its signature checked by `verifySession` less than TOKEN_TTL_MS ago, never past its `exp`), far
 * enough from expiry that `getSession()` would not refresh it, and nothing more to ask the auth server (aal2, or no
 * verified factor). Otherwise undefined, and the caller takes `verifySession`'s way — which also refreshes, writes
 * cookies and remembers the token for the next request. The result is exactly what `verifySession` would return.
 */
export function knownRequestSession(cookieHeader: string | undefined): VerifiedSession | undefined {
  if (!cookieHeader) return undefined
  const stored = storedSessionOf(cookieHeader)
  if (!stored || stored.expires_at * 1000 - Date.now() < REFRESH_MARGIN_MS) return undefined
  const known = knownToken(stored.access_token)
  if (!known || (known.claims.aal !== 'aal2' && known.hasVerifiedFactor !== false)) return undefined
  const user = userFromClaims(known.claims)
  return { session: { ...(stored as unknown as Session), user }, user, claims: known.claims, verifiedBy: 'signature', needsSecondFactor: false }
}

/**
 * The cookie's session as it stands, NOT verified (its token's claims read without checking the signature, possibly
 * expired): only for what a page shows its own user when the auth server cannot be reached to verify or refresh it
 * (the header of the 503 page: the account, not "Sign in"). Never for deciding access: the cookie is the browser's
 * own, and anything done with the session is verified by the server that receives it.
 */
export function unverifiedRequestSession(cookieHeader: string | undefined): Session | null {
  const stored = cookieHeader ? storedSessionOf(cookieHeader) : null
  const payload = stored?.access_token.split('.')[1]
  if (!stored || !payload) return null
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as JwtPayload
    if (typeof claims.sub !== 'string') return null
    return { ...(stored as unknown as Session), user: userFromClaims(claims) }
  } catch {
    return null
  }
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
