import { describe, expect, it } from 'vitest'

import { mfaPathFor, resolveNext, safeNextPath, signInPathFor } from './safe-next'

describe('safeNextPath', () => {
  it.each([
    ['/', '/'],
    ['/settings/account', '/settings/account'],
    ['/notes?page=2#top', '/notes?page=2#top'],
    ['/a/../settings', '/settings'],
    ['/search?q=%2F%2Fnot-a-host', '/search?q=%2F%2Fnot-a-host'],
  ])('accepts the same-origin path %s', (input, expected) => {
    expect(safeNextPath(input)).toBe(expected)
  })

  it.each([
    '//evil.example',
    '//evil.example/path',
    '/\\evil.example',
    '\\\\evil.example',
    'https://evil.example',
    'http:evil.example',
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    'data:text/html,hi',
    'evil.example',
    'settings',
    '%2F%2Fevil.example',
    '%2f%2fevil.example',
    '/%5Cevil.example',
    '%2F%5Cevil.example',
    '%252F%252Fevil.example',
    '/\tevil',
    '/\n/evil.example',
    ' /settings',
    '/%0d%0aSet-Cookie:x=1',
    '%E0%A4%A',
    '',
  ])('rejects %j', (input) => {
    expect(safeNextPath(input)).toBeNull()
  })

  // URL parsing collapses dot segments after the checks on the raw text: the result must be checked too
  it.each(['/.//evil.com', '/..//evil.com', '/%2e//evil.com', '/%2E%2E//evil.com', '/a/..//evil.com', '/a/%2e%2e//evil.com', '/./\\evil.com', '/.%2F/evil.com', '/.%2f%2fevil.com'])(
    'never returns a protocol-relative path for %j',
    (input) => {
      expect(safeNextPath(input)).toBeNull()
    },
  )

  it('rejects values that are not strings or are absurdly long', () => {
    expect(safeNextPath(undefined)).toBeNull()
    expect(safeNextPath(['/a', '/b'])).toBeNull()
    expect(safeNextPath(`/${'a'.repeat(3000)}`)).toBeNull()
  })
})

describe('resolveNext / signInPathFor', () => {
  it('falls back for hostile values and keeps safe ones', () => {
    expect(resolveNext('//evil.example')).toBe('/')
    expect(resolveNext('https://evil.example', '/settings/account')).toBe('/settings/account')
    expect(resolveNext('/settings/account')).toBe('/settings/account')
  })

  it('builds the sign-in URL with an encoded next', () => {
    expect(signInPathFor('/settings/account')).toBe('/sign-in?next=%2Fsettings%2Faccount')
    expect(signInPathFor('/notes?page=2')).toBe('/sign-in?next=%2Fnotes%3Fpage%3D2')
    expect(signInPathFor('/')).toBe('/sign-in')
    expect(signInPathFor('//evil.example')).toBe('/sign-in')
  })
})

describe('mfaPathFor', () => {
  it('keeps a safe path as next, drops hostile or trivial ones', () => {
    expect(mfaPathFor('/settings/security?tab=1')).toBe('/mfa?next=%2Fsettings%2Fsecurity%3Ftab%3D1')
    expect(mfaPathFor('/')).toBe('/mfa')
    expect(mfaPathFor('//evil.example')).toBe('/mfa')
  })
})
