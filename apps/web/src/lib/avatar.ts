/**
 * The public URL of a user's profile picture, or null (ADR 037). The picture's key lives in
 * `user_metadata.avatar_path`, which the user may set to anything through the auth API: only
 * `<their own id>/<a file name the app makes>` is ever turned into a URL. Tiny on purpose: the header's user menu,
 * on every page, imports it — no storage client, just the URL of the public `avatars` bucket for a plain <img>.
 */
const FILE = /^[\da-z-]{1,64}\.(png|jpg|webp|gif)$/

export function avatarUrlOf(
  user: { id: string; user_metadata?: Record<string, unknown> } | null | undefined,
  supabaseUrl: string,
): string | null {
  const path = user?.user_metadata?.avatar_path
  if (typeof path !== 'string' || !path.startsWith(`${user!.id}/`) || !FILE.test(path.slice(user!.id.length + 1))) return null
  return `${supabaseUrl.replace(/\/$/, '')}/storage/v1/object/public/avatars/${path}`
}

/**
 * The <img> props of a profile picture that report, once, a picture the browser cannot show (not an image, gone,
 * refused): `onBroken(src)`, and the page shows the initial instead (ADR 067). Also for a picture that failed
 * before the page was hydrated, whose `error` event React never saw: the element is then complete with no width.
 */
export function brokenImageProps(src: string, onBroken: (src: string) => void) {
  return {
    onError: () => onBroken(src),
    ref: (img: HTMLImageElement | null) => {
      if (img?.complete && img.naturalWidth === 0) onBroken(src)
    },
  }
}

/**
 * Whether the backend renders images (`/storage/v1/render/image`, ADR 046): set at build time with
 * `NEXT_PUBLIC_SUPABASE_IMAGE_TRANSFORMATION=true` only when it does — hosted Supabase offers it on paid plans,
 * localbase with `LOCALBASE_IMAGE_TRANSFORMATION=true`. Off (unset, the default), nothing asks for the render path.
 */
export const IMAGE_TRANSFORMATION: boolean = process.env.NEXT_PUBLIC_SUPABASE_IMAGE_TRANSFORMATION === 'true'

/** The `srcset` of a picture drawn `size` CSS pixels square: the backend's renderings at 1× and 2×. */
export function renderedSrcSet(url: string, size: number): string {
  const render = url.replace('/storage/v1/object/public/', '/storage/v1/render/image/public/')
  return `${render}?width=${size}&height=${size} 1x, ${render}?width=${size * 2}&height=${size * 2} 2x`
}

/**
 * The profile picture's `srcset` (instead of the whole upload, up to 2 MB), or undefined when transformations are
 * off so the <img> loads its plain `src`. A build without the flag folds this to `undefined` (next.config.ts
 * defines the variable), so it costs the first-load JS nothing.
 */
export const avatarSrcSet = (url: string | null, size: number): string | undefined =>
  IMAGE_TRANSFORMATION && url ? renderedSrcSet(url, size) : undefined

/**
 * The backend's URL as the browser bundle has it: Next inlines the variable at build time; unset means the local
 * backend, as lib/env-config.ts `DEFAULT_SUPABASE_URL` (not imported: its validation would weigh on every page).
 */
export const PUBLIC_SUPABASE_URL: string = process.env.NEXT_PUBLIC_SUPABASE_URL || 'http://127.0.0.1:54321'
