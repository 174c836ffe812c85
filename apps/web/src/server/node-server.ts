/**
 * The HTTP server in front of Next's request handler (apps/web/server.ts): what Node's server decides before Next
 * sees a request. Only node: built-ins here (and the plain security-headers module), so server.ts can load it without
 * Next's compiler.
 *
 * - Request headers up to 64 KiB (Node's default is 16 KiB). A session cookie grows with the user's metadata; at
 *   16 KiB a user with a few kB of profile data got HTTP 431 on every page, /sign-in included, and could not get
 *   back in without clearing cookies by hand.
 * - Past that limit, when the session cookie is what made the head too large, the 431 answer itself is the way out:
 *   it clears the session cookies and says what happened. A URL that long (a link any site can make) gets 414 and
 *   leaves the session alone; other oversized headers a plain 431 (ADR 070).
 * - A request-target that is not a path (`OPTIONS *`, absolute-form `GET http://…`) is answered here: Next cannot
 *   parse it and answered 500.
 * - A path that is not valid percent-encoding (`/notes/%E0%A4%A`, a mangled link) gets a 400 page of ours: Next's
 *   own 400 for it came before its headers() config, without the security headers every page has (no CSP, framing
 *   allowed).
 * - A path with a trailing, doubled or back slash gets its 308 to the plain path here, with the pages' headers (Next's
 *   own had none).
 * - A page asked for with a method no page takes (TRACE, DELETE, PUT…) gets a 405 page with `Allow`, and OPTIONS on a
 *   page 204 with `Allow`: Next rendered the page for any method (200, its server render and session refresh run),
 *   and answered OPTIONS with an empty 400. The API (`/api/`) says which methods its procedures take itself. A static
 *   file (`/_next/static/…`, a file of public/) asked for with any method but GET and HEAD gets the same page with
 *   `Allow: GET, HEAD`: Next answered POST with its error page (67 kB of HTML) and the others got the pages' `Allow`.
 * - Idle keep-alive connections stay open 65 s, longer than the clients and load balancers in front keep theirs
 *   (undici 4 s, AWS ALB 60 s): with Node's 5 s a client that sent a request on a connection just as the server
 *   closed it got the connection reset.
 * - A request's head must arrive within 20 s and the whole request within 60 s (Node's defaults: 60 s and 300 s), or
 *   it is answered 408 and the connection closed: the app takes bodies of at most 1 MiB.
 * - What Node's parser refuses (a malformed request line or header: 400; a request that does not arrive in time: 408)
 *   and an HTTP/1.1 request without Host (400) get a small page with the headers every page has: Node's own answers
 *   to them had none.
 * - A Range a static file cannot satisfy gets 416 with `Content-Range: bytes *\/size` and no body: Next sent its error
 *   page's 67 kB of HTML with it, under the file's type (`image/x-icon`, `application/javascript`…).
 * - The 204s of OPTIONS (on a page, a static file, `*`) carry the headers every page has, as the other answers written
 *   here: they had none (no CSP, framing or sniffing rules, no Referrer-Policy).
 * - Behind https (`X-Forwarded-Proto: https`, as next.config.ts asks for its own answers) the answers written here
 *   carry HSTS too. Those written before a request is parsed (clientError: 400, 408, 414, 431) have it when the
 *   proxy's header is among the bytes read before the refusal (ADR 159): a head cut off by a long URL has not.
 */
import { readdirSync, statSync } from 'node:fs'
import http from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'

import { headersBesideCsp, HTTPS_ONLY_HEADERS } from '../lib/security-headers.ts'

/** Largest request head (request line + headers) the app accepts, in bytes. */
export const MAX_REQUEST_HEADER_BYTES = 64 * 1024
/** How long an idle keep-alive connection stays open, in ms (longer than any client in front keeps one idle). */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000
/**
 * How long a request's head may take to arrive, from its first byte, in ms: 64 KiB (the most we accept) at 3.2 kB/s.
 * Node counts it per request, not over an idle keep-alive connection, so it may be shorter than keep-alive.
 */
