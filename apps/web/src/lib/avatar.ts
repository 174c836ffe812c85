/**
 * The public URL of a user's profile picture, or null (ADR 037). The picture's key lives in
 * `user_metadata.avatar_path`, which the user may set to anything through the auth API: only
 * `<their own id>/<a file name the app makes>` is ever turned into a URL. Tiny on purpose: the header's user menu,
 * on every page, imports it — no storage client, just the URL of the public `avatars` bucket for a plain <img>.
 */
const OWN_PATH = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/([0-9a-z-]{1,64}\.(?:png|jpg|webp|gif))$/

export function avatarUrlOf(
  user: { id: string; user_metadata?: Record<string, unknown> } | null | undefined,
  supabaseUrl: string,
): string | null {
  const path = user?.user_metadata?.avatar_path
  const match = typeof path === 'string' ? OWN_PATH.exec(path) : null
  if (!match || match[1] !== user!.id) return null
  return `${supabaseUrl.replace(/\/+$/, '')}/storage/v1/object/public/avatars/${match[1]}/${match[2]}`
}
