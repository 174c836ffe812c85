import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { memo, useCallback, useEffect, useRef, useState, type DragEvent } from 'react'

import { groupDigits } from '../../lib/digits'
import { useTRPC, useTRPCClient } from '../../lib/trpc'
import { useDragOver } from '../../lib/use-drag-over'
import { ConfirmDialog } from '../../ui/ConfirmDialog'
import panel from '../../ui/panel.module.css'
import { FormMessage, readableApiError, toastApiError } from '../auth'
import { toast } from '../toast'
import styles from '../../ui/files.module.css'
import { ATTACHMENT_MAX_BYTES, ATTACHMENTS_PER_BATCH, attachmentProblem, formatBytes } from './rules'
import { uploadErrorMessage, uploadFile, UploadCancelled } from './upload'

const LIMIT = formatBytes(ATTACHMENT_MAX_BYTES)

interface Transfer {
  id: number
  name: string
  sent: number
  total: number
  cancel: () => void
}

let nextTransferId = 1

/** A file of the list, as `attachments.newest` gives it. */
interface Listed {
  name: string
  size: number
  type: string
  createdAt: Date
}

/**
 * Rows the list shows at first, and each "Show more" adds (ADR 155): a note with thousands of files opens, scrolls and
 * answers keys as one with a few (3,000 rows were 6,000 buttons in the page, laid out and styled at once).
 */
export const FILES_PER_PAGE = 100

/**
 * A note's files (ADR 037): attach several at once (picker or drop), each uploaded straight to storage through a
 * signed upload URL with its own progress and Cancel; the list with name, size and type; Download through a link
 * that lives a minute; Delete after a confirmation. Loaded by the note page on demand (its own chunk).
 *
 * Memoized: the note page renders again on every keystroke in the note, and the panel's props (the note's id, a
 * state setter) do not change then — without it, typing re-rendered every file row, a cost that grew with the files
 * (60 rows: 60 re-renders per character; 1,500 files: ~100 ms of main thread per character).
 */