export const HEADERS_TIMEOUT_MS = 20_000
/**
 * How long a whole request may take to arrive, in ms. The largest body the app takes is a tRPC call of 1 MiB
 * (request-guards.ts MAX_BODY_BYTES; files go straight to storage, pages are posted nothing): 1 MiB at 17 kB/s, a
 * poor mobile uplink. Node's default is 300 s, so a few clients trickling bodies held sockets for five minutes.
 */
export const REQUEST_TIMEOUT_MS = 60_000
/** How often Node checks those two timeouts, in ms (its default 30 s would let a slow head last 50 s). */
const TIMEOUT_CHECK_INTERVAL_MS = 2_000

/** Other timeouts for tests (the server's limits are the constants above), and the files of public/. */
export interface WebServerOptions {
  headersTimeoutMs?: number
  requestTimeoutMs?: number
  connectionsCheckingIntervalMs?: number
  /** The URL paths of the files Next serves from public/ (`publicFilePaths`), decoded: `/favicon.ico`. */
  publicFiles?: ReadonlySet<string>
}

/**
 * The web app's HTTP server: `handle` (Next's request handler) behind the checks above. Not yet listening.
 */
export function createWebServer(
  supabaseUrl: string,
  handle: (req: IncomingMessage, res: ServerResponse) => unknown,
  timeouts: WebServerOptions = {},
): http.Server {
  const publicFiles = timeouts.publicFiles ?? new Set<string>()
  const isStaticFile = (path: string) => path.startsWith('/_next/static/') || publicFiles.has(path)
  const heads = new WeakMap<Duplex, HeadInProgress>()
  const options: http.ServerOptions = {
    maxHeaderSize: MAX_REQUEST_HEADER_BYTES,
    headersTimeout: timeouts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS,
    requestTimeout: timeouts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: timeouts.connectionsCheckingIntervalMs ?? TIMEOUT_CHECK_INTERVAL_MS,
    // an HTTP/1.1 request without Host is still refused (400), by answerMissingHost: Node's own 400 had no headers
    requireHostHeader: false,
  }
  const server = http.createServer(options, (req, res) => {
    headReceived(heads.get(req.socket), req, res)
    // Behind https, HSTS on the answers written here too (next.config.ts gives it to Next's, on the same condition):
    // a browser whose first answer from the site is one of them (a 308 of a link with a trailing slash) learns it.
    if (req.headers['x-forwarded-proto'] === 'https') for (const { key, value } of HTTPS_ONLY_HEADERS) res.setHeader(key, value)
    if (answerMissingHost(req, res) || answerNonPathTarget(req, res) || answerMalformedPath(req, res) || answerPageMethod(req, res, isStaticFile) || answerSlashRedirect(req, res))
      return
    withoutBodyOnRangeRefusal(req, res)
    void handle(req, res)
  })
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS
  server.on('connection', (socket: Duplex) => heads.set(socket, recordHeads(socket)))
  server.on('clientError', handleClientError(supabaseUrl, (socket) => heads.get(socket)))
  return server
}

/**
 * The bytes read so far of the request head in progress on one connection. Node's parser says only that a head
 * was too large, not which part of it, and its error carries just the last chunk read: these bytes (at most the
 * limit's worth; the rest is that chunk) tell a long URL from a large session.
 */
export interface HeadInProgress {
  collecting: boolean
  chunks: Buffer[]
  bytes: number
}

/**
 * Records what arrives on `socket` while a request head is being read. Our listener comes after the parser's
 * (Node adds it as the connection starts): a chunk that completes a head is not recorded (`headReceived` has
 * stopped the recording), and a chunk that overflows one is not yet recorded when `clientError` runs.
 */
function recordHeads(socket: Duplex): HeadInProgress {
  const head: HeadInProgress = { collecting: true, chunks: [], bytes: 0 }
  socket.on('data', (chunk: Buffer) => {
    if (!head.collecting || head.bytes >= MAX_REQUEST_HEADER_BYTES) return
    head.chunks.push(chunk)
    head.bytes += chunk.byteLength
  })
  return head
}

/** A head arrived whole: forget it, and record again once this request and its answer are done. */
function headReceived(head: HeadInProgress | undefined, req: IncomingMessage, res: ServerResponse): void {
  if (!head) return
  Object.assign(head, { collecting: false, chunks: [], bytes: 0 })
  const resume = () => {
    head.collecting = true
  }
  res.once('finish', () => {
    if (req.complete) resume()
    else req.once('end', resume)
  })
}

