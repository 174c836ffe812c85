import Router from 'next/router'

import { mfaPathFor } from '../../lib/safe-next'
import { toast } from '../toast'

/**
 * True for an API error the server marks as "finish two-factor sign-in first" (`data.secondFactorRequired`, see
 * server/second-factor.ts): the session is at aal1 and the user has a verified factor. Retrying cannot help; /mfa can.
 */
export function isSecondFactorRequired(error: unknown): boolean {
  return (error as { data?: { secondFactorRequired?: unknown } } | null)?.data?.secondFactorRequired === true
}

/** Where to finish two-factor sign-in and come back to this very page: `/mfa?next=<current path>`. */
export function secondFactorPath(): string {
  return mfaPathFor(Router.asPath)
}

/**
 * What to say about a failed API call: `message` (the server's, by default), except for a call that got no answer at
 * all (offline, a dropped connection) — fetch's TypeError, which tRPC wraps without `data`, and whose message ("Failed
 * to fetch", "Load failed"…) is the browser's, not for people: it is said as the server says an unreachable backend —
 * and for an answer that is not JSON at all (a gateway's HTML error page while the app restarts behind it): the JSON
 * parser's SyntaxError, whose message (`Unexpected token '<', "<html>…" is not valid JSON`) is not for people either —
 * nor JSON that is not tRPC's (a proxy's or gateway's JSON error): tRPC's client says "Unable to transform response
 * from server" (its TransformResultError, wrapped without `data`), said here as for the HTML page.
 */
export function readableApiError(error: { message: string }, message: string = error.message): string {
  const { cause, data } = error as { cause?: unknown; data?: unknown }
  if (error instanceof TypeError || (cause instanceof TypeError && !data)) return "Can't reach the server. Check your connection and try again."
  if (error instanceof SyntaxError || (cause instanceof SyntaxError && !data) || (isUntransformable(cause) && !data))
    return 'The server is not answering properly just now. Try again in a moment.'
  return message
}

/** tRPC's client's own error for an answer that is JSON but not a tRPC response (its class name is not kept in a build). */
const UNTRANSFORMABLE = 'Unable to transform response from server'

function isUntransformable(cause: unknown): boolean {
  return cause instanceof Error && cause.message === UNTRANSFORMABLE
}

/**
 * The error toast of a failed API call: the title, the server's message and, when the session must finish two-factor
 * sign-in first, an "Enter a code" link to /mfa that comes back here. A link, not an automatic move: what the user
 * typed stays on the page, and a page that guards unsaved input asks before the link leaves it.
 */
export function toastApiError(title: string, error: { message: string }, message?: string): number {
  return toast.error(
    title,
    readableApiError(error, message),
    isSecondFactorRequired(error) ? { action: { label: 'Enter a code', href: secondFactorPath() } } : {},
  )
}
