import { describe, expect, it } from 'vitest'

import { listInput, listQuery, pageItems, parseListParams } from './list-params'
import { charLength, pageRange, titleSearchPattern } from './rules'
import { noteInputSchema } from './schema'
import { checkNote } from './NoteForm'

describe('list state in the URL', () => {
  it('reads defaults from an empty query and writes none back', () => {
    const params = parseListParams({})
    expect(params).toEqual({ sort: 'updated_at', dir: 'desc', page: 1, q: '' })
    expect(listQuery(params)).toEqual({})
  })

  it('round-trips sort, dir, page and search', () => {
    const params = parseListParams({ sort: 'title', dir: 'desc', page: '3', q: 'milk & honey' })
    expect(params).toEqual({ sort: 'title', dir: 'desc', page: 3, q: 'milk & honey' })
    expect(listQuery(params)).toEqual({ sort: 'title', dir: 'desc', page: '3', q: 'milk & honey' })
    expect(parseListParams(listQuery(params))).toEqual(params)
  })

  it('gives each column its natural direction: titles A→Z, dates newest first', () => {
    expect(parseListParams({ sort: 'title' }).dir).toBe('asc')
    expect(parseListParams({ sort: 'created_at' }).dir).toBe('desc')
    expect(listQuery({ sort: 'title', dir: 'asc', page: 1, q: '' })).toEqual({ sort: 'title' })
  })

  it('falls back to defaults for hostile or broken values', () => {
    expect(parseListParams({ sort: 'user_id', dir: 'sideways', page: '-2' })).toEqual(parseListParams({}))
    expect(parseListParams({ page: '2.5' }).page).toBe(1)
    expect(parseListParams({ page: ['4', '5'] }).page).toBe(4)
    expect(parseListParams({ q: 'x'.repeat(500) }).q).toHaveLength(200)
  })

  it('sends a trimmed search and no empty one', () => {
    expect(listInput(parseListParams({ q: '  ' }))).not.toHaveProperty('q')
    expect(listInput(parseListParams({ q: ' tea ' })).q).toBe('tea')
  })
})

describe('pagination', () => {
  it('numbers the rows a page shows: "21–40 of 245"', () => {
    expect(pageRange(2, 20, 245)).toEqual({ from: 21, to: 40 })
    expect(pageRange(13, 20, 245)).toEqual({ from: 241, to: 245 })
    expect(pageRange(1, 20, 0)).toBeNull()
    expect(pageRange(14, 20, 245)).toBeNull()
  })

  it('shows every page when few, and the ends plus neighbours when many', () => {
    expect(pageItems(1, 3)).toEqual([1, 2, 3])
    expect(pageItems(1, 13)).toEqual([1, 2, 3, 4, null, 13])
    expect(pageItems(7, 13)).toEqual([1, null, 6, 7, 8, null, 13])
    expect(pageItems(13, 13)).toEqual([1, null, 10, 11, 12, 13])
    expect(pageItems(4, 13)).toEqual([1, 2, 3, 4, 5, null, 13]) // a gap of one page shows the page, not "…"
  })
})

describe('note rules', () => {
  it('counts characters as PostgreSQL does (an emoji is one)', () => {
    expect(charLength('🙂🙂')).toBe(2)
    expect(noteInputSchema.safeParse({ title: '🙂'.repeat(200) }).success).toBe(true)
    expect(noteInputSchema.safeParse({ title: '🙂'.repeat(201) }).success).toBe(false)
  })

  it('explains an empty or whitespace title', () => {
    const result = noteInputSchema.safeParse({ title: '   ' })
    expect(result.success).toBe(false)
    expect(result.error?.issues[0]?.message).toBe('Give the note a title.')
  })

  it('gives the form the same answers as the server schema', () => {
    for (const title of ['', '   ', 'ok', '  padded  ', 'x'.repeat(200), 'x'.repeat(201), '🙂'.repeat(201)]) {
      const server = noteInputSchema.safeParse({ title })
      const form = checkNote({ title, body: '', pinned: false })
      expect(form.title ?? null).toBe(server.success ? null : server.error.issues[0]?.message)
    }
    const long = checkNote({ title: 'ok', body: 'x'.repeat(20_001), pinned: false })
    expect(long.body).toBe(noteInputSchema.safeParse({ title: 'ok', body: 'x'.repeat(20_001) }).error?.issues[0]?.message)
  })

  it('escapes LIKE wildcards so a search matches literally', () => {
    expect(titleSearchPattern('100%_a\\b')).toBe('%100\\%\\_a\\\\b%')
    expect(titleSearchPattern('a*b')).toBe('%a_b%')
  })
})
