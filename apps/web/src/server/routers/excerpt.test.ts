import { describe, expect, it } from 'vitest'

import { seededRandom } from '../../lib/seeded-random'
import { EXCERPT_LENGTH, excerptOf } from './notes'

/** The excerpt's definition, written the plain way: flatten the whole body, count code points. */
function byDefinition(body: string | null): string | null {
  if (body === null) return null
  const flat = body.replace(/\s+/g, ' ').trim()
  if (flat === '') return null
  const chars = [...flat]
  return chars.length <= EXCERPT_LENGTH ? flat : `${chars.slice(0, EXCERPT_LENGTH - 1).join('').trimEnd()}…`
}

const PIECES = ['a', 'word ', ' ', '  ', '\n', '\t\t', '\u00a0', '\ufeff', '\u3000', '\u200a', '\v', '\u1680', '\u200b', 'é', '😀', '👩‍👩‍👧', '\ud83d', '\ude00', '…', '日本', '\u2028', '.']

describe('list excerpts', () => {
  it('are the flattened body when short, cut to 159 characters and "…" when longer', () => {
    expect(excerptOf(null)).toBeNull()
    expect(excerptOf('   \n\t ')).toBeNull()
    expect(excerptOf('  Hello\n\n  world  ')).toBe('Hello world')
    expect(excerptOf('x'.repeat(EXCERPT_LENGTH))).toBe('x'.repeat(EXCERPT_LENGTH))
    expect(excerptOf('x'.repeat(EXCERPT_LENGTH + 1))).toBe(`${'x'.repeat(EXCERPT_LENGTH - 1)}…`)
    // characters, not UTF-16 units: 160 emoji are 320 units and still whole
    expect(excerptOf('😀'.repeat(EXCERPT_LENGTH))).toBe('😀'.repeat(EXCERPT_LENGTH))
    expect(excerptOf('😀'.repeat(EXCERPT_LENGTH + 1))).toBe(`${'😀'.repeat(EXCERPT_LENGTH - 1)}…`)
    // a 20,000-character body, and one whose first thousands of characters are spaces
    expect(excerptOf(`${'word '.repeat(4000)}`)).toBe(byDefinition(`${'word '.repeat(4000)}`))
    expect(excerptOf(`${' '.repeat(5000)}${'x'.repeat(200)}`)).toBe(`${'x'.repeat(EXCERPT_LENGTH - 1)}…`)
    expect(excerptOf(`${'a \n'.repeat(300)}`)).toBe(byDefinition(`${'a \n'.repeat(300)}`))
    // a body whose first 640 UTF-16 units flatten to exactly 160 characters, or 160 and half an emoji, and go on
    expect(excerptOf(`${' '.repeat(480)}${'x'.repeat(160)}yyy`)).toBe(`${'x'.repeat(EXCERPT_LENGTH - 1)}…`)
    expect(excerptOf(`${' '.repeat(479)}${'x'.repeat(160)}😀`)).toBe(`${'x'.repeat(EXCERPT_LENGTH - 1)}…`)
  })

  it('equal the plain definition on 5,000 generated bodies (spaces, surrogate pairs and halves, around every cut)', () => {
    const next = seededRandom(20261126)
    for (let n = 0; n < 5000; n++) {
      const parts: string[] = []
      const length = Math.floor(next() * 900)
      for (let i = 0; i < length; i++) parts.push(PIECES[Math.floor(next() * PIECES.length)] ?? 'a')
      const body = parts.join('')
      expect(excerptOf(body), JSON.stringify(body)).toBe(byDefinition(body))
    }
  })
})