export const AttachmentsPanel = memo(function AttachmentsPanel({
  noteId,
  onCountChange,
}: {
  noteId: string
  /** The note's number of files once known; `exact` false: at least this many (the total is still being counted). */
  onCountChange?: (count: number, exact: boolean) => void
}) {
  const trpc = useTRPC()
  const trpcClient = useTRPCClient()
  const queryClient = useQueryClient()
  /** How many of the newest files are listed: FILES_PER_PAGE, and FILES_PER_PAGE more for each "Show more". */
  const [shown, setShown] = useState(FILES_PER_PAGE)
  // Storage is asked for the files shown, newest first, not for every file of the note (ADR 157); "Show more" asks
  // for the longer list, and the rows there stay until it comes.
  const listOptions = trpc.attachments.newest.queryOptions({ noteId, limit: shown })
  // On the note page, beside text the user may not have saved: a refusal for a missing second factor is shown here,
  // not turned into a move to /mfa (features/auth/query-scope.ts) — the note's own save says why and links there.
  const list = useQuery({ ...listOptions, placeholderData: keepPreviousData, meta: { secondFactorRedirect: false } })
  const countOptions = trpc.attachments.count.queryOptions({ noteId })
  // A "Show more" that failed (no answer after the retries) has no list of its own: the rows shown before stay, with
  // the button (focus on it kept), and an effect below says so and goes back to them.
  const previousPage =
    list.isError && shown > FILES_PER_PAGE ? queryClient.getQueryData(trpc.attachments.newest.queryKey({ noteId, limit: shown - FILES_PER_PAGE })) : undefined
  const listedData = list.data ?? previousPage
  const files = listedData?.files
  const more = listedData ? listedData.more || listedData.files.length > shown : undefined
  // The total only when there are more files than shown (it reads every name), and after the first rows are there.
  const counted = useQuery({ ...countOptions, enabled: more === true, meta: { secondFactorRedirect: false } })
  const total = more === false ? files?.length : counted.data?.count
  const [transfers, setTransfers] = useState<Transfer[]>([])
  const [problems, setProblems] = useState<string[]>([])
  const { over, end: endDrag, zoneProps: dragZoneProps } = useDragOver()
  const [confirming, setConfirming] = useState<string | null>(null)
  const inputRef = useRef<HTMLInputElement>(null)
  const listRef = useRef<HTMLUListElement>(null)
  const cancels = useRef(new Set<() => void>())
  /** Names of this panel's uploads on their way (their URLs made), and the end of the latest request for URLs. */
  const inProgress = useRef(new Set<string>())
  const urlTurn = useRef<Promise<void>>(Promise.resolve())
  /** The deleted file and its row's place: once the list no longer has it, focus goes to the row now there. */
  const focusAfterDelete = useRef<{ name: string; index: number } | null>(null)
  /** The ended upload whose Cancel had focus, and its row's place: once its row is gone, focus goes to the upload now there. */
  const focusAfterUpload = useRef<{ id: number; index: number } | null>(null)
  const uploadsRef = useRef<HTMLDivElement>(null)

  /** The first row "Show more" added: focus goes to it once it is there (the button it was on may be gone). */
  const focusShownFrom = useRef<number | null>(null)
  const showing = list.isPlaceholderData || (list.isError && previousPage !== undefined)
  useEffect(() => {
    const from = focusShownFrom.current
    if (from === null || showing || !files) return
    focusShownFrom.current = null
    listRef.current?.querySelectorAll('li')[from]?.querySelector('button')?.focus()
  }, [files, showing])

  const failedShow = previousPage !== undefined && !list.isFetching
  useEffect(() => {
    if (!failedShow || !list.error) return
    focusShownFrom.current = null
    toastApiError('More files could not be shown', list.error)
    // Forgotten, so that the next "Show more" asks again from the start (shown as on its way, the rows kept).
    queryClient.removeQueries({ queryKey: trpc.attachments.newest.queryKey({ noteId, limit: shown }), exact: true })
    setShown(shown - FILES_PER_PAGE)
  }, [failedShow, list.error, shown, noteId, trpc, queryClient])

  // "Try again" goes with the error once the files are there: focus goes to the first file, or to "Attach files".
  const focusAfterRetry = useRef(false)
  useEffect(() => {
    if (!focusAfterRetry.current || files === undefined) return
    focusAfterRetry.current = false
    ;(listRef.current?.querySelector('button') ?? inputRef.current)?.focus()
  }, [files])

  const listed = files ? Math.min(files.length, shown) : undefined
  useEffect(() => {
    if (total !== undefined) onCountChange?.(total, true)
    else if (listed !== undefined) onCountChange?.(listed, false)
  }, [total, listed, onCountChange])
  // Leaving the page cancels what is still on its way (the signed URLs then expire unused: nothing is left over).
  useEffect(() => {
    const pending = cancels.current
    return () => pending.forEach((cancel) => cancel())
  }, [])

  /** Reads the list (and the total, when it is in use) again: files added or deleted elsewhere show up. */
  const refresh = () => Promise.all([queryClient.invalidateQueries(trpc.attachments.newest.pathFilter()), queryClient.invalidateQueries(trpc.attachments.count.pathFilter())])
  /** A file stored (+1, at the top) or deleted (-1) by this page, at once; the next read of the list confirms it. */
  function changeListed(change: { added: Listed } | { removed: string }) {
    queryClient.setQueryData(listOptions.queryKey, (data) => {
      if (!data) return data
      if ('removed' in change) return { ...data, files: data.files.filter((file) => file.name !== change.removed) }
      return { ...data, files: [change.added, ...data.files.filter((file) => file.name !== change.added.name)] }
    })
    queryClient.setQueryData(countOptions.queryKey, (data) => data && { count: Math.max(0, data.count + ('removed' in change ? -1 : 1)) })
  }

  // After a confirmed delete the dialog gives focus back to the row's Delete button, which is gone with the row:
  // focus goes to the next file (the one now in its place, or the last), or to "Attach files" when none is left.
  useEffect(() => {
    const pending = focusAfterDelete.current
    if (!pending || !files || files.some((file) => file.name === pending.name)) return
    focusAfterDelete.current = null
    const rows = listRef.current?.querySelectorAll('li')
    const row = rows && rows.length > 0 ? rows[Math.min(pending.index, rows.length - 1)] : null
    ;(row?.querySelector('button') ?? inputRef.current)?.focus()
  }, [files])

  // An upload's row goes when it ends (cancelled, attached or failed), and focus on its Cancel with it (to <body>): it
  // goes to the next upload's Cancel (the one now in its place, or the last), or to "Attach files" when none is left
  // — unless the user has moved on meanwhile.
  useEffect(() => {
    const pending = focusAfterUpload.current
    if (!pending || transfers.some((t) => t.id === pending.id)) return
    focusAfterUpload.current = null
    if (document.activeElement !== document.body && document.activeElement !== null) return
    const buttons = uploadsRef.current?.querySelectorAll('button')
    const next = buttons && buttons.length > 0 ? buttons[Math.min(pending.index, buttons.length - 1)] : null
    ;(next ?? inputRef.current)?.focus()
  }, [transfers])

  const remove = useMutation(
    trpc.attachments.delete.mutationOptions({
      onSuccess: async ({ name }) => {
        focusAfterDelete.current = { name, index: files?.findIndex((file) => file.name === name) ?? 0 }
        setConfirming(null)
        toast.success('File deleted', name)
        // Its row goes now: reading the list again takes seconds for a note with thousands of files, and the row
        // would stay until then (focus waiting with it, its Delete pressable again for "does not exist any more").
        changeListed({ removed: name })
        await refresh()
      },
      onError: (error, { name }) => {
        const index = files?.findIndex((file) => file.name === name) ?? -1
        setConfirming(null)
        toastApiError('The file was not deleted', error)
        if (error.data?.code === 'NOT_FOUND') {
          gone(name, index)
          return
        }
        // The dialog goes without being closed, so nothing gives focus back (it was on its "Deleting…" button, gone
        // with it): it goes back to the file's Delete button, where Enter tries again.
        requestAnimationFrame(() => listRef.current?.querySelectorAll('li')[index]?.querySelectorAll('button')[1]?.focus())
      },
    }),
  )

  /**
   * A file the list shows is not stored any more (deleted in another tab or device): the list is read again, and
   * focus, on the row's button, goes where it goes after a delete (the next file, or "Attach files").
   */
  function gone(name: string, index: number) {
    focusAfterDelete.current = { name, index: Math.max(0, index) }
    void refresh()
  }

  /** The files whose link is on its way: their Download says so and ignores further presses (one file, one download). */
  const [downloading, setDownloading] = useState<ReadonlySet<string>>(new Set())
  const downloadingRef = useRef(new Set<string>())
  async function download(name: string) {
    if (downloadingRef.current.has(name)) return
    downloadingRef.current.add(name)
    setDownloading(new Set(downloadingRef.current))
    try {
      const { url } = await trpcClient.attachments.downloadUrl.mutate({ noteId, name })
      // A link to storage that answers with "Content-Disposition: attachment": the browser saves the file and stays here.
      window.location.assign(url)
    } catch (error) {
      toastApiError('The file could not be downloaded', error as Error)
      if ((error as { data?: { code?: string } }).data?.code === 'NOT_FOUND') gone(name, files?.findIndex((file) => file.name === name) ?? 0)
    } finally {
      downloadingRef.current.delete(name)
      setDownloading(new Set(downloadingRef.current))
    }
  }

  // The rows get one callback for good (FileRow is memoized): it calls the download of the latest render.
  const downloadRef = useRef(download)
  useEffect(() => {
    downloadRef.current = download
  })
  const onDownload = useCallback((name: string) => void downloadRef.current(name), [])

  async function attach(files: File[]) {
    if (files.length === 0) return
    const found: string[] = []
    let ok = files.filter((file) => {
      const problem = attachmentProblem(file)
      if (problem) found.push(problem)
      return !problem
    })
    if (ok.length > ATTACHMENTS_PER_BATCH) {
      found.push(`Attach at most ${ATTACHMENTS_PER_BATCH} files at once: the first ${ATTACHMENTS_PER_BATCH} are on their way.`)
      ok = ok.slice(0, ATTACHMENTS_PER_BATCH)
    }
    setProblems(found)
    if (ok.length === 0) return
    let uploads: { name: string; url: string }[]
    // One request for URLs at a time, each told the names of the uploads still on their way: files attached while
    // others upload (a second drop, the same name again) get names of their own, not keys already promised.
    const before = urlTurn.current
    let done = () => {}
    urlTurn.current = new Promise<void>((resolve) => (done = resolve))
    try {
      await before
      uploads = await trpcClient.attachments.createUploadUrls.mutate({
        noteId,
        files: ok.map((f) => ({ name: f.name, size: f.size })),
        inProgress: [...inProgress.current],
      })
      for (const { name } of uploads) inProgress.current.add(name)
    } catch (error) {
      toastApiError('The files were not attached', error as Error)
      return
    } finally {
      done()
    }
    const results = await Promise.all(
      uploads.map(async ({ name, url }, i) => {
        const file = ok[i]!
        const id = nextTransferId++
        const update = (sent: number, total: number) => setTransfers((all) => all.map((t) => (t.id === id ? { ...t, sent, total } : t)))
        const upload = uploadFile(url, file, update)
        cancels.current.add(upload.cancel)
        setTransfers((all) => [...all, { id, name, sent: 0, total: file.size, cancel: upload.cancel }])
        let outcome: 'attached' | 'cancelled' | 'failed' = 'failed'
        try {
          await upload.done
          outcome = 'attached'
          // Its row is there at once, at the top (newest first), not after the whole list has been read again.
          changeListed({ added: { name, size: file.size, type: file.type || 'application/octet-stream', createdAt: new Date() } })
        } catch (error) {
          if (error instanceof UploadCancelled) outcome = 'cancelled'
          else setProblems((all) => [...all, uploadErrorMessage(error, name, LIMIT)])
        } finally {
          // Stored (listed from now on), or not kept: either way no longer a name on its way.
          inProgress.current.delete(name)
          cancels.current.delete(upload.cancel)
          const buttons = [...(uploadsRef.current?.querySelectorAll('button') ?? [])]
          const focused = buttons.findIndex((button) => button === document.activeElement && button.dataset.upload === String(id))
          if (focused >= 0) focusAfterUpload.current = { id, index: focused }
          setTransfers((all) => all.filter((t) => t.id !== id))
        }
        return { outcome, removed: outcome === 'cancelled' ? await discard(name) : false }
      }),
    )
    const attached = results.filter((r) => r.outcome === 'attached').length
    if (attached > 0) {
      // A name storage could not keep as it was (storageSafeName, or a number for a name taken) is said, with the
      // name it is saved under: the list shows only that one (ADR 068).
      const names = uploads.flatMap(({ name }, i) => {
        if (results[i]!.outcome !== 'attached') return []
        const original = ok[i]!.name
        return [original === name ? name : `${original} (saved as “${name}”)`]
      })
      toast.success(attached === 1 ? 'File attached' : `${attached} files attached`, names.join(', '))
    }
    if (attached > 0 || results.some((r) => r.removed)) await refresh()
  }

  /**
   * Cancel keeps its word: a file whose last bytes had already reached storage when Cancel was pressed is stored
   * although the browser never saw the answer (ADR 051), so it is deleted here. True when something was deleted, or
   * when that could not be checked (the list is then read again and shows the truth).
   */
  async function discard(name: string): Promise<boolean> {
    try {
      // `ifStored`: a file that never arrived (the usual case) is no error, and no failed request in the console.
      return (await trpcClient.attachments.delete.mutate({ noteId, name, ifStored: true })).removed
    } catch (error) {
      if ((error as { data?: { code?: string } }).data?.code === 'NOT_FOUND') return false
      setProblems((all) => [...all, `“${name}” may have been stored just before Cancel: if it is in the list below, delete it there.`])
      return true
    }
  }

  const onDrop = (event: DragEvent<HTMLDivElement>) => {
    event.preventDefault()
    endDrag()
    void attach([...event.dataTransfer.files])
  }

  return (
    <section aria-labelledby="attachments-heading" className={panel.panel}>
      <div className={styles.heading}>
        <h2 id="attachments-heading" className={styles.headingTitle}>
          Attachments
        </h2>
        <p className={styles.headingText}>Files only you can open. Up to {LIMIT} each.</p>
      </div>
      <div
        className={styles.dropZone}
        data-over={over}
        data-testid="attachments-drop"
        {...dragZoneProps}
        onDrop={onDrop}
      >
        <input
          ref={inputRef}
          id="attachments-file"
          className={styles.fileInput}
          type="file"
          multiple
          onChange={(event) => {
            const files = [...(event.currentTarget.files ?? [])]
            event.currentTarget.value = ''
            void attach(files)
          }}
        />
        <label htmlFor="attachments-file" className={styles.pickButton}>
          Attach files
        </label>
        <span>or drop them here</span>
      </div>

      {problems.length > 0 ? (
        <FormMessage kind="error">
          {problems.map((problem) => (
            <span key={problem} style={{ display: 'block' }}>
              {problem}
            </span>
          ))}
        </FormMessage>
      ) : null}

      {transfers.length > 0 ? (
        <div ref={uploadsRef} aria-label="Uploads" role="group" className={styles.uploads}>
          {transfers.map((t) => {
            const percent = t.total > 0 ? Math.round((t.sent / t.total) * 100) : 0
            return (
              <div key={t.id} className={styles.progressRow} data-testid="upload-row">
                <span className={styles.fileName}>{t.name}</span>
                <span className={styles.fileMeta}>
                  {percent}% · {formatBytes(t.sent)} of {formatBytes(t.total)}
                </span>
                <button
                  type="button"
                  className={styles.smallButton}
                  data-upload={t.id}
                  onClick={t.cancel}
                  aria-label={`Cancel upload of ${t.name}`}
                >
                  Cancel
                </button>
                <progress aria-label={`Upload of ${t.name}`} max={100} value={percent} />
              </div>
            )
          })}
        </div>
      ) : null}

      {list.isError && files === undefined ? (
        <div className={styles.more}>
          <FormMessage kind="error">The files could not be loaded: {readableApiError(list.error)}</FormMessage>
          {/* While trying: aria-disabled, not `disabled`, which would drop a keyboard user's focus to <body>. */}
          <button
            type="button"
            className={styles.smallButton}
            aria-disabled={list.isFetching || undefined}
            onClick={() => {
              if (list.isFetching) return
              focusAfterRetry.current = true
              void list.refetch()
            }}
          >
            {list.isFetching ? 'Trying again…' : 'Try again'}
          </button>
        </div>
      ) : files === undefined ? (
        <p className={styles.quiet}>Loading files…</p>
      ) : files.length === 0 ? (
        <p className={styles.quiet}>No files yet.</p>
      ) : (
        <ul ref={listRef} className={styles.list} aria-label="Attached files">
          {files.slice(0, shown).map((file) => (
            <FileRow
              key={file.name}
              name={file.name}
              size={file.size}
              type={file.type}
              preparing={downloading.has(file.name)}
              onDownload={onDownload}
              onDelete={setConfirming}
            />
          ))}
        </ul>
      )}
      {files && more ? (
        <div className={styles.more}>
          <span className={styles.quiet}>
            {total === undefined ? `The newest ${groupDigits(shown)} files` : `The newest ${groupDigits(shown)} of ${groupDigits(total)} files`}
          </span>
          {/* While the longer list is on its way: aria-disabled, not `disabled`, which would drop focus to <body>. */}
          <button
            type="button"
            className={styles.smallButton}
            aria-disabled={showing || undefined}
            onClick={() => {
              if (showing) return
              focusShownFrom.current = shown
              setShown(shown + FILES_PER_PAGE)
            }}
          >
            {showing
              ? 'Showing more files…'
              : total === undefined
                ? 'Show more files'
                : `Show ${groupDigits(Math.max(1, Math.min(FILES_PER_PAGE, total - shown)))} more files`}
          </button>
        </div>
      ) : null}

      {confirming ? (
        <ConfirmDialog
          openOnMount
          id="delete-attachment"
          title="Delete this file?"
          text={`“${confirming}” will be deleted for good.`}
          confirmLabel="Delete file"
          pendingLabel="Deleting…"
          pending={remove.isPending}
          onConfirm={() => remove.mutate({ noteId, name: confirming })}
          onClose={() => {
            if (!remove.isPending) setConfirming(null)
          }}
        />
      ) : null}
    </section>
  )
})

