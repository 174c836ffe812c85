import { useMutation, useQueryClient } from '@tanstack/react-query'
import dynamic from 'next/dynamic'
import Link from 'next/link'
import { useRouter } from 'next/router'
import { useCallback, useEffect, useRef, useState } from 'react'

import { useTRPC, useTRPCClient, type RouterOutputs } from '../../lib/trpc'
import { ArrowLeftIcon, PinIcon, TrashIcon } from '../../ui/icons'
import { focusMainHeading } from '../../lib/focus-heading'
import { PageTitle } from '../../lib/page-title'
import { guardUnsavedChanges } from '../../lib/unsaved-changes'
import { useFocusBack } from '../../lib/use-focus-back'
import { AuthForm, SubmitButton, toastApiError, useSession } from '../auth'
import { toast } from '../toast'
import { attachedFiles, filesDeletedForGood, formatFull, formatWhen } from './format'
import { forgetKeptEdits, keepEdits, readKeptEdits, type KeptEdits } from './kept-edits'
import { listUrl } from './list-url'
import { checkNote, NoteFields, serverFieldErrors, type NoteDraft, type NoteFieldErrors } from './NoteForm'
import { ConfirmDialog } from '../../ui/ConfirmDialog'
import controls from '../../ui/controls.module.css'
import panel from '../../ui/panel.module.css'
import styles from './note-page.module.css'

type Note = RouterOutputs['notes']['get']

// The note's files: their own chunk, fetched after the page shows (the page's first load stays in budget, ADR 038).
const AttachmentsPanel = dynamic(() => import('../attachments/AttachmentsPanel').then((m) => m.AttachmentsPanel), {
  ssr: false,
  loading: () => <div className={styles.attachmentsRoom} aria-hidden />,
})

/** The note as the page's server side hands it over (JSON: dates as ISO strings). */
export interface NoteScreenProps {
  note: Omit<Note, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string }
}

const toDraft = (note: Pick<Note, 'title' | 'body' | 'pinned'>): NoteDraft => ({
  title: note.title,
  body: note.body ?? '',
  pinned: note.pinned,
})

/** The page's live part (docs/decisions/044-live-notes.md), loaded after the page is up. */
const NoteLive = dynamic(() => import('./NoteLive'), { ssr: false })

const sameContent = (a: NoteDraft, b: NoteDraft) => a.title === b.title && a.body === b.body

const LEAVE_QUESTION = 'Leave this note? Your changes are not saved.'

function keepUnsaved(unsaved: { userId: string; edits: KeptEdits } | null, noteId: string) {
  if (unsaved) keepEdits(unsaved.userId, noteId, unsaved.edits)
}

/** The position of the current history entry, where the browser says (the Navigation API), else null. */
const historyIndex = (): number | null =>
  (window as { navigation?: { currentEntry?: { index: number } | null } }).navigation?.currentEntry?.index ?? null

