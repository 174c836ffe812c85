/** Pure helpers for the MFA screens (unit-tested). */

import { readableFactorError } from './factor-errors'

export interface FactorSummary {
  id: string
  friendly_name?: string | undefined
  factor_type: string
  status: string
  created_at: string
}

/** The first free "Authenticator app", "Authenticator app 2", … — the server refuses duplicate names. */
export function nextFactorName(factors: ReadonlyArray<Pick<FactorSummary, 'friendly_name'>>): string {
  const taken = new Set(factors.map((f) => f.friendly_name ?? ''))
  for (let n = 1; ; n++) {
    const name = n === 1 ? 'Authenticator app' : `Authenticator app ${n}`
    if (!taken.has(name)) return name
  }
}

/**
 * supabase-js hands the server's SVG over as `data:image/svg+xml;utf-8,<svg…>` (unencoded, so a `#` in it would
 * end the URL). Re-encoded here into a data URL an <img> always reads.
 */
export function qrImageSrc(qr: string): string {
  const svg = qr.startsWith('data:') ? qr.slice(qr.indexOf(',') + 1) : qr
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`
}

/** The secret in groups of four, easier to type; spaces are ignored by authenticator apps. */
export function groupSecret(secret: string): string {
  return secret.replace(/(.{4})/g, '$1 ').trim()
}

/** A code as typed ("123 456", "123-456") → its six digits, or null when it is not six digits. */
export function normaliseCode(value: string): string | null {
  const digits = value.replace(/[\s-]/g, '')
  return /^\d{6}$/.test(digits) ? digits : null
}

export function factorStatusLabel(status: string): string {
  return status === 'verified' ? 'Active' : 'Not verified'
}

export function formatCreated(iso: string, locale?: string): string {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  return date.toLocaleDateString(locale ?? 'en-GB', { year: 'numeric', month: 'short', day: 'numeric' })
}

export interface RemoveFactorError {
  message: string
  /** The session is below aal2: the user must enter a code at /mfa before an active factor can go. */
  needsCode: boolean
}

/**
 * Why removing a factor failed, in words. The auth server refuses to remove a verified factor from a session
 * below aal2 (`insufficient_aal`, HTTP 422) — e.g. right after removing the authenticator this session was
 * verified with, which takes the session back to aal1 while another app is still active.
 */
export function removeFactorError(error: unknown): RemoveFactorError {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined
  if (code === 'insufficient_aal') {
    return {
      message: 'Removing an active authenticator needs a code from one of your authenticator apps first.',
      needsCode: true,
    }
  }
  return { message: readableFactorError(error).message, needsCode: false }
}
