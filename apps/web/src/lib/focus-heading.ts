import Router from 'next/router'
import { useEffect } from 'react'

/**
 * Focus to the page's heading (`main h1`, focusable by script only) when focus is on <body>: after a client-side route
 * change, or after the element that had focus went with the old page, a keyboard user goes on from the top of the new
 * page rather than from nowhere, and a screen reader reads where they are (ADR 132, ADR 161). The page's code may
 * still be on its way (its own chunk): the heading is focused when it shows, within a few seconds, unless the user
 * (or the page itself, e.g. a form's first field) has put focus somewhere meanwhile.
 */
export function focusMainHeading(): void {
  const focusIt = () => {
    const active = document.activeElement
    if (active && active !== document.body) return true
    const heading = document.querySelector<HTMLElement>('main h1')
    if (heading) {
      heading.tabIndex = -1
      heading.focus({ preventScroll: true })
    }
    return Boolean(heading)
  }
  if (focusIt()) return
  const observer = new MutationObserver(() => focusIt() && observer.disconnect())
  observer.observe(document.body, { childList: true, subtree: true })
  setTimeout(() => observer.disconnect(), 5_000)
}

/**
 * After each client-side route change to a page (not a shallow change of the URL alone), focus goes to the new page's
 * heading if the element that had it went with the old page (ADR 161). Focus that is still somewhere (the header's
 * link, a field the page focused itself) stays there.
 */
export function useFocusHeadingOnRouteChange(): void {
  useEffect(() => {
    const complete = (_url: string, { shallow }: { shallow: boolean }) => {
      if (!shallow) focusMainHeading()
    }
    Router.events.on('routeChangeComplete', complete)
    return () => Router.events.off('routeChangeComplete', complete)
  }, [])
}
