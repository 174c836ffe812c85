import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'

import { VIEWPORT_COOKIE, viewportHintOf, viewportHintScript, WIDE_MIN_PX } from './viewport-hint'

/** Runs the head script with a window `width` px wide; the cookie it writes, or what it threw. */
function run(width: number, protocol = 'http:', cookiesOff = false): string {
  let written = ''
  const document = {}
  Object.defineProperty(document, 'cookie', {
    set(value: string) {
      if (cookiesOff) throw new Error('SecurityError: cookies are disabled')
      written = value
    },
  })
  runInNewContext(viewportHintScript(), {
    document,
    location: { protocol },
    matchMedia: (query: string) => ({ matches: query === `(min-width: ${WIDE_MIN_PX}px)` && width >= WIDE_MIN_PX }),
  })
  return written
}

describe('viewport hint', () => {
  it('the head script writes the width class of the window, for a year, site-wide, Lax (Secure on https)', () => {
    expect(run(1280)).toBe(`${VIEWPORT_COOKIE}=wide;path=/;max-age=31536000;samesite=lax`)
    expect(run(WIDE_MIN_PX)).toMatch(/=wide;/)
    expect(run(WIDE_MIN_PX - 1)).toMatch(/=narrow;/)
    expect(run(390, 'https:')).toBe(`${VIEWPORT_COOKIE}=narrow;path=/;max-age=31536000;samesite=lax;secure`)
  })

  it('the head script never throws (cookies refused)', () => {
    expect(run(1280, 'http:', true)).toBe('')
  })

  it('the server reads the hint from the Cookie header, and nothing else as one', () => {
    expect(viewportHintOf(undefined)).toBeNull()
    expect(viewportHintOf('')).toBeNull()
    expect(viewportHintOf(`${VIEWPORT_COOKIE}=wide`)).toBe('wide')
    expect(viewportHintOf(`sb-127-auth-token=base64-eyJ=; ${VIEWPORT_COOKIE}=narrow; other=1`)).toBe('narrow')
    expect(viewportHintOf(`${VIEWPORT_COOKIE}=huge`)).toBeNull()
    expect(viewportHintOf(`x${VIEWPORT_COOKIE}=wide`)).toBeNull()
    expect(viewportHintOf(`${VIEWPORT_COOKIE}`)).toBeNull()
  })
})