/** Which part of a request head made it too large: its URL, the session (the Cookie header) or other headers. */
export type OverflowCause = 'url' | 'session' | 'headers'

/**
 * A request-target at least this long is never an ordinary link (servers commonly refuse 8 KiB): a head it is part
 * of is too large because of it, whatever the session's size.
 */
const LONG_URL_BYTES = 8 * 1024

/**
 * Judges a head cut off where it passed the limit. A URL comes first in the head, so a long one is seen whole (or is
 * all there is): one of LONG_URL_BYTES or more is the cause, and so is one larger than the rest. Otherwise the
 * largest of the Cookie header(s) and the other headers read is: a session over the limit with an ordinary URL.
 * A page elsewhere chooses the URL of its link but not the size of the user's cookie, so its link can only make the
 * URL the cause (or fit): clearing the session needs a session within 8 KiB of the limit on its own.
 */
export function overflowCause(head: Buffer): OverflowCause {
  const text = head.toString('latin1')
  const lineEnd = text.indexOf('\r\n')
  const requestLine = lineEnd === -1 ? text : text.slice(0, lineEnd)
  const targetStart = requestLine.indexOf(' ') + 1
  const targetEnd = lineEnd === -1 ? requestLine.length : requestLine.lastIndexOf(' ')
  const url = targetStart > 0 && targetEnd > targetStart ? targetEnd - targetStart : 0
  let cookie = 0
  let other = 0
  if (lineEnd !== -1) {
    for (const line of text.slice(lineEnd + 2).split('\r\n')) {
      if (/^cookie[ \t]*:/i.test(line)) cookie += line.length
      else other += line.length
    }
  }
  if (url >= LONG_URL_BYTES || (url >= cookie && url >= other)) return 'url'
  return cookie >= other ? 'session' : 'headers'
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

/**
 * The headers of the pages written here: those every page Next answers has (src/lib/security-headers.ts), with a
 * policy of their own (they have no script). nosniff always: these pages are HTML, in development too.
 */
const PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': PAGE_CSP,
  ...Object.fromEntries(headersBesideCsp(false).map(({ key, value }) => [key, value])),
}

const PAGE_STYLE = `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1a1a1a}
@media (prefers-color-scheme:dark){body{background:#121212;color:#eee}a{color:#8ab4ff}}</style>`

/** The HTML of the small pages written here (system font, light and dark); `text` and `links` are HTML. */
function pageHtml(page: { title: string; heading?: string; text: string; links?: string }): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title}</title>
${PAGE_STYLE}</head>
<body><h1>${page.heading ?? page.title}</h1>
<p>${page.text}</p>
<p>${page.links ?? '<a href="/">Go to the start page</a>.'}</p></body></html>
`
}

/**
 * The headers of the bodiless answers written here (OPTIONS' 204s): the pages' headers but a Content-Type, as Next's
 * own answers have them (an answer without them was the one kind without CSP, framing and sniffing rules).
 */
const BODILESS_HEADERS: Record<string, string> = Object.fromEntries(Object.entries(PAGE_HEADERS).filter(([name]) => name !== 'Content-Type'))

/** A whole raw HTTP answer (Connection: close) with the pages' headers, for the answers written on the socket. */
function rawAnswer(status: string, body: string, extraHeaders: string[] = []): string {
  const lines = [
    `HTTP/1.1 ${status}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    // as every page Next answers: these pages are written before Next sees the request
    ...Object.entries(PAGE_HEADERS).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    ...extraHeaders,
  ]
  return `${lines.join('\r\n')}\r\n\r\n${body}`
}

const LIMIT_KB = MAX_REQUEST_HEADER_BYTES / 1024

