import http from 'node:http'
import type { AddressInfo } from 'node:net'
import net from 'node:net'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { clearSessionCookies, createWebServer, MAX_REQUEST_HEADER_BYTES, sessionCookieName } from './node-server'

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
    server = createWebServer(SUPABASE, (req, res) => res.end(`next handled ${req.url}`))
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

  it('refuses absolute-form targets with 400 and passes paths on', async () => {
    expect(await rawRequest(port, 'GET http://other.example/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /)
    expect(await rawRequest(port, 'GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).toMatch(/next handled \/ok/)
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

  it('names the cookie after the first label of the Supabase host, as supabase-js does', () => {
    expect(sessionCookieName('https://abcdefgh.supabase.co')).toBe('sb-abcdefgh-auth-token')
    expect(sessionCookieName(SUPABASE)).toBe('sb-127-auth-token')
  })
})
