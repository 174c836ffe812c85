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
 * The backend's URL as the browser bundle has it: Next inlines the variable at build time; unset means the local
 * backend, as lib/env-config.ts `DEFAULT_SUPABASE_URL` (not imported: its validation would weigh on every page).
 */
export const PUBLIC_SUPABASE_URL: string = process.env.NEXT_PUBLIC_SUPABASE_URL || 'http://127.0.0.1:54321'
