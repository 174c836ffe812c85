/**
 * The rules of files in the app (ADR 037), shared by the browser (checks before an upload) and the server (the
 * same checks again, and the keys): limits, types, and how a file's name becomes a storage key. Free of React and
 * of any client, so every bundle may import it.
 */
import { groupDigits } from '../../lib/digits'

/** The `attachments` bucket's `file_size_limit` (supabase/migrations/20261124120000_storage_buckets.sql). */
export const ATTACHMENT_MAX_BYTES = 20_000_000
/** Files one "Attach" may send at once. */
export const ATTACHMENTS_PER_BATCH = 20
/** The `avatars` bucket's `file_size_limit` and `allowed_mime_types`. */
export const AVATAR_MAX_BYTES = 2_000_000
export const AVATAR_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const
/** The longest file name kept in a key (Supabase refuses keys over 1024 bytes; ids take 74 of them). */
const NAME_MAX = 200

/** "1.5 MB", "820 kB", "12 bytes": decimal units, as the limits are written. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return bytes === 1 ? '1 byte' : `${bytes} bytes`
  const units = ['kB', 'MB', 'GB']
  let value = bytes / 1000
  let unit = 0
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000
    unit += 1
  }
  const rounded = value >= 100 ? Math.round(value).toString() : value.toFixed(1).replace(/\.0$/, '')
  return `${rounded} ${units[unit]}`
}

/**
 * A file name as a storage key's last segment. Supabase accepts only a small ASCII set in keys
 * (`[A-Za-z0-9_/!.*'() &$=@;:+,?-]`), and `?` `&` `=` would confuse URLs: accents are dropped ("Résumé" →
 * "Resume"), any other character becomes `_`, the name keeps at most 200 characters (and its extension), and it
 * is never empty nor Supabase's folder placeholder.
 */
export function storageSafeName(name: string): string {
  let safe = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^A-Za-z0-9 ._()+,'!-]/g, '_')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^[.\s]+|[.\s]+$/g, '')
  if (safe.length > NAME_MAX) {
    const dot = safe.lastIndexOf('.')
    const ext = dot > 0 && safe.length - dot <= 16 ? safe.slice(dot) : ''
    safe = safe.slice(0, NAME_MAX - ext.length).trimEnd() + ext
  }
  // Nothing readable left of the name (e.g. "報告.pdf" → "__.pdf"): call it "file", keeping the extension.
  const dot = safe.lastIndexOf('.')
  const [base, ext] = dot > 0 ? [safe.slice(0, dot), safe.slice(dot)] : [safe, '']
  if (!/[A-Za-z0-9]/.test(base)) safe = `file${/[A-Za-z0-9]/.test(ext) ? ext : ''}`
  if (safe === '.emptyFolderPlaceholder') safe = '_emptyFolderPlaceholder'
  return safe
}

/** `name`, or "name (2).ext", "name (3).ext"… — the first that is not `taken`. */
export function uniqueName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name
  const dot = name.lastIndexOf('.')
  const [base, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, '']
  for (let n = 2; ; n += 1) {
    const candidate = `${base} (${n})${ext}`
    if (!taken.has(candidate)) return candidate
  }
}

/**
 * "is 2.5 MB: … at most 2 MB", or with exact figures where rounding would make both sizes read the same
 * ("is 2,000,001 bytes: … at most 2,000,000 bytes (2 MB)") and the refusal contradict itself.
 */
function overLimit(name: string, size: number, limit: number, what: string): string {
  const [shown, max] = [formatBytes(size), formatBytes(limit)]
  if (shown !== max) return `“${name}” is ${shown}: ${what} at most ${max}.`
  return `“${name}” is ${groupDigits(size)} bytes: ${what} at most ${groupDigits(limit)} bytes (${max}).`
}

/** Why a file cannot be attached, or null when it can. */
export function attachmentProblem(file: { name: string; size: number }): string | null {
  if (file.size > ATTACHMENT_MAX_BYTES) return overLimit(file.name, file.size, ATTACHMENT_MAX_BYTES, 'files can be')
  return null
}

/** Why a picture cannot be used, or null when it can (its bytes are checked by `pictureProblem`). */
export function avatarProblem(file: { name: string; size: number; type: string }): string | null {
  if (!(AVATAR_TYPES as readonly string[]).includes(file.type))
    return `“${file.name}” is not a PNG, JPEG, WebP or GIF picture. Choose one of those.`
  if (file.size === 0) return `“${file.name}” is an empty file. Choose a picture.`
  if (file.size > AVATAR_MAX_BYTES) return overLimit(file.name, file.size, AVATAR_MAX_BYTES, 'a picture can be')
  return null
}

/** The widest and tallest picture accepted (ADR 067): it is shown at most 96 px wide, decoded on every page. */
export const AVATAR_MAX_SIDE = 8000

/**
 * Why a picture whose type and size passed cannot be used once the browser has tried it (`size`: its width and
 * height, or null when the browser could not decode it), or null when it can.
 */
export function pictureProblem(name: string, size: { width: number; height: number } | null): string | null {
  if (!size || size.width === 0 || size.height === 0) return `“${name}” is not an image this browser can show. Choose another picture.`
  if (size.width > AVATAR_MAX_SIDE || size.height > AVATAR_MAX_SIDE)
    return `“${name}” is ${size.width} × ${size.height} pixels: a picture can be at most ${AVATAR_MAX_SIDE} × ${AVATAR_MAX_SIDE} pixels.`
  return null
}

/** The extension a picture of an allowed type is stored with. */
export function avatarExtension(type: string): string {
  return type === 'image/jpeg' ? 'jpg' : type.replace('image/', '')
}
