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
  if (decoded === null || !isPlainPath(value) || !isPlainPath(decoded)) return null
  const url = normalised(value)
  if (url === null) return null
  const result = `${url.pathname}${url.search}${url.hash}`
  // Normalising collapses dot segments, encoded ones too (`/.//host`, `/%2e//host`, `/a/..//host` all become
  // `//host`): what comes out, and the decoded text normalised, must still be a plain path.
  const decodedUrl = normalised(decoded)
  if (!isPlainPath(result) || decodedUrl === null || !isPlainPath(decodedUrl.pathname)) return null
  return result
}

/** Starts with one `/`, not `//host` or `/\host` (protocol-relative to a browser); no backslash, control character or whitespace (URL parsers strip those). */
function isPlainPath(candidate: string): boolean {
  if (!candidate.startsWith('/') || candidate.startsWith('//') || candidate.includes('\\')) return false
  // eslint-disable-next-line no-control-regex
  return !/[\u0000-\u001f\u007f\s]/.test(candidate)
}

/** `path` resolved against the probe origin (dot segments collapsed), or null when it cannot be or leaves it. */
function normalised(path: string): URL | null {
  let url: URL
  try {
    url = new URL(path, PROBE_ORIGIN)
  } catch {
    return null
  }
  return url.origin === PROBE_ORIGIN ? url : null
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
