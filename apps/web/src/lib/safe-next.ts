/**
 * Validation of `?next=` redirect targets (open-redirect protection): only same-origin relative paths pass.
 * Anything else — absolute URLs, protocol-relative `//host`, `/\host` (browsers read `\` as `/`), schemes such as
 * `javascript:`, control characters, and the encoded forms of those — is rejected.
 */

const PROBE_ORIGIN = 'http://foyer.invalid'

function decodeFully(value: string): string | null {
  let current = value
  for (let i = 0; i < 5; i++) {
    let next: string
    try {
      next = decodeURIComponent(current)
    } catch {
      return null
    }
    if (next === current) return current
    current = next
  }
  return null // still changing after 5 rounds: nobody legitimate nests encodings this deep
}

/** The path to go to when `value` is a safe same-origin relative path, else null. */
export function safeNextPath(value: unknown): string | null {
  if (typeof value !== 'string') return null
  if (value.length === 0 || value.length > 2048) return null
  const decoded = decodeFully(value)
  if (decoded === null) return null
  for (const candidate of [value, decoded]) {
    if (!candidate.startsWith('/')) return null
    // `//host` and `/\host` are protocol-relative to a browser; control chars and whitespace are stripped by URL parsers
    if (candidate.startsWith('//') || candidate.startsWith('/\\')) return null
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f\s]/.test(candidate)) return null
    if (candidate.includes('\\')) return null
  }
  let url: URL
  try {
    url = new URL(value, PROBE_ORIGIN)
  } catch {
    return null
  }
  if (url.origin !== PROBE_ORIGIN) return null
  return `${url.pathname}${url.search}${url.hash}`
}

/** `next` when safe, otherwise the fallback (default `/`). */
export function resolveNext(value: unknown, fallback = '/'): string {
  return safeNextPath(value) ?? fallback
}

/** `/sign-in?next=<path>` for a path the user wanted to reach. */
export function signInPathFor(path: string): string {
  const next = safeNextPath(path)
  return next && next !== '/' ? `/sign-in?next=${encodeURIComponent(next)}` : '/sign-in'
}

/** The two-factor sign-in step. */
export const MFA_PATH = '/mfa'

/** `/mfa?next=<path>` for a path that needs the second factor first. */
export function mfaPathFor(path: string): string {
  const next = safeNextPath(path)
  return next && next !== '/' ? `${MFA_PATH}?next=${encodeURIComponent(next)}` : MFA_PATH
}
