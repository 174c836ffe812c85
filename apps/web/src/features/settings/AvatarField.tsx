import { useEffect, useRef, useState, type DragEvent } from 'react'
import { Paragraph, XStack, YStack } from 'tamagui'

import { avatarUrlOf, brokenImageProps } from '../../lib/avatar'
import { backendConfig } from '../../lib/env'
import { GUEST_NAME, isGuest } from '../../lib/guest'
import { createApiClient } from '../../lib/trpc'
import { useDragOver } from '../../lib/use-drag-over'
import {
  apiErrorText,
  AVATAR_MAX_BYTES,
  AVATAR_TYPES,
  avatarProblem,
  formatBytes,
  measurePicture,
  pictureProblem,
  uploadErrorMessage,
  uploadFile,
  UploadCancelled,
  type Upload,
} from '../attachments'
import styles from '../../ui/files.module.css'
import { displayNameOf, FormMessage, loadBrowserSupabase, readableApiError, readableAuthError, useSession } from '../auth'
import { toast } from '../toast'

// This chunk is loaded by the account page only (AccountScreen's dynamic import): the tRPC client here is the
// plain one, without the query cache of the pages that list data.
let api: ReturnType<typeof createApiClient> | undefined
const apiClient = () => (api ??= createApiClient())

const LIMIT = formatBytes(AVATAR_MAX_BYTES)

/** Saves the picture's key (or none) on the user, and refreshes the session so its token carries it too. */
async function saveAvatarPath(path: string | null): Promise<void> {
  const supabase = await loadBrowserSupabase()
  const { error } = await supabase.auth.updateUser({ data: { avatar_path: path } })
  if (error) throw error
  await supabase.auth.refreshSession().catch(() => undefined)
}

function messageOf(error: unknown): string {
  if (error && typeof error === 'object' && 'name' in error && (error as { name: string }).name.startsWith('Auth')) return readableAuthError(error).message
  // A call to the app's API that got no answer (offline) is said in words, not as the browser's "Failed to fetch".
  return error instanceof Error ? readableApiError(error, apiErrorText(error)) : apiErrorText(error)
}

/**
 * The profile picture: the current one (or the initial, also when the browser cannot show it), "Choose picture" or
 * a drop, checked before any byte is sent (type, size, and that the browser decodes it at a sensible size: ADR
 * 067), a preview and progress while it uploads (Cancel), then saved on the user; "Remove picture" ("Removing…"
 * while it runs). The header's user menu shows it at once (the session's user changes). Focus, lost while the
 * control is busy, comes back to it.
 */