interface FileRowProps {
  name: string
  size: number
  type: string
  /** Its download link is on its way. */
  preparing: boolean
  onDownload: (name: string) => void
  onDelete: (name: string) => void
}

/**
 * One file of the list. Memoized, with props that stay equal while the file does (text, numbers, callbacks made
 * once): an upload's progress (several updates a second per file) or a new file in the list renders no other row
 * again — with hundreds of files, each of those renders was a long task.
 */
const FileRow = memo(function FileRow({ name, size, type, preparing, onDownload, onDelete }: FileRowProps) {
  return (
    <li className={styles.item}>
      <span className={styles.fileName}>{name}</span>
      <span className={styles.fileMeta}>
        {formatBytes(size)} · {type}
      </span>
      <div className={styles.itemActions}>
        {/* Pending: aria-disabled, not `disabled`, which would drop a keyboard user's focus to <body>. */}
        <button
          type="button"
          className={styles.smallButton}
          aria-disabled={preparing || undefined}
          onClick={() => onDownload(name)}
          aria-label={preparing ? `Preparing download of ${name}` : `Download ${name}`}
        >
          {preparing ? 'Preparing…' : 'Download'}
        </button>
        <button type="button" className={styles.smallButton} onClick={() => onDelete(name)} aria-label={`Delete ${name}`}>
          Delete
        </button>
      </div>
    </li>
  )
})
