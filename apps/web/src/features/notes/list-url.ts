/**
 * The last notes-list URL the user saw (sort, page, search), so "All notes" on a note's page and the return after
 * a delete go back to the same place. Browser memory only: a reload starts from `/`.
 */
let lastListUrl = '/'

export function rememberListUrl(url: string): void {
  if (url === '/' || url.startsWith('/?')) lastListUrl = url
}

export const listUrl = () => lastListUrl
