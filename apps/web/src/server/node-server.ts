/**
 * The HTTP server in front of Next's request handler (apps/web/server.ts): what Node's server decides before Next
 * sees a request. Only node: built-ins here, so server.ts can load it without Next's compiler.
 *
 * - Request headers up to 64 KiB (Node's default is 16 KiB). A session cookie grows with the user's metadata; at
 *   16 KiB a user with a few kB of profile data got HTTP 431 on every page, /sign-in included, and could not get
 *   back in without clearing cookies by hand.
 * - Past that limit, the 431 answer itself is the way out: it clears the session cookies and says what happened.
 * - A request-target that is not a path (`OPTIONS *`, absolute-form `GET http://…`) is answered here: Next cannot
 *   parse it and answered 500.
 * - Idle keep-alive connections stay open 65 s, longer than the clients and load balancers in front keep theirs
 *   (undici 4 s, AWS ALB 60 s): with Node's 5 s a client that sent a request on a connection just as the server
 *   closed it got the connection reset.
 */
import http from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'

/** Largest request head (request line + headers) the app accepts, in bytes. */
export const MAX_REQUEST_HEADER_BYTES = 64 * 1024
/** How long an idle keep-alive connection stays open, in ms (longer than any client in front keeps one idle). */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000

/**
 * The web app's HTTP server: `handle` (Next's request handler) behind the checks above. Not yet listening.
 */
export function createWebServer(
  supabaseUrl: string,
  handle: (req: IncomingMessage, res: ServerResponse) => unknown,
): http.Server {
  const server = http.createServer({ maxHeaderSize: MAX_REQUEST_HEADER_BYTES }, (req, res) => {
    if (answerNonPathTarget(req, res)) return
    void handle(req, res)
  })
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
  // A request's head must arrive within this (Node's default 60 s): longer than keep-alive, so an idle connection
  // is closed by the keep-alive timer, never by the head timer while a request is starting on it.
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 5_000
  server.on('clientError', handleClientError(supabaseUrl))
  return server
}

/**
 * Chunks of the session cookie to clear. `@supabase/ssr` writes chunks of 3180 characters, so a head we accept holds
 * at most 21; a session that outgrew the limit holds more, and a browser keeps at most 180 cookies per site.
 */
const SESSION_COOKIE_CHUNKS = 64

/** `sb-<first label of the Supabase host>-auth-token`: supabase-js's storage key, the session cookie's name. */
export function sessionCookieName(supabaseUrl: string): string {
  return `sb-${new URL(supabaseUrl).hostname.split('.')[0]}-auth-token`
}

/** Set-Cookie lines that delete the session cookie, every chunk of it and the PKCE verifier. */
export function clearSessionCookies(supabaseUrl: string): string[] {
  const base = sessionCookieName(supabaseUrl)
  const names = [base, `${base}-code-verifier`, ...Array.from({ length: SESSION_COOKIE_CHUNKS }, (_, i) => `${base}.${i}`)]
  return names.map((name) => `${name}=; Path=/; Max-Age=0; SameSite=Lax`)
}

const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

/** The raw HTTP answer to a request whose head was too large: 431, session cleared, a page that says so. */
export function headerOverflowResponse(supabaseUrl: string): string {
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Signed out: your session was too large</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1a1a1a}
@media (prefers-color-scheme:dark){body{background:#121212;color:#eee}a{color:#8ab4ff}}</style></head>
<body><h1>You have been signed out</h1>
<p>Your browser sent more data with this request than the site accepts (over ${MAX_REQUEST_HEADER_BYTES / 1024} kB), most
likely a very large sign-in session. The session has been removed from this browser so that every page opens again.</p>
<p><a href="/sign-in">Sign in again</a> or <a href="/">go to the start page</a>.</p></body></html>
`
  const lines = [
    'HTTP/1.1 431 Request Header Fields Too Large',
    'Content-Type: text/html; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    `Content-Security-Policy: ${PAGE_CSP}`,
    'X-Content-Type-Options: nosniff',
    'Connection: close',
    ...clearSessionCookies(supabaseUrl).map((cookie) => `Set-Cookie: ${cookie}`),
  ]
  return `${lines.join('\r\n')}\r\n\r\n${body}`
}

/**
 * Node's `clientError` handler: a head over the limit gets the way-out page above; any other malformed request
 * gets what Node would send (408 for a request that timed out, else 400; a socket that is already gone gets nothing).
 */
export function handleClientError(supabaseUrl: string) {
  return (error: Error & { code?: string }, socket: Duplex): void => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy()
      return
    }
    const answer =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? headerOverflowResponse(supabaseUrl)
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 'HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'
          : 'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'
    socket.end(answer)
  }
}

/** Methods the app answers (for `Allow`). */
const ALLOWED_METHODS = 'GET, HEAD, POST, OPTIONS'

/**
 * Answers a request whose target is not a path and returns true, or returns false for Next to handle. `OPTIONS *`
 * asks about the server as a whole (RFC 9110 §9.3.7): 204 with `Allow`. Absolute-form and other targets are for
 * proxies, which this server is not: 400.
 */
export function answerNonPathTarget(req: IncomingMessage, res: ServerResponse): boolean {
  const target = req.url ?? ''
  if (target.startsWith('/')) return false
  if (target === '*' && req.method === 'OPTIONS') {
    res.writeHead(204, { Allow: ALLOWED_METHODS, 'Content-Length': '0' })
  } else {
    res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' })
    res.write('Bad request: the request target must be a path.\n')
  }
  res.end()
  return true
}
