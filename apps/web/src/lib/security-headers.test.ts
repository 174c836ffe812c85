import { createHash } from 'node:crypto'

import { describe, expect, it } from 'vitest'

import { contentSecurityPolicy, scriptHashSource, securityHeaders } from './security-headers'

describe('security headers', () => {
  const options = { supabaseUrl: 'https://abc.supabase.co', inlineScripts: ['console.log(1)'], dev: false }

  it('allows each inline script by the SHA-256 of its exact text, and nothing else inline', () => {
    const expected = createHash('sha256').update('console.log(1)').digest('base64')
    expect(scriptHashSource('console.log(1)')).toBe(`'sha256-${expected}'`)
    const csp = contentSecurityPolicy(options)
    expect(csp).toContain(`script-src 'self' 'sha256-${expected}'`)
    expect(csp).not.toMatch(/script-src[^;]*unsafe/)
  })

  it('lets the browser reach the Supabase origin over https and wss, and nothing else off-site', () => {
    const csp = contentSecurityPolicy(options)
    expect(csp).toContain("connect-src 'self' https://abc.supabase.co wss://abc.supabase.co")
    expect(contentSecurityPolicy({ ...options, supabaseUrl: 'http://127.0.0.1:54321' })).toContain(
      "connect-src 'self' http://127.0.0.1:54321 ws://127.0.0.1:54321",
    )
  })

  it('loads pictures from the backend only from the public avatars bucket (ADR 037), and previews from blob:', () => {
    const csp = contentSecurityPolicy(options)
    expect(csp).toContain("img-src 'self' data: blob: https://abc.supabase.co/storage/v1/object/public/avatars/;")
    expect(csp).not.toMatch(/img-src[^;]*supabase\.co(;| )/)
  })

  it('adds the avatars’ rendered sizes only when the backend renders images (ADR 046)', () => {
    expect(contentSecurityPolicy(options)).not.toContain('/render/image/')
    expect(contentSecurityPolicy({ ...options, imageTransformation: true })).toContain(
      "img-src 'self' data: blob: https://abc.supabase.co/storage/v1/object/public/avatars/ https://abc.supabase.co/storage/v1/render/image/public/avatars/;",
    )
  })

  it("relaxes the script policy only for Next's development runtime", () => {
    expect(contentSecurityPolicy({ ...options, dev: true })).toMatch(/script-src 'self' 'unsafe-inline' 'unsafe-eval'/)
    expect(contentSecurityPolicy(options)).not.toMatch(/script-src[^;]*unsafe/)
    expect(securityHeaders(options).map((h) => h.key)).toContain('X-Content-Type-Options')
  })

  it('forbids framing, plugins and base-tag hijacks', () => {
    const csp = contentSecurityPolicy(options)
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).toContain("object-src 'none'")
    expect(csp).toContain("base-uri 'none'")
    const names = securityHeaders(options).map((h) => h.key)
    expect(names).toEqual(expect.arrayContaining(['X-Frame-Options', 'X-Content-Type-Options', 'Referrer-Policy', 'Permissions-Policy', 'Cross-Origin-Opener-Policy']))
  })
})
