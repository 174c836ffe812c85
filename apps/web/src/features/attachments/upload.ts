/**
 * Uploading a file to a signed upload URL of Supabase Storage from the browser (ADR 037): one `XMLHttpRequest`
 * PUT of the raw file — `fetch` reports no upload progress — so the bytes go straight to storage, with progress
 * and cancel, and no storage client in the bundle. The server's refusals (413, 415, 409, …) come back as an
 * UploadError carrying Supabase's semantic `statusCode`, and `uploadErrorMessage` words them for people.
 */

import { AVATAR_MAX_SIDE } from './rules'

export class UploadError extends Error {
  override name = 'UploadError'
  /** Supabase's semantic status ("413"), the HTTP status when the body had none, "0" for a network failure. */
  readonly statusCode: string
  constructor(statusCode: string, message: string) {
    super(message)
    this.statusCode = statusCode
  }
}

export class UploadCancelled extends Error {
  override name = 'UploadCancelled'
}

export interface Upload {
  /** Resolves when storage has the file; rejects with UploadError, or UploadCancelled after `cancel()`. */
  done: Promise<void>
  cancel: () => void
}

/** PUTs `file` to `url`, calling `onProgress(sent, total)` as bytes leave. */
export function uploadFile(url: string, file: Blob, onProgress: (sent: number, total: number) => void): Upload {
  const xhr = new XMLHttpRequest()
  const done = new Promise<void>((resolve, reject) => {
    xhr.open('PUT', url)
    xhr.setRequestHeader('content-type', file.type || 'application/octet-stream')
    xhr.setRequestHeader('cache-control', 'max-age=3600')
    xhr.upload.onprogress = (event) => onProgress(event.loaded, event.lengthComputable ? event.total : file.size)
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(file.size, file.size)
        return resolve()
      }
      reject(errorOf(xhr.status, xhr.responseText))
    }
    xhr.onerror = () => reject(new UploadError('0', 'network'))
    xhr.onabort = () => reject(new UploadCancelled('cancelled'))
    xhr.send(file)
  })
  return { done, cancel: () => xhr.abort() }
}

/** The semantic status and message of a storage error body (`{ statusCode, error, message }`). */
export function errorOf(status: number, body: string): UploadError {
  try {
    const parsed = JSON.parse(body) as { statusCode?: unknown; message?: unknown }
    const code = typeof parsed.statusCode === 'string' ? parsed.statusCode : String(status)
    return new UploadError(code, typeof parsed.message === 'string' ? parsed.message : `HTTP ${status}`)
  } catch {
    return new UploadError(String(status), `HTTP ${status}`)
  }
}

/** What to tell a person about a refused upload of `name` (`limit`: the bucket's limit, in words). */
export function uploadErrorMessage(error: unknown, name: string, limit: string): string {
  if (!(error instanceof UploadError)) return `“${name}” was not uploaded. Try again.`
  switch (error.statusCode) {
    case '0':
      return `“${name}” was not uploaded: can't reach the server. Check your connection and try again.`
    case '413':
      return `The server refused “${name}”: it is larger than ${limit}.`
    case '415':
      return `The server refused “${name}”: files of this type are not accepted here.`
    case '409':
      return `“${name}” exists already. Try again to upload it under a new name.`
    case '400':
    case '403':
      return `The server refused “${name}”: the upload link is no longer valid. Try again.`
    default:
      return `“${name}” was not uploaded (the server answered ${error.statusCode}). Try again.`
  }
}

/**
 * The width and height of a picture the browser can decode, or null when it cannot (not an image, cut short, a
 * format it does not know). Read from the file before it is uploaded (ADR 067): the <img> element gives the size
 * from the header first, so an absurd size is refused without decoding it; only a sensible one is then decoded.
 */
export async function measurePicture(file: Blob): Promise<{ width: number; height: number } | null> {
  const url = URL.createObjectURL(file)
  try {
    const img = new Image()
    const loaded = new Promise<boolean>((resolve) => {
      img.onload = () => resolve(true)
      img.onerror = () => resolve(false)
    })
    img.src = url
    if (!(await loaded)) return null
    const size = { width: img.naturalWidth, height: img.naturalHeight }
    if (size.width > AVATAR_MAX_SIDE || size.height > AVATAR_MAX_SIDE) return size
    await img.decode()
    return size
  } catch {
    return null
  } finally {
    URL.revokeObjectURL(url)
  }
}

/**
 * What to tell a person about a refused API call: the server's message, or for invalid input (its `zodError`,
 * server/trpc.ts) the first of the field messages — never the raw list of validation issues that tRPC puts in the
 * error's `message`.
 */
export function apiErrorText(error: unknown, fallback = 'Something went wrong. Try again.'): string {
  const data = (error as { data?: { zodError?: { formErrors?: string[]; fieldErrors?: Record<string, string[] | undefined> } | null } } | null)?.data
  const zod = data?.zodError
  if (zod) return [...(zod.formErrors ?? []), ...Object.values(zod.fieldErrors ?? {}).flatMap((messages) => messages ?? [])][0] ?? fallback
  const message = error instanceof Error ? error.message : ''
  // A message that is data (tRPC's JSON of issues from a server without the formatter) is not for people.
  return message && !/^\s*[[{]/.test(message) ? message : fallback
}
