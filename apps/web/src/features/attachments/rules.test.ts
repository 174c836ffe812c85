import { describe, expect, it } from 'vitest'

import { avatarUrlOf } from '../../lib/avatar'
import { attachmentProblem, avatarProblem, formatBytes, pictureProblem, storageSafeName, uniqueName } from './rules'

describe('storageSafeName', () => {
  it('keeps ordinary names and makes the others fit Supabase keys', () => {
    expect(storageSafeName('Quarterly report (final).pdf')).toBe('Quarterly report (final).pdf')
    expect(storageSafeName('Résumé – José.docx')).toBe('Resume _ Jose.docx')
    expect(storageSafeName('a?b&c=d#e%f/g\\h.txt')).toBe('a_b_c_d_e_f_g_h.txt')
    expect(storageSafeName('報告.pdf')).toBe('file.pdf')
    expect(storageSafeName('...')).toBe('file')
    expect(storageSafeName('.env')).toBe('env')
    expect(storageSafeName('.emptyFolderPlaceholder')).toBe('emptyFolderPlaceholder')
    expect(storageSafeName('nul\u0000byte.txt')).toBe('nul_byte.txt')
  })

  it('shortens long names to 200 characters and keeps the extension', () => {
    const safe = storageSafeName(`${'x'.repeat(500)}.tar.gz`)
    expect(safe).toHaveLength(200)
    expect(safe.endsWith('.gz')).toBe(true)
  })
})

describe('uniqueName', () => {
  it('numbers a name that is taken', () => {
    expect(uniqueName('a.pdf', new Set())).toBe('a.pdf')
    expect(uniqueName('a.pdf', new Set(['a.pdf', 'a (2).pdf']))).toBe('a (3).pdf')
    expect(uniqueName('README', new Set(['README']))).toBe('README (2)')
  })
})

describe('limits', () => {
  it('formats sizes in decimal units', () => {
    expect([formatBytes(1), formatBytes(999), formatBytes(1500), formatBytes(2_000_000), formatBytes(20_000_000), formatBytes(123_456_789)]).toEqual([
      '1 byte',
      '999 bytes',
      '1.5 kB',
      '2 MB',
      '20 MB',
      '123 MB',
    ])
  })

  it('says why a file or a picture cannot be used', () => {
    expect(attachmentProblem({ name: 'a.iso', size: 20_000_001 })).toBe('“a.iso” is 20,000,001 bytes: files can be at most 20,000,000 bytes (20 MB).')
    expect(attachmentProblem({ name: 'a.txt', size: 20_000_000 })).toBeNull()
    expect(avatarProblem({ name: 'me.svg', size: 10, type: 'image/svg+xml' })).toBe('“me.svg” is not a PNG, JPEG, WebP or GIF picture. Choose one of those.')
    expect(avatarProblem({ name: 'me.png', size: 2_500_000, type: 'image/png' })).toBe('“me.png” is 2.5 MB: a picture can be at most 2 MB.')
    expect(avatarProblem({ name: 'me.webp', size: 2_000_000, type: 'image/webp' })).toBeNull()
  })

  it('gives exact figures where rounding would make the size and the limit read the same', () => {
    expect(avatarProblem({ name: 'big.png', size: 2_000_001, type: 'image/png' })).toBe(
      '“big.png” is 2,000,001 bytes: a picture can be at most 2,000,000 bytes (2 MB).',
    )
    expect(attachmentProblem({ name: 'a.iso', size: 20_040_000 })).toBe('“a.iso” is 20,040,000 bytes: files can be at most 20,000,000 bytes (20 MB).')
    expect(attachmentProblem({ name: 'a.iso', size: 21_000_000 })).toBe('“a.iso” is 21 MB: files can be at most 20 MB.')
  })

  it('refuses an empty picture, one the browser cannot decode, and absurd dimensions', () => {
    expect(avatarProblem({ name: 'empty.png', size: 0, type: 'image/png' })).toBe('“empty.png” is an empty file. Choose a picture.')
    expect(pictureProblem('fake.png', null)).toBe('“fake.png” is not an image this browser can show. Choose another picture.')
    expect(pictureProblem('huge.png', { width: 100_000, height: 100_000 })).toBe(
      '“huge.png” is 100000 × 100000 pixels: a picture can be at most 8000 × 8000 pixels.',
    )
    expect(pictureProblem('ok.png', { width: 8000, height: 600 })).toBeNull()
  })
})

