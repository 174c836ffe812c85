import { breakpoints } from '../ui/breakpoints'
import { readCookie } from './guest'

/**
 * Whether the browser's last page was at least `md` wide, which the server cannot otherwise know when it renders the
 * notes list (a table from md up, cards below). An inline `<head>` script writes it on every page (`_document`), so
 * the next server render of `/` sends only the shape that fits instead of both (ADR 056). Not personal data: one of two
 * words, first-party, readable by the page.
 */
export const VIEWPORT_COOKIE = 'foyer-vw'

export type ViewportHint = 'wide' | 'narrow'

/** The width from which the list is a table (`(min-width: md)`, as the CSS modules' media queries). */
export const WIDE_MIN_PX = breakpoints.md

/**
 * The inline script that writes the cookie (a year, whole site, Lax; Secure on https). Self-contained: it is
 * serialised as a string and its hash is in the Content-Security-Policy (next.config). It never throws (cookies off).
 */
export function viewportHintScript(): string {
  const query = JSON.stringify(`(min-width: ${WIDE_MIN_PX}px)`)
  return (
    `(function(){try{document.cookie=${JSON.stringify(`${VIEWPORT_COOKIE}=`)}+(matchMedia(${query}).matches?'wide':'narrow')` +
    `+';path=/;max-age=31536000;samesite=lax'+(location.protocol==='https:'?';secure':'')}catch(e){}})()`
  )
}

/** The hint in a request's Cookie header, or null (none, or a value that is neither word). */
export function viewportHintOf(cookieHeader: string | undefined): ViewportHint | null {
  const value = readCookie(cookieHeader, VIEWPORT_COOKIE)
  return value === 'wide' || value === 'narrow' ? value : null
}
