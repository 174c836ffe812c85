/**
 * The list's state lives in the URL (`/?sort=title&dir=asc&page=2&q=milk`), so reload, Back and shared links keep
 * it. Defaults are left out of the URL; anything unreadable falls back to its default instead of failing.
 */
import { defaultDirFor, NOTE_SORTS, NOTES_PAGE_SIZE, NOTES_QUERY_MAX, type NoteSort, type SortDir } from './rules'

export interface ListParams {
  sort: NoteSort
  dir: SortDir
  page: number
  q: string
}

export const DEFAULT_LIST_PARAMS: ListParams = { sort: 'updated_at', dir: 'desc', page: 1, q: '' }

type QueryValue = string | string[] | undefined

const first = (value: QueryValue) => (Array.isArray(value) ? value[0] : value)

/** Reads the list state from Next's `router.query`. */
export function parseListParams(query: Record<string, QueryValue>): ListParams {
  const sortValue = first(query.sort)
  const sort: NoteSort = NOTE_SORTS.includes(sortValue as NoteSort) ? (sortValue as NoteSort) : DEFAULT_LIST_PARAMS.sort
  const dirValue = first(query.dir)
  const dir: SortDir = dirValue === 'asc' || dirValue === 'desc' ? dirValue : defaultDirFor(sort)
  const pageValue = Number(first(query.page))
  const page = Number.isInteger(pageValue) && pageValue >= 1 && pageValue <= 1_000_000 ? pageValue : 1
  const q = (first(query.q) ?? '').slice(0, NOTES_QUERY_MAX)
  return { sort, dir, page, q }
}

/** The query string for a list state, without the defaults (so `/` is the plain first page). */
export function listQuery(params: ListParams): Record<string, string> {
  const query: Record<string, string> = {}
  if (params.sort !== DEFAULT_LIST_PARAMS.sort) query.sort = params.sort
  if (params.dir !== defaultDirFor(params.sort)) query.dir = params.dir
  if (params.page !== 1) query.page = String(params.page)
  if (params.q.trim() !== '') query.q = params.q
  return query
}

/** The notes.list input for a list state. */
export function listInput(params: ListParams) {
  const q = params.q.trim()
  return {
    sort: params.sort,
    dir: params.dir,
    page: params.page,
    pageSize: NOTES_PAGE_SIZE,
    ...(q ? { q } : {}),
  }
}

/**
 * The page buttons to show: always the first and last, the current one and its neighbours, gaps as null.
 * 1 2 3 4 5 6 7 for few pages; 1 … 4 5 6 … 13 for many.
 */
export function pageItems(current: number, count: number): (number | null)[] {
  if (count <= 7) return Array.from({ length: count }, (_, i) => i + 1)
  const pages = new Set([1, count, current - 1, current, current + 1])
  if (current <= 3) [2, 3, 4].forEach((p) => pages.add(p))
  if (current >= count - 2) [count - 3, count - 2, count - 1].forEach((p) => pages.add(p))
  const sorted = [...pages].filter((p) => p >= 1 && p <= count).sort((a, b) => a - b)
  const items: (number | null)[] = []
  sorted.forEach((p, i) => {
    const previous = sorted[i - 1]
    if (previous !== undefined && p - previous > 1) items.push(p - previous === 2 ? p - 1 : null)
    items.push(p)
  })
  return items
}