/** Each cause's status line, page title, heading and explanation. */
const OVERFLOW_PAGES: Record<OverflowCause, { status: string; title: string; heading: string; text: string; links: string }> = {
  session: {
    status: '431 Request Header Fields Too Large',
    title: 'Signed out: your session was too large',
    heading: 'You have been signed out',
    text: `Your browser sent more data with this request than the site accepts (over ${LIMIT_KB} kB), most
likely a very large sign-in session. The session has been removed from this browser so that every page opens again.`,
    links: '<a href="/sign-in">Sign in again</a> or <a href="/">go to the start page</a>.',
  },
  url: {
    status: '414 URI Too Long',
    title: 'This address is too long',
    heading: 'This address is too long',
    text: `The address of the page you asked for is longer than the site accepts (over ${LIMIT_KB} kB), so it could
not be opened. Nothing else has changed: if you were signed in, you still are.`,
    links: '<a href="/">Go to the start page</a>.',
  },
  headers: {
    status: '431 Request Header Fields Too Large',
    title: 'This request is too large',
    heading: 'This request is too large',
    text: `Your browser sent more header data with this request than the site accepts (over ${LIMIT_KB} kB), so
the page could not be opened. Nothing else has changed: if you were signed in, you still are.`,
    links: '<a href="/">Go to the start page</a>.',
  },
}

/**
 * The raw HTTP answer to a request whose head was too large: 431 with the session cleared when the session was
 * the cause, 414 for a URL, a plain 431 for other headers; each with a page that says so.
 */
export function headerOverflowResponse(supabaseUrl: string, cause: OverflowCause, https = false): string {
  const page = OVERFLOW_PAGES[cause]
  const cookies = cause === 'session' ? clearSessionCookies(supabaseUrl).map((cookie) => `Set-Cookie: ${cookie}`) : []
  return rawAnswer(page.status, pageHtml(page), [...cookies, ...httpsOnlyLines(https)])
}

/** The HSTS line(s) of an answer behind https, none otherwise. */
function httpsOnlyLines(https: boolean): string[] {
  return https ? HTTPS_ONLY_HEADERS.map(({ key, value }) => `${key}: ${value}`) : []
}

/**
 * Whether the bytes read of a head (whole, or cut off where the parser refused it) hold a whole
 * `X-Forwarded-Proto: https` line: the condition next.config.ts and the request handler give HSTS on. A line the cut
 * went through, or one after it, was not read, and is not guessed at (ADR 159).
 */
export function headSaysHttps(head: Buffer): boolean {
  const text = head.toString('latin1')
  const end = text.indexOf('\r\n\r\n')
  // the header lines: not the request line, not a last line the cut went through, nothing past the head (a body)
  const lines = (end < 0 ? text : text.slice(0, end + 2)).split('\r\n').slice(1, -1)
  return lines.some((line) => {
    const colon = line.indexOf(':')
    return colon > 0 && line.slice(0, colon).trimEnd().toLowerCase() === 'x-forwarded-proto' && line.slice(colon + 1).trim() === 'https'
  })
}

/** The pages of what Node's parser refuses, written here as its own answers would be but with the pages' headers. */
const CLIENT_ERROR_PAGES = {
  malformed: {
    status: '400 Bad Request',
    heading: 'This request could not be read',
    text: 'Your browser or another program sent a request this site cannot read, so no page could be opened.',
  },
  timeout: {
    status: '408 Request Timeout',
    heading: 'The request took too long',
    text: 'The request did not arrive in time (the connection may be very slow), so no page could be opened. Try again.',
  },
} as const

/**
 * The raw answer to a request Node's parser refused (`malformed`: a bad request line or header, 400) or that did
 * not arrive in time (`timeout`: 408). Node's own answers to these have no body and none of the security headers.
 */
export function clientErrorResponse(kind: keyof typeof CLIENT_ERROR_PAGES, https = false): string {
  const page = CLIENT_ERROR_PAGES[kind]
  return rawAnswer(page.status, pageHtml({ title: page.heading, text: page.text }), httpsOnlyLines(https))
}

/**
 * Node's `clientError` handler: a head over the limit gets the answer above for its cause (judged from what was
 * read of it: `headOf` gives the connection's record); any other malformed request gets what Node would send (408
 * for a request that timed out, else 400; a socket that is already gone gets nothing).
 */