export function AvatarField() {
  const { user } = useSession()
  const current = avatarUrlOf(user, backendConfig.supabaseUrl)
  const currentPath = typeof user?.user_metadata?.avatar_path === 'string' && current ? (user.user_metadata.avatar_path as string) : null
  const [preview, setPreview] = useState<string | null>(null)
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  /** "Remove picture" is on its way (the button says so and keeps focus). */
  const [removing, setRemoving] = useState(false)
  const { over, end: endDrag, zoneProps: dragZoneProps } = useDragOver()
  const [broken, setBroken] = useState<string | null>(null)
  const uploadRef = useRef<Upload | null>(null)
  const inputRef = useRef<HTMLInputElement>(null)
  /** Set when an upload or a removal ends: focus, dropped while the input was disabled, goes back to it. */
  const refocus = useRef(false)

  useEffect(() => () => uploadRef.current?.cancel(), [])
  useEffect(() => {
    if (!preview) return
    return () => URL.revokeObjectURL(preview)
  }, [preview])
  useEffect(() => {
    if (busy || !refocus.current) return
    refocus.current = false
    const active = document.activeElement
    if (!active || active === document.body) inputRef.current?.focus()
  }, [busy])

  async function choose(file: File) {
    const problem = avatarProblem(file) ?? pictureProblem(file.name, await measurePicture(file))
    if (problem) return setError(problem)
    setError(null)
    setBusy(true)
    setPreview(URL.createObjectURL(file))
    setProgress({ sent: 0, total: file.size })
    try {
      const { path, url } = await apiClient().avatar.createUploadUrl.mutate({ type: file.type as (typeof AVATAR_TYPES)[number], size: file.size })
      const upload = uploadFile(url, file, (sent, total) => setProgress({ sent, total }))
      uploadRef.current = upload
      try {
        await upload.done
      } catch (failure) {
        if (failure instanceof UploadCancelled) {
          // The picture may have reached storage just before Cancel (ADR 051): it is not kept.
          await apiClient().avatar.remove.mutate({ path }).catch(() => undefined)
          throw failure
        }
        throw new Error(uploadErrorMessage(failure, file.name, LIMIT), { cause: failure })
      }
      await saveAvatarPath(path)
      if (currentPath && currentPath !== path) await apiClient().avatar.remove.mutate({ path: currentPath }).catch(() => undefined)
      toast.success('Picture saved', 'It shows beside your name.')
    } catch (failure) {
      if (!(failure instanceof UploadCancelled)) setError(messageOf(failure))
    } finally {
      uploadRef.current = null
      refocus.current = true
      setBusy(false)
      setProgress(null)
      setPreview(null)
      if (inputRef.current) inputRef.current.value = ''
    }
  }

  async function remove() {
    if (!currentPath || busy) return
    setError(null)
    setBusy(true)
    setRemoving(true)
    try {
      await saveAvatarPath(null)
      await apiClient().avatar.remove.mutate({ path: currentPath }).catch(() => undefined)
      toast.success('Picture removed', 'Your initial shows instead.')
    } catch (failure) {
      setError(messageOf(failure))
    } finally {
      refocus.current = true
      setRemoving(false)
      setBusy(false)
    }
  }

  const onDrop = (event: DragEvent<HTMLDivElement>) => {
    event.preventDefault()
    endDrag()
    const file = event.dataTransfer.files[0]
    if (file && !busy) void choose(file)
  }

  const name = user ? (isGuest(user) ? GUEST_NAME : displayNameOf(user)) : ''
  const candidate = preview ?? current
  const shown = candidate !== broken ? candidate : null
  const percent = progress && progress.total > 0 ? Math.round((progress.sent / progress.total) * 100) : 0
  return (
    <YStack gap="$3">
      <div
        className={styles.dropZone}
        data-over={over}
        data-testid="avatar-drop"
        {...dragZoneProps}
        onDrop={onDrop}
      >
        {shown ? (
          <img
            className={styles.avatar}
            src={shown}
            alt={preview ? 'Preview of the new picture' : 'Your profile picture'}
            width={96}
            height={96}
            {...brokenImageProps(shown, setBroken)}
          />
        ) : (
          <span className={`${styles.avatar} ${styles.avatarPlaceholder}`} aria-hidden>
            {name.slice(0, 1).toUpperCase()}
          </span>
        )}
        <YStack gap="$2" flex={1} minWidth={180}>
          <XStack gap="$2" flexWrap="wrap" alignItems="center">
            <input
              ref={inputRef}
              id="avatar-file"
              className={styles.fileInput}
              type="file"
              accept={AVATAR_TYPES.join(',')}
              disabled={busy}
              aria-describedby="avatar-hint"
              onChange={(event) => {
                const file = event.currentTarget.files?.[0]
                if (file) void choose(file)
              }}
            />
            <label htmlFor="avatar-file" className={styles.pickButton}>
              {current ? 'Replace picture' : 'Choose picture'}
            </label>
            {/* While it removes, the button says so and waits (aria-disabled: a keyboard user keeps focus on it). */}
            {current && (!busy || removing) ? (
              <button type="button" className={styles.smallButton} aria-disabled={removing || undefined} onClick={() => void remove()}>
                {removing ? 'Removing…' : 'Remove picture'}
              </button>
            ) : null}
          </XStack>
          <Paragraph id="avatar-hint" fontSize="$2" lineHeight="$2" color="$color11">
            Or drop one here. PNG, JPEG, WebP or GIF, at most {LIMIT}.
          </Paragraph>
        </YStack>
      </div>
      {progress ? (
        <div className={styles.progressRow}>
          <span>Uploading picture… {percent}%</span>
          <span>
            {formatBytes(progress.sent)} of {formatBytes(progress.total)}
          </span>
          <button type="button" className={styles.smallButton} onClick={() => uploadRef.current?.cancel()}>
            Cancel
          </button>
          <progress aria-label="Picture upload" max={100} value={percent} />
        </div>
      ) : null}
      {error ? <FormMessage kind="error">{error}</FormMessage> : null}
    </YStack>
  )
}
