// Readable messages for the two guest-only calls: starting a guest session (welcome page) and adding an email and
// password (account page). Loaded only by those (through the auth index), not by every page.
import { readableAuthError, type ReadableAuthError } from './auth-errors'

/** "30 seconds", "2 minutes": how long the server asked to wait, read from its message; undefined when it does not say. */
export function waitFromMessage(message: unknown): string | undefined {
  if (typeof message !== 'string') return undefined
  const match = /(\d+)\s*(second|minute|hour)s?/i.exec(message)
  if (!match) return undefined
  const amount = Number(match[1])
  const unit = (match[2] as string).toLowerCase()
  return `${amount} ${unit}${amount === 1 ? '' : 's'}`
}

/** Why a guest session could not be started, in words (the welcome page shows it beside the button). */
export function readableGuestStartError(error: unknown): string {
  const e = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; status?: unknown; message?: unknown }
  if (e.code === 'anonymous_provider_disabled') {
    return 'Trying Foyer without an account is switched off on this server. Create an account instead — it takes a few seconds.'
  }
  if (e.code === 'over_request_rate_limit' || e.status === 429) {
    const wait = waitFromMessage(e.message)
    // Supabase Auth (and localbase) count guest sessions per network per hour; the 429's Retry-After header does not
    // reach supabase-js errors, so the wait is named only when the message gives it.
    return wait
      ? `Too many guest sessions were started from your network. Try again in ${wait}, or create an account.`
      : 'Too many guest sessions were started from your network in the last hour. Try again later, or create an account.'
  }
  return readableAuthError(error).message
}

/** A refused "add email and password", with the field it belongs beside. */
export function readableGuestSaveError(error: unknown): ReadableAuthError {
  const e = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown }
  if (e.code === 'email_exists' || e.code === 'user_already_exists') {
    return {
      message: 'This email already belongs to an account. Use another address: signing in to that account would leave this guest session and its notes behind.',
      field: 'email',
    }
  }
  return readableAuthError(error)
}