export function handleClientError(supabaseUrl: string, headOf: (socket: Duplex) => HeadInProgress | undefined) {
  return (error: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy()
      return
    }
    // what was read of the head (the chunk the parser refused is not recorded yet: it is the error's rawPacket)
    const chunks = [...(headOf(socket)?.chunks ?? [])]
    if (error.rawPacket && chunks.at(-1) !== error.rawPacket) chunks.push(error.rawPacket)
    const head = Buffer.concat(chunks)
    let answer: string
    if (error.code === 'HPE_HEADER_OVERFLOW') {
      answer = headerOverflowResponse(supabaseUrl, overflowCause(head), headSaysHttps(head))
    } else {
      // An answer of the app's has begun on this connection (the request timed out while its body was still coming):
      // nothing can be said after it, only the connection closed.
      const current = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage
      if (current?.headersSent) {
        socket.destroy()
        return
      }
      // a request whose body timed out was read whole: its answer has HSTS already if it is due (createWebServer)
      const https = headSaysHttps(head) || current?.hasHeader('strict-transport-security') === true
      answer = clientErrorResponse(error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'timeout' : 'malformed', https)
    }
    socket.end(answer)
  }
}

/**
 * Answers an HTTP/1.1 request without a Host header with the 400 page (RFC 9112 §3.2; as Node would, with the pages'
 * headers) and returns true, or returns false for the other checks and Next.
 */
export function answerMissingHost(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1 || req.headers.host !== undefined) return false
  const page = CLIENT_ERROR_PAGES.malformed
  const body = pageHtml({ title: page.heading, text: page.text })
  res.writeHead(400, { ...PAGE_HEADERS, 'Content-Length': Buffer.byteLength(body), Connection: 'close' })
  res.end(body)
  return true
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
    res.writeHead(204, { ...BODILESS_HEADERS, Allow: ALLOWED_METHODS, 'Content-Length': '0' })
  } else {
    const body = pageHtml({ title: 'This request could not be read', text: 'The request must name a path of this site (this server is not a proxy).' })
    res.writeHead(400, { ...PAGE_HEADERS, 'Content-Length': Buffer.byteLength(body), Connection: 'close' })
    res.end(body)
    return true
  }
  res.end()
  return true
}

/**
 * Answers a request whose path is not valid percent-encoding (`%E0%A4%A`, a lone `%`) with a 400 page and returns
 * true, or returns false for Next to handle. The query is not looked at: Next reads a bad one without failing.
 */
