import { describe, expect, it } from 'vitest'

import { avatarSrcSet, avatarUrlOf, IMAGE_TRANSFORMATION, renderedSrcSet } from './avatar'

const id = '6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b'
const user = { id, user_metadata: { avatar_path: `${id}/0b1c2d3e.png` } }
const base = 'http://127.0.0.1:54321'

describe('profile picture URLs', () => {
  it('the plain public URL, only for a file in the user’s own folder', () => {
    expect(avatarUrlOf(user, `${base}/`)).toBe(`${base}/storage/v1/object/public/avatars/${id}/0b1c2d3e.png`)
    expect(avatarUrlOf({ id, user_metadata: { avatar_path: `someone-else/0b1c2d3e.png` } }, base)).toBeNull()
  })

  it('asks for 1× and 2× renderings when the backend renders images (ADR 046), nothing otherwise', () => {
    const url = avatarUrlOf(user, base)!
    expect(renderedSrcSet(url, 36)).toBe(
      `${base}/storage/v1/render/image/public/avatars/${id}/0b1c2d3e.png?width=36&height=36 1x, ` +
        `${base}/storage/v1/render/image/public/avatars/${id}/0b1c2d3e.png?width=72&height=72 2x`,
    )
    // off unless NEXT_PUBLIC_SUPABASE_IMAGE_TRANSFORMATION=true at build time
    expect(IMAGE_TRANSFORMATION).toBe(process.env.NEXT_PUBLIC_SUPABASE_IMAGE_TRANSFORMATION === 'true')
    expect(avatarSrcSet(url, 36)).toBe(IMAGE_TRANSFORMATION ? renderedSrcSet(url, 36) : undefined)
    expect(avatarSrcSet(null, 36)).toBeUndefined()
  })
})