/** One note: read and edit it (title, body), pin it, delete it with a confirmation and an Undo toast. */
export function NoteScreen({ note: initial }: NoteScreenProps) {
  const trpc = useTRPC()
  const trpcClient = useTRPCClient()
  const queryClient = useQueryClient()
  const router = useRouter()
  // The page's note comes from the server render; each mutation answers with the stored row, which replaces it.
  const [note, setNote] = useState<Note>(() => ({
    ...initial,
    createdAt: new Date(initial.createdAt),
    updatedAt: new Date(initial.updatedAt),
  }))
  const [draft, setDraft] = useState<NoteDraft>(() => toDraft(note))
  const [errors, setErrors] = useState<NoteFieldErrors>({})
  const [tried, setTried] = useState(false)
  const dialogRef = useRef<HTMLDialogElement>(null)
  const [fileCount, setFileCount] = useState<{ count: number; exact: boolean } | null>(null)
  const onFileCount = useCallback((count: number, exact: boolean) => setFileCount({ count, exact }), [])
  const saved = toDraft(note)
  const dirty = !sameContent(draft, saved)
  const { user } = useSession()

  // Leaving with unsaved changes asks first: reload or closing the tab (the browser's own prompt), any link to
  // another page of the app (a confirm, checked before Next's Link sees the click: a refused click is prevented),
  // the browser's Back and Forward (a refused one is undone, so the history stays as it was), and Sign out in the
  // account menu (lib/unsaved-changes.ts). Once the user agreed, nothing asks again on the way out.
  const leaving = useRef(false)
  useEffect(() => {
    if (!dirty) return
    const confirmLeave = () => {
      if (leaving.current) return true
      if (!window.confirm(LEAVE_QUESTION)) return false
      leaving.current = true
      return true
    }
    const onBeforeUnload = (event: BeforeUnloadEvent) => event.preventDefault()
    const onClick = (event: MouseEvent) => {
      if (leaving.current || event.defaultPrevented || event.button !== 0) return
      if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return // a new tab or window: nothing is lost
      const link = event.target instanceof Element ? event.target.closest('a[href]') : null
      if (!(link instanceof HTMLAnchorElement) || (link.target && link.target !== '_self')) return
      const url = new URL(link.href, window.location.href)
      if (url.origin !== window.location.origin || url.pathname === window.location.pathname) return
      if (!confirmLeave()) event.preventDefault()
    }
    // Back / Forward: the browser has already moved to the other entry when Next asks; a refusal moves back to this
    // note's entry (by the distance the Navigation API gives, else one step forward: Back is what people press).
    const noteKey = (window.history.state as { key?: unknown } | null)?.key
    const noteIndex = historyIndex()
    router.beforePopState((state) => {
      if (noteKey !== undefined && (state as { key?: unknown }).key === noteKey) return false // back on this note
      if (confirmLeave()) return true
      const here = historyIndex()
      window.history.go(noteIndex !== null && here !== null && here !== noteIndex ? noteIndex - here : 1)
      return false
    })
    const stopGuard = guardUnsavedChanges(confirmLeave)
    window.addEventListener('beforeunload', onBeforeUnload)
    document.addEventListener('click', onClick, true)
    return () => {
      router.beforePopState(() => true)
      stopGuard()
      window.removeEventListener('beforeunload', onBeforeUnload)
      document.removeEventListener('click', onClick, true)
    }
  }, [dirty, router])

  // The session ended with edits unsaved (signed out in another tab, or elsewhere): the page goes to the sign-in
  // form, and the text is kept in this tab for this user, offered back when they open the note again (ADR 065).
  const keepOnExit = useRef<{ userId: string; edits: KeptEdits } | null>(null)
  useEffect(() => {
    if (user) keepOnExit.current = dirty ? { userId: user.id, edits: { title: draft.title, body: draft.body } } : null
  })
  const noteId = note.id
  const signedIn = Boolean(user)
  useEffect(() => {
    if (!signedIn && !leaving.current) keepUnsaved(keepOnExit.current, noteId)
  }, [signedIn, noteId])
  // The page went without asking (to the sign-in form, to a 404 for another user signed in elsewhere): kept too.
  useEffect(
    () => () => {
      if (!leaving.current) keepUnsaved(keepOnExit.current, noteId)
    },
    [noteId],
  )
  const [kept, setKept] = useState<KeptEdits | null>(null)
  const userId = user?.id
  useEffect(() => {
    if (!userId) return
    const found = readKeptEdits(userId, note.id)
    if (!found) return
    if (sameContent({ ...found, pinned: false }, { ...toDraft(note), pinned: false })) forgetKeptEdits(userId, note.id)
    else setKept(found)
  }, [userId, note])
  const bodyFieldRef = useRef<HTMLDivElement>(null)
  const answerKept = (restore: boolean) => {
    if (!kept || !userId) return
    if (restore) setDraft((current) => ({ ...current, title: kept.title, body: kept.body }))
    forgetKeptEdits(userId, note.id)
    setKept(null)
    bodyFieldRef.current?.querySelector<HTMLElement>('textarea')?.focus()
  }

  // Ctrl+S / Cmd+S saves, as in any editor (instead of the browser's "save page"). Not under a modal dialog (the
  // create modal, a delete confirmation): the keys are for what is in front, never the note the user cannot see.
  const submitRef = useRef<() => void>(() => {})
  useEffect(() => {
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key.toLowerCase() !== 's' || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return
      if (event.defaultPrevented || document.querySelector(':modal')) return
      event.preventDefault()
      submitRef.current()
    }
    window.addEventListener('keydown', onKeyDown)
    return () => window.removeEventListener('keydown', onKeyDown)
  }, [])

  const invalidateList = () => queryClient.invalidateQueries({ queryKey: trpc.notes.list.pathKey() })

  // Saves refused because the note changed or went away since the version this page edits (ADR 066): NoteLive
  // fetches the stored note and shows the notice it shows for a change heard live; the form keeps every character.
  const [refusedSaves, setRefusedSaves] = useState(0)
  // Whether NoteLive is on the page: it loads after the page, and may never arrive (a cold load, then offline).
  const liveShown = useRef(false)
  const onLiveShown = useCallback((shown: boolean) => {
    liveShown.current = shown
  }, [])
  // Answers of this page's pins so far: a save's answer tells the pin as it was when the save was stored, which a pin
  // answered while the save was on its way knows better (its answer may arrive first: two requests, two connections).
  const pinAnswers = useRef(0)
  const update = useMutation(
    trpc.notes.update.mutationOptions({
      onMutate: () => ({ pinAnswers: pinAnswers.current }),
      onSuccess: async (updated, sent, sentWhen) => {
        setNote((current) => (sentWhen.pinAnswers === pinAnswers.current ? updated : { ...updated, pinned: current.pinned }))
        // What was sent takes its stored form; text typed while the save ran stays in the form, unsaved, saved next.
        setDraft((current) => ({
          ...current,
          title: current.title === sent.title ? updated.title : current.title,
          body: current.body === sent.body ? (updated.body ?? '') : current.body,
        }))
        setTried(false)
        // One "Saved" per note, renewed by each save: saving often does not pile copies over the note (ADR 153).
        toast.success('Saved', updated.title, { key: `saved:${updated.id}` })
        await invalidateList()
      },
      onError: (error) => {
        if (error.data?.code === 'CONFLICT' || error.data?.code === 'NOT_FOUND') setRefusedSaves((count) => count + 1)
        if (error.data?.code === 'CONFLICT') {
          // NoteLive's notice says it and offers the ways on; without NoteLive, a toast says it (the text stays).
          if (!liveShown.current) toast.error('Your changes were not saved', 'This note was changed in another tab or device. Your text is still here: copy it before you reload to see the other version.')
          return
        }
        setErrors(serverFieldErrors(error.data))
        toastApiError('Your changes were not saved', error, error.data?.zodError ? 'Check the fields marked below.' : error.message)
      },
    }),
  )

  // Where focus was when a save started: a Save button disabled while saving drops it to <body>; it goes back.
  const rememberFocus = useFocusBack(update.isPending)

  const setPinned = useMutation(
    trpc.notes.setPinned.mutationOptions({
      onSuccess: async (updated) => {
        pinAnswers.current += 1
        // Stored before a save whose answer came first: the pin is news, the rest of the row is older than the page's.
        setNote((current) => (updated.updatedAt.getTime() < current.updatedAt.getTime() ? { ...current, pinned: updated.pinned } : updated))
        toast.success(updated.pinned ? 'Pinned' : 'Unpinned', updated.title)
        await invalidateList()
      },
      onError: (error) => toastApiError('Could not change the pin', error),
    }),
  )

  const remove = useMutation(
    trpc.notes.delete.mutationOptions({
      onSuccess: async (deleted) => {
        dialogRef.current?.close()
        leaving.current = true // the note is gone: its unsaved edits go with it
        await router.push(listUrl())
        // The note's page went, and focus with it: to the list's heading (ADR 132).
        focusMainHeading()
        await invalidateList()
        // Its files went for good before the note (ADR 037): Undo brings back the note only, and says so.
        const files = deleted.attachmentsRemoved
        const filesGone = filesDeletedForGood(files)
        let restoring = false // a second click (a double click) on Undo does nothing more
        toast.info('Note deleted', `${deleted.title}${filesGone}`, {
          action: {
            label: 'Undo',
            onAction: () => {
              if (restoring) return
              restoring = true
              trpcClient.notes.restore
                .mutate(deleted)
                .then(async (restored) => {
                  toast.success('Note restored', files === 0 ? restored.title : `${restored.title} (without its files)`)
                  await invalidateList()
                })
                .catch((error: Error) => {
                  restoring = false
                  toastApiError('The note could not be restored', error)
                })
            },
          },
        })
      },
      onError: (error) => {
        dialogRef.current?.close()
        toastApiError('The note was not deleted', error)
      },
    }),
  )

  // Deleted elsewhere while open (docs/decisions/044-live-notes.md): saving, pinning and deleting stop.
  const [gone, setGone] = useState(false)
  const onGone = useCallback((value: boolean) => setGone(value), [])
  const showStored = useCallback((latest: Note, replaceDraft: boolean) => {
    setNote(latest)
    if (replaceDraft) setDraft(toDraft(latest))
  }, [])
  const saveAsNew = useMutation(
    trpc.notes.create.mutationOptions({
      onSuccess: async (created) => {
        leaving.current = true
        toast.success('Saved as a new note', created.title)
        await invalidateList()
        await router.replace(`/notes/${created.id}`)
      },
      onError: (error) => toastApiError('The note was not saved', error),
    }),
  )

  const onChange = (next: NoteDraft) => {
    setDraft(next)
    if (tried) setErrors(checkNote(next))
  }

  const submit = () => {
    if (gone) {
      toast.error('This note was deleted elsewhere', 'Save your text as a new note from the notice above.')
      return
    }
    if (update.isPending || !dirty) return
    setTried(true)
    const found = checkNote(draft)
    setErrors(found)
    if (Object.keys(found).length > 0) return
    rememberFocus()
    // Based on the version the page shows (rendered, saved, or accepted from elsewhere): a newer one is not replaced.
    update.mutate({ id: note.id, title: draft.title, body: draft.body, baseUpdatedAt: note.updatedAt })
  }
  useEffect(() => {
    submitRef.current = submit
  })

  return (
    <div className={styles.page}>
      <div className={styles.bar}>
        <Link href={listUrl()} className={styles.backLink}>
          <ArrowLeftIcon size={16} />
          All notes
        </Link>
        <div className={styles.actions}>
          <button
            type="button"
            className={`${controls.button} ${controls.small} ${controls.iconGap} ${controls.outlined}`}
            aria-pressed={note.pinned}
            // Pending, or the note deleted elsewhere: aria-disabled, not `disabled`, which would drop a keyboard
            // user's focus to <body>.
            aria-disabled={setPinned.isPending || gone || undefined}
            onClick={() => setPinned.isPending || gone || setPinned.mutate({ id: note.id, pinned: !note.pinned })}
          >
            <PinIcon size={15} fill={note.pinned ? 'currentColor' : 'none'} />
            <span>{note.pinned ? 'Unpin' : 'Pin'}</span>
          </button>
          <button
            type="button"
            className={`${controls.button} ${controls.small} ${controls.iconGap} ${controls.outlined} t_red ${styles.danger}`}
            aria-disabled={gone || undefined}
            onClick={() => gone || dialogRef.current?.showModal()}
          >
            <TrashIcon size={15} />
            <span>Delete</span>
          </button>
        </div>
      </div>

      <NoteLive
        note={note}
        draft={draft}
        dirty={dirty}
        busy={update.isPending || setPinned.isPending || remove.isPending}
        refusedSaves={refusedSaves}
        show={showStored}
        setDraft={setDraft}
        onGone={onGone}
        onShown={onLiveShown}
        onSaveAsNew={() => {
          const found = checkNote(draft)
          setTried(true)
          setErrors(found)
          if (Object.keys(found).length === 0) saveAsNew.mutate({ title: draft.title, body: draft.body })
        }}
        savingAsNew={saveAsNew.isPending}
      />

      {kept ? (
        <div role="status" className={styles.elsewhere} data-testid="note-unsaved-kept">
          <span className={styles.elsewhereTitle}>Your unsaved changes to this note were kept</span>
          <span className={styles.elsewhereText}>
            The page closed before they were saved (you were signed out, or left it). Restore them into the form and
            save, or discard them.
          </span>
          <div className={styles.elsewhereActions}>
            <button type="button" className={`${controls.button} ${controls.small} ${controls.regular}`} onClick={() => answerKept(true)}>
              Restore my changes
            </button>
            <button type="button" className={`${controls.button} ${controls.small} ${controls.regular}`} onClick={() => answerKept(false)}>
              Discard them
            </button>
          </div>
        </div>
      ) : null}

      <div className={panel.panel}>
        <PageTitle name={note.title} />
        <h1 className={styles.title} dir="auto">
          {note.title}
        </h1>
        <p className={styles.dates}>
          Created <time dateTime={note.createdAt.toISOString()}>{formatFull(note.createdAt)}</time> · Last edited{' '}
          <time dateTime={note.updatedAt.toISOString()} title={formatFull(note.updatedAt)}>
            {formatWhen(note.updatedAt)}
          </time>
        </p>
        <AuthForm label="Edit note" onSubmit={submit}>
          <div ref={bodyFieldRef}>
            <NoteFields draft={draft} onChange={onChange} errors={errors} bodyRows={12} />
          </div>
          <div className={styles.saveRow}>
            <span className={styles.saveState} aria-live="polite">
              {dirty ? 'Unsaved changes · Ctrl+S saves' : 'All changes saved'}
            </span>
            <SubmitButton pending={update.isPending} pendingLabel="Saving…">
              Save changes
            </SubmitButton>
          </div>
        </AuthForm>
      </div>

      {/* Signed out (in another tab): no more requests for the files, the page is on its way to the sign-in form. */}
      {user ? <AttachmentsPanel noteId={note.id} onCountChange={onFileCount} /> : null}

      <ConfirmDialog
        dialogRef={dialogRef}
        id="delete-note"
        title="Delete this note?"
        text={
          fileCount?.count
            ? `“${note.title}” and its ${fileCount.exact ? attachedFiles(fileCount.count) : `more than ${attachedFiles(fileCount.count)}`} will be deleted. Undo from the notification brings back the note for a few seconds, not the files: they are gone for good.`
            : `“${note.title}” will be deleted. You can undo this from the notification for a few seconds.`
        }
        confirmLabel="Delete note"
        pendingLabel="Deleting…"
        pending={remove.isPending}
        onConfirm={() => remove.mutate({ id: note.id })}
      />
    </div>
  )
}