export function answerMalformedPath(req: IncomingMessage, res: ServerResponse): boolean {
  const target = req.url ?? ''
  const end = target.search(/[?#]/)
  try {
    decodeURIComponent(end < 0 ? target : target.slice(0, end))
    return false
  } catch {
    // not valid percent-encoding
  }
  const body = pageHtml({
    title: 'This address is not valid',
    text: `The address of the page you asked for has characters that cannot be read (it may have been cut or mangled when
it was copied), so it could not be opened.`,
  })
  res.writeHead(400, { ...PAGE_HEADERS, 'Content-Length': Buffer.byteLength(body) })
  res.end(body)
  return true
}

/**
 * Answers a path with a trailing slash, doubled slashes or backslashes with a 308 to its plain form (`/sign-in/` →
 * `/sign-in`, `//evil.example/` → `/evil.example`; the query kept) and returns true, or returns false for Next. Next
 * redirects these itself, but before its headers() config: its 308s had none of the headers every page has. Here
 * in one hop (Next took two for `//x/`), and never to another site (the location starts with one slash).
 */
export function answerSlashRedirect(req: IncomingMessage, res: ServerResponse): boolean {
  const target = req.url ?? '/'
  const end = target.indexOf('?')
  const path = end < 0 ? target : target.slice(0, end)
  const plain = path.replace(/[\\/]+/g, '/').replace(/(.)\/$/, '$1')
  if (plain === path) return false
  const location = plain + (end < 0 ? '' : target.slice(end))
  res.writeHead(308, { ...PAGE_HEADERS, Location: location, 'Content-Length': '0' })
  res.end()
  return true
}

/** The methods a static file takes (Next's static file server). */
const FILE_METHODS = 'GET, HEAD'

/**
 * The URL paths of the files in `dir` (public/), as Next serves them: `/favicon.ico`, `/styles/base.css`. Read once
 * at start, so a GET never waits on the disk here; a file added to public/ while the server runs is not known (a
 * method other than GET or HEAD on it gets the pages' answer).
 */
export function publicFilePaths(dir: string): Set<string> {
  let names: string[]
  try {
    names = readdirSync(dir, { recursive: true, encoding: 'utf8' })
  } catch {
    return new Set()
  }
  return new Set(names.filter((name) => statSync(`${dir}/${name}`).isFile()).map((name) => `/${name.split('\\').join('/')}`))
}

/**
 * Answers a request whose method its target does not take and returns true, or returns false for Next to handle.
 * A page takes GET, HEAD and POST (Next renders a page for POST as for GET); a static file (`isStaticFile`, given the
 * decoded path) GET and HEAD. OPTIONS asks which: 204 with `Allow`. Any other method: a 405 page with `Allow` and the
 * headers every page has. GET and HEAD go straight on (nothing is looked up for them). Requests under `/api/` are
 * left to the API, which answers in its own format (a tRPC error with `Allow`).
 */
export function answerPageMethod(req: IncomingMessage, res: ServerResponse, isStaticFile: (path: string) => boolean = () => false): boolean {
  const method = req.method ?? 'GET'
  if (method === 'GET' || method === 'HEAD') return false
  const target = req.url ?? '/'
  if (target === '/api' || target.startsWith('/api/') || target.startsWith('/api?')) return false
  const end = target.search(/[?#]/)
  let file: boolean
  try {
    file = isStaticFile(decodeURIComponent(end < 0 ? target : target.slice(0, end)))
  } catch {
    file = false
  }
  if (method === 'POST' && !file) return false
  const allow = file ? FILE_METHODS : ALLOWED_METHODS
  if (method === 'OPTIONS') {
    res.writeHead(204, { ...BODILESS_HEADERS, Allow: allow, 'Content-Length': '0' })
    res.end()
    return true
  }
  // the method is a token (Node's parser checks it): nothing in it needs escaping in HTML
  const body = pageHtml(
    file
      ? {
          title: `This file cannot be asked for with ${method}`,
          text: `Files of this site (its scripts, styles and images) are fetched with GET; ${method} is not something they answer.`,
        }
      : {
          title: `This page cannot be asked for with ${method}`,
          text: `Pages of this site are opened with GET (a link or the address bar); ${method} is not something they answer.`,
        },
  )
  res.writeHead(405, { ...PAGE_HEADERS, Allow: allow, 'Content-Length': Buffer.byteLength(body) })
  res.end(body)
  return true
}

/** Headers that describe a body, for an answer sent without one. */
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding'])

/**
 * For a request with a Range header: if the answer is a 416 (Next's static file server, for a range past the file's
 * end), it goes out without a body. Next rendered its error page into it, 67 kB of HTML under the file's own
 * Content-Type; its status and `Content-Range: bytes *\/size` are all a client needs (RFC 9110 §15.5.17). Decided
 * when the head is written (by Next's compression, by Node at the first byte of body or at the end).
 */
export function withoutBodyOnRangeRefusal(req: IncomingMessage, res: ServerResponse): void {
  if (req.headers.range === undefined) return
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse
  const write = res.write.bind(res) as (...args: unknown[]) => boolean
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse
  let bodiless = false
  res.writeHead = ((status: unknown, ...rest: unknown[]) => {
    if (status === 416 && !res.headersSent) {
      bodiless = true
      for (const name of res.getHeaderNames()) if (BODY_HEADERS.has(name)) res.removeHeader(name)
      rest = rest.map((arg) =>
        arg && typeof arg === 'object' && !Array.isArray(arg) ? Object.fromEntries(Object.entries(arg).filter(([name]) => !BODY_HEADERS.has(name.toLowerCase()))) : arg,
      )
      res.setHeader('Content-Length', '0')
    }
    return writeHead(status, ...rest)
  }) as ServerResponse['writeHead']
  const callbackOf = (args: unknown[]) => args.find((arg): arg is () => void => typeof arg === 'function')
  res.write = ((...args: unknown[]) => {
    if (!res.headersSent && res.statusCode === 416) res.writeHead(416)
    if (!bodiless) return write(...args)
    const done = callbackOf(args)
    if (done) process.nextTick(done)
    return true
  }) as ServerResponse['write']
  res.end = ((...args: unknown[]) => {
    if (!res.headersSent && res.statusCode === 416) res.writeHead(416)
    if (!bodiless) return end(...args)
    const done = callbackOf(args)
    return done ? end(done) : end()
  }) as ServerResponse['end']
}