describe('avatarUrlOf', () => {
  const id = '6f1c2a3b-0000-4000-8000-000000000001'
  const other = '6f1c2a3b-0000-4000-8000-000000000002'
  const base = 'http://127.0.0.1:54321'

  it("is the public URL of the user's own picture", () => {
    expect(avatarUrlOf({ id, user_metadata: { avatar_path: `${id}/1732450000000.webp` } }, `${base}/`)).toBe(
      `${base}/storage/v1/object/public/avatars/${id}/1732450000000.webp`,
    )
  })

  it('is null for no picture, or for a path the user wrote by hand that is not theirs or not ours', () => {
    expect(avatarUrlOf({ id, user_metadata: {} }, base)).toBeNull()
    expect(avatarUrlOf(null, base)).toBeNull()
    for (const path of [`${other}/1.png`, `${id}/../x.png`, `${id}/a/b.png`, `${id}/x.svg`, `${id}/"onerror=x.png`, 'https://evil.example/x.png', 42])
      expect(avatarUrlOf({ id, user_metadata: { avatar_path: path } }, base)).toBeNull()
  })
})

describe('upload errors', () => {
  it("read Supabase's error body and word the refusals for people", async () => {
    const { errorOf, uploadErrorMessage, UploadError } = await import('./upload')
    const tooBig = errorOf(400, JSON.stringify({ statusCode: '413', error: 'Payload too large', message: 'The object exceeded the maximum allowed size' }))
    expect([tooBig.statusCode, tooBig.message]).toEqual(['413', 'The object exceeded the maximum allowed size'])
    expect(uploadErrorMessage(tooBig, 'me.png', '2 MB')).toBe('The server refused “me.png”: it is larger than 2 MB.')
    expect(uploadErrorMessage(errorOf(400, '{"statusCode":"415","message":"mime type text/html is not supported"}'), 'x.html', '2 MB')).toBe(
      'The server refused “x.html”: files of this type are not accepted here.',
    )
    expect(errorOf(502, '<html>bad gateway</html>').statusCode).toBe('502')
    expect(uploadErrorMessage(new UploadError('0', 'network'), 'a.txt', '20 MB')).toContain("can't reach the server")
    expect(uploadErrorMessage(new Error('boom'), 'a.txt', '20 MB')).toBe('“a.txt” was not uploaded. Try again.')
  })
})

describe('PUBLIC_SUPABASE_URL', () => {
  it('is the local default of lib/env-config.ts when the variable is unset', async () => {
    const { DEFAULT_SUPABASE_URL } = await import('../../lib/env-config')
    const { PUBLIC_SUPABASE_URL } = await import('../../lib/avatar')
    if (!process.env.NEXT_PUBLIC_SUPABASE_URL) expect(PUBLIC_SUPABASE_URL).toBe(DEFAULT_SUPABASE_URL)
  })
})

describe('apiErrorText', () => {
  it("words a refused call: the first validation message, never tRPC's raw list of issues", async () => {
    const { apiErrorText } = await import('./upload')
    const raw = '[\n  {\n    "origin": "number",\n    "code": "too_small",\n    "minimum": 1,\n    "path": ["size"]\n  }\n]'
    const invalid = Object.assign(new Error(raw), { data: { zodError: { formErrors: [], fieldErrors: { size: ['A picture cannot be empty.'] } } } })
    expect(apiErrorText(invalid)).toBe('A picture cannot be empty.')
    expect(apiErrorText(new Error(raw))).toBe('Something went wrong. Try again.')
    expect(apiErrorText(new Error('This note does not exist, or it is not yours.'))).toBe('This note does not exist, or it is not yours.')
    expect(apiErrorText('nope', 'Try again.')).toBe('Try again.')
  })
})
