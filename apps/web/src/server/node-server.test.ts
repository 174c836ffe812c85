import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { clearSessionCookies, createWebServer, headSaysHttps, HEADERS_TIMEOUT_MS, MAX_REQUEST_HEADER_BYTES, publicFilePaths, REQUEST_TIMEOUT_MS, sessionCookieName } from './node-server'

const SUPABASE = 'http://127.0.0.1:54321'

/** Sends raw bytes and reads the whole answer (the server closes or ends it). */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(text))
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (answer += chunk))
    socket.on('close', () => resolve(answer))
    socket.on('error', reject)
  })
}

describe('the web server in front of Next', () => {
  let server: http.Server
  let port = 0
  beforeAll(async () => {
    server = createWebServer(SUPABASE, (req, res) => res.end(`next handled ${req.url}`), { publicFiles: new Set(['/favicon.ico', '/styles/base.css', '/a file.txt']) })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  afterAll(
    () =>
      new Promise((resolve) => {
        server.close(resolve)
        server.closeAllConnections()
      }),
  )

  it('answers OPTIONS * with 204 and Allow instead of handing it to Next', async () => {
    const answer = await rawRequest(port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    expect(answer).toMatch(/^HTTP\/1\.1 204 /)
    expect(answer).toMatch(/\r\nAllow: GET, HEAD, POST, OPTIONS\r\n/)
  })

  it('answers a method no page takes (TRACE, DELETE, PUT, PATCH…) with a 405 page and Allow, OPTIONS on a page with 204; the API answers its own', async () => {
    for (const method of ['TRACE', 'DELETE', 'PUT', 'PATCH', 'PROPFIND']) {
      const answer = await rawRequest(port, `${method} /notes HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`)
      const head = answer.slice(0, answer.indexOf('\r\n\r\n'))
      expect([method, head.split('\r\n')[0]]).toEqual([method, 'HTTP/1.1 405 Method Not Allowed'])
      expect(head).toMatch(/\r\nAllow: GET, HEAD, POST, OPTIONS\r\n/)
      expect(head).toMatch(/\r\nContent-Security-Policy: [^\r]*frame-ancestors 'none'/)
      expect(head).toMatch(/\r\nX-Content-Type-Options: nosniff/)
      expect(answer).not.toMatch(/next handled/)
      expect(answer).toMatch(new RegExp(`<h1>This page cannot be asked for with ${method}</h1>`))
    }
    const options = await rawRequest(port, 'OPTIONS /sign-in HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
    expect(options).toMatch(/^HTTP\/1\.1 204 /)
    expect(options).toMatch(/\r\nAllow: GET, HEAD, POST, OPTIONS\r\n/)
    expect(options).not.toMatch(/next handled/)
    for (const method of ['GET', 'HEAD', 'POST']) {
      const answer = await rawRequest(port, `${method} /notes HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`)
      expect([method, answer.split('\r\n')[0]]).toEqual([method, 'HTTP/1.1 200 OK'])
    }
    // the API says in its own words (JSON, a tRPC code) which methods a procedure takes
    for (const method of ['DELETE', 'OPTIONS']) {
      expect(await rawRequest(port, `${method} /api/trpc/notes.create HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toMatch(/next handled \/api\/trpc\/notes\.create/)
    }
  })

  it('answers a static file asked for with any method but GET and HEAD with a 405 page and `Allow: GET, HEAD` (POST included), OPTIONS with 204', async () => {
    for (const target of ['/favicon.ico', '/styles/base.css', '/a%20file.txt', '/_next/static/chunks/main-1234.js', '/favicon.ico?v=2']) {
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const answer = await rawRequest(port, `${method} ${target} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`)
        const head = answer.slice(0, answer.indexOf('\r\n\r\n'))
        const what = `${method} ${target}`
        expect([what, head.split('\r\n')[0]]).toEqual([what, 'HTTP/1.1 405 Method Not Allowed'])
        expect(head, what).toMatch(/\r\nAllow: GET, HEAD\r\n/)
        expect(head, what).toMatch(/\r\nContent-Security-Policy: [^\r]*frame-ancestors 'none'/)
        expect(answer, what).toMatch(new RegExp(`<h1>This file cannot be asked for with ${method}</h1>`))
        expect(answer, what).not.toMatch(/next handled/)
      }
      const options = await rawRequest(port, `OPTIONS ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      expect(options, target).toMatch(/^HTTP\/1\.1 204 [^]*\r\nAllow: GET, HEAD\r\n/)
      for (const method of ['GET', 'HEAD']) {
        expect(await rawRequest(port, `${method} ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), `${method} ${target}`).toMatch(/^HTTP\/1\.1 200 /)
      }
    }
    // a page of the same folder, or a file public/ does not have, is a page
    expect(await rawRequest(port, 'POST /styles/other.css HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')).toMatch(/next handled/)
    expect(await rawRequest(port, 'PUT /favicon.ico.bak HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')).toMatch(/\r\nAllow: GET, HEAD, POST, OPTIONS\r\n/)
  })

  it('lists the files of public/ by the paths Next serves them at', () => {
    const dir = mkdtempSync(join(tmpdir(), 'public-'))
    mkdirSync(join(dir, 'styles', 'empty'), { recursive: true })
    writeFileSync(join(dir, 'favicon.ico'), 'x')
    writeFileSync(join(dir, 'styles', 'base.css'), 'x')
    writeFileSync(join(dir, 'a file.txt'), 'x')
    expect([...publicFilePaths(dir)].sort()).toEqual(['/a file.txt', '/favicon.ico', '/styles/base.css'])
    expect(publicFilePaths(join(dir, 'missing')).size).toBe(0)
    rmSync(dir, { recursive: true })
  })

  it('refuses absolute-form targets with 400 and passes paths on', async () => {
    expect(await rawRequest(port, 'GET http://other.example/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /)
    expect(await rawRequest(port, 'GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/next handled \/ok/)
  })

  it('answers a path that is not valid percent-encoding with a 400 page of its own, with the headers every page has', async () => {
    for (const target of ['/notes/%E0%A4%A', '/notes/100%', '/%zz?next=%2F']) {
      const answer = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      const head = answer.slice(0, answer.indexOf('\r\n\r\n'))
      expect(head).toMatch(/^HTTP\/1\.1 400 /)
      expect(head).toMatch(/\r\nContent-Type: text\/html; charset=utf-8/i)
      expect(head).toMatch(/\r\nContent-Security-Policy: [^\r]*frame-ancestors 'none'/i)
      expect(head).toMatch(/\r\nX-Frame-Options: DENY/i)
      expect(head).toMatch(/\r\nReferrer-Policy: strict-origin-when-cross-origin/i)
      expect(head).toMatch(/\r\nX-Content-Type-Options: nosniff/i)
      expect(answer).toMatch(/<h1>This address is not valid<\/h1>/)
      expect(answer).not.toMatch(/next handled/)
    }
    // an encoded path, and a query Next reads even when it is not valid encoding, go on to Next
    for (const target of ['/notes/caf%C3%A9', '/sign-in?next=%E0%A4%A'])
      expect(await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toContain(`next handled ${target}`)
  })

  it('accepts a 40 kB cookie (a large session) that Node would refuse by default', async () => {
    const cookie = `${sessionCookieName(SUPABASE)}.0=${'a'.repeat(40_000)}`
    const answer = await rawRequest(port, `GET /big HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`)
    expect(answer).toMatch(/^HTTP\/1\.1 200 /)
  })

  it('past the limit answers 431 with a page that explains and clears every session cookie', async () => {
    const cookie = `${sessionCookieName(SUPABASE)}.0=${'a'.repeat(MAX_REQUEST_HEADER_BYTES)}`
    const answer = await rawRequest(port, `GET / HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\n\r\n`)
    expect(answer).toMatch(/^HTTP\/1\.1 431 /)
    for (const line of clearSessionCookies(SUPABASE)) expect(answer).toContain(`\r\nSet-Cookie: ${line}\r\n`)
    expect(answer).toContain('sb-127-auth-token.0=; Path=/; Max-Age=0')
    expect(answer).toContain('sb-127-auth-token.63=; Path=/; Max-Age=0')
    expect(answer).toMatch(/<a href="\/sign-in">Sign in again<\/a>/)
  })

  it('answers a URL past the limit with 414 and keeps the session: a link from any site cannot sign the user out', async () => {
    const cookie = `${sessionCookieName(SUPABASE)}.0=${'s'.repeat(3_000)}`
    for (const target of [`/?x=${'a'.repeat(70_000)}`, `/notes?q=${'a'.repeat(MAX_REQUEST_HEADER_BYTES)}`]) {
      const answer = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\n\r\n`)
      expect(answer).toMatch(/^HTTP\/1\.1 414 URI Too Long\r\n/)
      expect(answer).not.toMatch(/Set-Cookie/i)
      expect(answer).toMatch(/<h1>This address is too long<\/h1>/)
      expect(answer).not.toMatch(/signed out/i)
    }
  })

  it('sends the pages above with the headers every other page has: no framing, no full-URL referrer, no sniffing', async () => {
    const answers = [
      await rawRequest(port, `GET /?x=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
      await rawRequest(port, `GET / HTTP/1.1\r\nHost: x\r\nCookie: ${sessionCookieName(SUPABASE)}=${'a'.repeat(MAX_REQUEST_HEADER_BYTES)}\r\n\r\n`),
      await rawRequest(port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(MAX_REQUEST_HEADER_BYTES)}\r\n\r\n`),
    ]
    for (const answer of answers) {
      const head = answer.slice(0, answer.indexOf('\r\n\r\n'))
      expect(head).toMatch(/^HTTP\/1\.1 (414|431) /)
      expect(head).toContain('\r\nReferrer-Policy: strict-origin-when-cross-origin')
      expect(head).toContain('\r\nX-Frame-Options: DENY')
      expect(head).toContain('\r\nX-Content-Type-Options: nosniff')
      expect(head).toMatch(/\r\nContent-Security-Policy: [^\r]*frame-ancestors 'none'/)
    }
  })

  it('blames a long URL whatever the session, and the session only when the URL is an ordinary one', async () => {
    const name = sessionCookieName(SUPABASE)
    const head = (url: number, cookie: number) =>
      `GET /?x=${'a'.repeat(url)} HTTP/1.1\r\nHost: x\r\nUser-Agent: test\r\nCookie: ${name}.0=${'s'.repeat(cookie)}\r\nAccept: */*\r\n\r\n`
    // a 40 kB link followed by a user with a 30 kB session (8 kB of metadata makes ~28 kB): the link is refused
    const longLink = await rawRequest(port, head(40_000, 30_000))
    expect(longLink).toMatch(/^HTTP\/1\.1 414 /)
    expect(longLink).not.toMatch(/Set-Cookie/i)
    // a user with a 35 kB session (already large) and a 32 kB link: the link is still what is refused
    const largerSession = await rawRequest(port, head(32_000, 35_000))
    expect(largerSession).toMatch(/^HTTP\/1\.1 414 /)
    expect(largerSession).not.toMatch(/Set-Cookie/i)
    // a session that outgrew the limit, with an ordinary search in the URL: the session goes
    const bigSession = await rawRequest(port, head(2_000, 70_000))
    expect(bigSession).toMatch(/^HTTP\/1\.1 431 /)
    expect(bigSession).toContain('\r\nSet-Cookie: sb-127-auth-token.0=; Path=/; Max-Age=0')
  })

  it('answers other oversized headers with 431 and leaves the session alone', async () => {
    const cookie = `${sessionCookieName(SUPABASE)}.0=${'s'.repeat(3_000)}`
    const answer = await rawRequest(port, `GET / HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\nX-Padding: ${'p'.repeat(MAX_REQUEST_HEADER_BYTES)}\r\n\r\n`)
    expect(answer).toMatch(/^HTTP\/1\.1 431 /)
    expect(answer).not.toMatch(/Set-Cookie/i)
    expect(answer).not.toMatch(/signed out/i)
  })

  it('judges each request of a keep-alive connection by its own head', async () => {
    const cookie = `${sessionCookieName(SUPABASE)}.0=${'s'.repeat(3_000)}`
    const small = `GET /first HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\n\r\n`
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(small))
      let text = ''
      socket.setEncoding('utf8')
      socket.on('data', (chunk: string) => {
        text += chunk
        if (text.includes('next handled /first') && !text.includes('HTTP/1.1 414')) socket.end(`GET /?x=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\n\r\n`)
      })
      socket.on('close', () => resolve(text))
      socket.on('error', reject)
    })
    expect(answer).toMatch(/^HTTP\/1\.1 200 /)
    expect(answer).toMatch(/HTTP\/1\.1 414 URI Too Long/)
  })

  it('keeps an idle keep-alive connection open past 6 s, so a client reusing it is answered, not reset', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    const get = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/again', agent }, (res) => {
          res.resume()
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }))
        })
        req.on('error', reject)
      })
    expect(await get()).toEqual({ status: 200, reused: false })
    await new Promise((resolve) => setTimeout(resolve, 6_000))
    expect(await get()).toEqual({ status: 200, reused: true })
    agent.destroy()
  }, 15_000)

  it('answers what Node itself refuses (a malformed request line or header, an absolute-form target) with the headers every page has', async () => {
    const requests = [
      'GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n',
      'GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
      'GET http://other.example/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      // HTTP/1.1 without Host (RFC 9112 §3.2: 400), which Node answered itself before any handler
      'GET / HTTP/1.1\r\nConnection: close\r\n\r\n',
    ]
    for (const request of requests) {
      const answer = await rawRequest(port, request)
      const head = answer.slice(0, answer.indexOf('\r\n\r\n'))
      expect([request, head.split('\r\n')[0]]).toEqual([request, 'HTTP/1.1 400 Bad Request'])
      expect(head, request).toMatch(/\r\nContent-Security-Policy: [^\r]*frame-ancestors 'none'/)
      expect(head, request).toContain('\r\nX-Frame-Options: DENY')
      expect(head, request).toContain('\r\nX-Content-Type-Options: nosniff')
      expect(head, request).toContain('\r\nReferrer-Policy: strict-origin-when-cross-origin')
      expect(head, request).toContain('\r\nCache-Control: no-store')
      expect(answer, request).toMatch(/<h1>[^<]+<\/h1>/)
      expect(answer, request).not.toMatch(/next handled/)
    }
  })

  it('redirects a path with a trailing, doubled or back slash (308, as Next) in one hop, with the headers every page has and never off-site', async () => {
    const cases: Array<[string, string]> = [
      ['/sign-in/', '/sign-in'],
      ['/notes/abc/?q=1', '/notes/abc?q=1'],
      ['/api/trpc/notes.create/', '/api/trpc/notes.create'],
      ['//evil.example/', '/evil.example'],
      ['/\\evil.example', '/evil.example'],
      ['/a//b///', '/a/b'],
    ]
    for (const [target, location] of cases) {
      const answer = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
      const head = answer.slice(0, answer.indexOf('\r\n\r\n'))
      expect([target, head.split('\r\n')[0]]).toEqual([target, 'HTTP/1.1 308 Permanent Redirect'])
      expect(head, target).toContain(`\r\nLocation: ${location}\r\n`)
      expect(head, target).toMatch(/\r\nContent-Security-Policy: [^\r]*frame-ancestors 'none'/)
      expect(head, target).toContain('\r\nX-Frame-Options: DENY')
      expect(head, target).toContain('\r\nX-Content-Type-Options: nosniff')
      expect(head, target).toContain('\r\nReferrer-Policy: strict-origin-when-cross-origin')
      expect(answer, target).not.toMatch(/next handled/)
    }
    for (const target of ['/', '/?next=/x/', '/notes/abc'])
      expect(await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).toContain(`next handled ${target}`)
  })

  it('sends every answer written here with the other headers every page has too (Permissions-Policy, COOP, CORP…)', async () => {
    const requests = [
      'GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n', // 400 from the parser
      'GET / HTTP/1.1\r\nConnection: close\r\n\r\n', // 400, no Host
      'GET http://other.example/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', // 400, absolute-form
      'GET /notes/%E0%A4%A HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', // 400 page
      'DELETE /notes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', // 405
      'GET /sign-in/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', // 308
      'OPTIONS /sign-in HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', // 204, a page
      'OPTIONS /favicon.ico HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', // 204, a static file
      'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', // 204, the server
      `GET /?x=${'a'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, // 414
      `GET / HTTP/1.1\r\nHost: x\r\nCookie: ${sessionCookieName(SUPABASE)}=${'a'.repeat(MAX_REQUEST_HEADER_BYTES)}\r\n\r\n`, // 431
    ]
    for (const request of requests) {
      const answer = await rawRequest(port, request)
      const head = answer.slice(0, answer.indexOf('\r\n\r\n'))
      const line = `${request.slice(0, 40)} → ${head.split('\r\n')[0]}`
      expect(head, line).toMatch(/\r\nPermissions-Policy: camera=\(\), microphone=\(\), geolocation=\(\)/)
      expect(head, line).toMatch(/\r\nContent-Security-Policy: [^\r]*frame-ancestors 'none'/)
      expect(head, line).toContain('\r\nX-Frame-Options: DENY')
      expect(head, line).toContain('\r\nX-Content-Type-Options: nosniff')
      expect(head, line).toContain('\r\nCross-Origin-Opener-Policy: same-origin')
      expect(head, line).toContain('\r\nCross-Origin-Resource-Policy: same-origin')
      expect(head, line).toContain('\r\nX-DNS-Prefetch-Control: off')
    }
  })

  it('sends HSTS behind https (X-Forwarded-Proto: https) on the answers written here too, as Next does on its pages, and never over plain http', async () => {
    const requests = [
      'GET / HTTP/1.1\r\n', // 400, no Host
      'GET http://other.example/ HTTP/1.1\r\nHost: x\r\n', // 400, absolute-form
      'GET /notes/%E0%A4%A HTTP/1.1\r\nHost: x\r\n', // 400 page
      'DELETE /notes HTTP/1.1\r\nHost: x\r\n', // 405
      'OPTIONS /notes HTTP/1.1\r\nHost: x\r\n', // 204
      'GET /sign-in/ HTTP/1.1\r\nHost: x\r\n', // 308
    ]
    for (const request of requests) {
      const secure = await rawRequest(port, `${request}X-Forwarded-Proto: https\r\nConnection: close\r\n\r\n`)
      const head = secure.slice(0, secure.indexOf('\r\n\r\n'))
      const line = `${request.slice(0, 40)} → ${head.split('\r\n')[0]}`
      expect(secure, line).not.toMatch(/next handled/)
      expect(head, line).toContain('\r\nStrict-Transport-Security: max-age=63072000; includeSubDomains')
      const plain = await rawRequest(port, `${request}Connection: close\r\n\r\n`)
      expect(plain.slice(0, plain.indexOf('\r\n\r\n')), line).not.toMatch(/Strict-Transport-Security/i)
    }
  })

  it('sends HSTS behind https on what Node\'s parser refuses too (400, 414, 431), when the proxy\'s X-Forwarded-Proto was read before the refusal', async () => {
    const proto = 'X-Forwarded-Proto: https\r\n'
    const cookie = `Cookie: ${sessionCookieName(SUPABASE)}=${'a'.repeat(MAX_REQUEST_HEADER_BYTES)}\r\n`
    const requests = [
      `GET / HTTP/1.1\r\nHost: x\r\n${proto}Bad Header: y\r\n\r\n`, // 400 from the parser
      `GET /?x=${'a'.repeat(30_000)} HTTP/1.1\r\n${proto}X-Big: ${'a'.repeat(40_000)}\r\n\r\n`, // 414
      `GET / HTTP/1.1\r\nHost: x\r\n${proto}${cookie}\r\n`, // 431, session cleared
      `GET / HTTP/1.1\r\nHost: x\r\n${proto}X-Big: ${'a'.repeat(MAX_REQUEST_HEADER_BYTES)}\r\n\r\n`, // 431
    ]
    const status = (answer: string) => answer.slice(0, answer.indexOf('\r\n'))
    for (const request of requests) {
      const answer = await rawRequest(port, request)
      const head = answer.slice(0, answer.indexOf('\r\n\r\n'))
      const line = `${request.slice(0, 40)} → ${status(head)}`
      expect(head, line).toMatch(/^HTTP\/1\.1 4\d\d /)
      expect(head, line).toContain('\r\nStrict-Transport-Security: max-age=63072000; includeSubDomains')
      const plain = await rawRequest(port, request.replace(proto, ''))
      expect([line, status(plain)]).toEqual([line, status(head)])
      expect(plain.slice(0, plain.indexOf('\r\n\r\n')), line).not.toMatch(/Strict-Transport-Security/i)
    }
  })

  it('reads X-Forwarded-Proto from a head as the pages do: a whole header line of the head, its value exactly https', () => {
    const says = (text: string) => headSaysHttps(Buffer.from(text, 'latin1'))
    expect(says('GET / HTTP/1.1\r\nHost: x\r\nx-forwarded-proto:https\r\n\r\n')).toBe(true)
    expect(says('GET / HTTP/1.1\r\nX-Forwarded-Proto: https\r\nX-Big: aaaa')).toBe(true)
    // cut inside the line, another value, another header, or only in the body
    expect(says('GET / HTTP/1.1\r\nX-Forwarded-Proto: htt')).toBe(false)
    expect(says('GET / HTTP/1.1\r\nX-Forwarded-Proto: https')).toBe(false)
    expect(says('GET / HTTP/1.1\r\nX-Forwarded-Proto: http\r\n\r\n')).toBe(false)
    expect(says('GET / HTTP/1.1\r\nX-Forwarded-Proto: HTTPS\r\n\r\n')).toBe(false)
    expect(says('GET / HTTP/1.1\r\nX-Not-Forwarded-Proto: https\r\n\r\n')).toBe(false)
    expect(says('POST / HTTP/1.1\r\nContent-Length: 40\r\n\r\n\r\nX-Forwarded-Proto: https\r\n')).toBe(false)
  })

  it('gives a request head at most 20 s and a whole request (bodies are at most 1 MiB) 60 s, not Node\'s 300 s', () => {
    expect(HEADERS_TIMEOUT_MS).toBe(20_000)
    expect(REQUEST_TIMEOUT_MS).toBe(60_000)
    expect(server.headersTimeout).toBe(HEADERS_TIMEOUT_MS)
    expect(server.requestTimeout).toBe(REQUEST_TIMEOUT_MS)
  })

  it('answers a head or a body that arrives too slowly with 408 and the headers every page has, and frees the connection', async () => {
    const slow = createWebServer(SUPABASE, (req, res) => {
      req.resume()
      req.on('end', () => res.end('next handled'))
    }, { headersTimeoutMs: 500, requestTimeoutMs: 1_000, connectionsCheckingIntervalMs: 100 })
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve))
    const slowPort = (slow.address() as AddressInfo).port
    /** Sends `first`, then one byte of `drip` every 150 ms; resolves with what came back and when the server closed. */
    const trickle = (first: string, drip: string) =>
      new Promise<{ answer: string; ms: number }>((resolve, reject) => {
        const started = Date.now()
        const socket = net.connect(slowPort, '127.0.0.1', () => socket.write(first))
        let answer = ''
        let sent = 0
        const timer = setInterval(() => {
          if (socket.writable && sent < drip.length) socket.write(drip[sent++]!)
        }, 150)
        socket.setEncoding('utf8')
        socket.on('data', (chunk: string) => (answer += chunk))
        socket.on('close', () => {
          clearInterval(timer)
          resolve({ answer, ms: Date.now() - started })
        })
        socket.on('error', reject)
      })
    try {
      const slowHead = await trickle('GET / HTTP/1.1\r\nHost: x\r\n', 'X-Slow: ' + 'a'.repeat(100))
      const slowBody = await trickle(`POST /api/trpc/notes.create HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n`, 'b'.repeat(100))
      for (const { answer, ms } of [slowHead, slowBody]) {
        const head = answer.slice(0, answer.indexOf('\r\n\r\n'))
        expect(head.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout')
        expect(head).toMatch(/\r\nContent-Security-Policy: [^\r]*frame-ancestors 'none'/)
        expect(head).toContain('\r\nX-Frame-Options: DENY')
        expect(head).toContain('\r\nX-Content-Type-Options: nosniff')
        expect(answer).not.toMatch(/next handled/)
        expect(ms).toBeLessThan(3_000)
        expect(head).not.toMatch(/Strict-Transport-Security/i)
      }
      // behind https, both say so with HSTS (the slow head's proxy header was read before the timeout)
      const proto = 'X-Forwarded-Proto: https\r\n'
      const secureHead = await trickle(`GET / HTTP/1.1\r\nHost: x\r\n${proto}`, 'X-Slow: ' + 'a'.repeat(100))
      const secureBody = await trickle(`POST /api/trpc/notes.create HTTP/1.1\r\nHost: x\r\n${proto}Content-Length: 100\r\n\r\n`, 'b'.repeat(100))
      for (const { answer } of [secureHead, secureBody]) {
        expect(answer).toMatch(/^HTTP\/1\.1 408 [^]*\r\nStrict-Transport-Security: max-age=63072000; includeSubDomains\r\n/)
      }
    } finally {
      await new Promise((resolve) => {
        slow.close(resolve)
        slow.closeAllConnections()
      })
    }
  })

  it('names the cookie after the first label of the Supabase host, as supabase-js does', () => {
    expect(sessionCookieName('https://abcdefgh.supabase.co')).toBe('sb-abcdefgh-auth-token')
    expect(sessionCookieName(SUPABASE)).toBe('sb-127-auth-token')
  })
})
