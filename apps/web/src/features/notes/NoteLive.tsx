import { useEffect, useLayoutEffect, useRef, useState } from 'react'

import { useTRPCClient, type RouterOutputs } from '../../lib/trpc'
import controls from '../../ui/controls.module.css'
import { toast } from '../toast'
import { LiveStatus } from './LiveStatus'
import { useNoteChanges, type NoteChange } from './live-notes'
import type { NoteDraft } from './NoteForm'
import styles from './note-page.module.css'

type Note = RouterOutputs['notes']['get']

/** What happened to the open note elsewhere, while this page holds edits the user has not saved. */
export type Elsewhere = { kind: 'changed'; theirs: Note } | { kind: 'deleted' } | null

const sameTime = (a: Date, b: Date) => Math.abs(a.getTime() - b.getTime()) < 1
const sameContent = (note: Pick<Note, 'title' | 'body'>, draft: NoteDraft) => note.title === draft.title && (note.body ?? '') === draft.body
const sameStored = (a: Pick<Note, 'title' | 'body'>, b: Pick<Note, 'title' | 'body'>) => a.title === b.title && (a.body ?? '') === (b.body ?? '')

/**
 * A ref to the latest render's value, for effects that run on their own triggers (a refused save, the end of this
 * page's own action) but must call the function of the render they run after.
 */
function useLatest<T>(value: T) {
  const ref = useRef(value)
  useEffect(() => {
    ref.current = value
  })
  return ref
}

interface Options {
  note: Note
  draft: NoteDraft
  dirty: boolean
  /**
   * This page is saving, pinning or deleting the note itself: changes arriving meanwhile wait until it is done (its
   * own change then has the time the page shows and is no news; one made elsewhere meanwhile is handled as usual).
   */
  busy: boolean
  /** Shows the stored note; `replaceDraft` also puts its text into the form. */
  show: (note: Note, replaceDraft: boolean) => void
  /**
   * How many of this page's saves were refused because the stored note is no longer the version they were based on
   * (or is gone): each one fetches the stored note and says what happened, as a change heard live would (ADR 066).
   */
  refusedSaves: number
}

/**
 * The open note, live (docs/decisions/044-live-notes.md). A change made elsewhere (another tab, another device):
 * without unsaved edits the page simply shows it; with unsaved edits that differ from it, the page keeps the user's
 * text and says so (`elsewhere.kind === 'changed'`), letting them look at the other version or keep theirs. A delete
 * elsewhere is said too (`'deleted'`), instead of a failing save; the typed text stays on screen and can be saved as
 * a new note. This tab's own saves come back as changes with the time it already shows, and are ignored. A pin
 * elsewhere keeps the edit time: the change's `pinned` tells it apart. A note deleted elsewhere and put back (Undo)
 * returns with its old time: its insert brings it back.
 */
function useNoteElsewhere({ note, draft, dirty, busy, show, refusedSaves }: Options) {
  const trpcClient = useTRPCClient()
  const [elsewhere, setElsewhere] = useState<Elsewhere>(null)

  const fetchLatest = async () => {
    try {
      return await trpcClient.notes.get.query({ id: note.id })
    } catch (error) {
      if ((error as { data?: { code?: string } }).data?.code === 'NOT_FOUND') return null
      throw error
    }
  }

  const fetchLatestRef = useLatest(fetchLatest)

  const consider = (latest: Note | null) => {
    if (latest === null) {
      setElsewhere({ kind: 'deleted' })
      return
    }
    const back = elsewhere?.kind === 'deleted' // restored elsewhere (the delete's Undo)
    if (!back && sameTime(latest.updatedAt, note.updatedAt) && latest.pinned === note.pinned) return
    // The text shown as stored is still the stored one (a pin, a restore as it was): nothing to say, edits stay.
    if (!dirty || sameContent(latest, draft) || sameStored(latest, note)) {
      show(latest, !dirty)
      if (elsewhere) setElsewhere(null)
      return
    }
    setElsewhere({ kind: 'changed', theirs: latest })
  }
  // The fetch takes a while: the user may start typing meanwhile. Its answer is weighed against the page as it is
  // when it arrives (edits typed during the fetch make the page dirty: the notice, never the other text over them).
  const considerRef = useLatest(consider)

  const handle = (change: NoteChange) => {
    const restored = elsewhere?.kind === 'deleted' && change.type === 'INSERT' && change.id === note.id
    if (elsewhere?.kind === 'deleted' && !restored && change.type !== 'resync') return
    if (change.type === 'DELETE') {
      if (change.id === note.id) setElsewhere({ kind: 'deleted' })
      return
    }
    if (change.type !== 'resync') {
      if (change.id !== note.id) return
      const samePin = change.pinned === undefined || change.pinned === note.pinned
      if (!restored && sameTime(new Date(change.updatedAt), note.updatedAt) && samePin) return
    }
    fetchLatest().then((latest) => considerRef.current(latest), () => {
      // Could not fetch it now: the next change or reconnect tries again; the user's text is untouched.
    })
  }

  // A save refused by the server: the note changed (or went away) without this page hearing of it in time — live
  // updates delayed or cut, or a save elsewhere crossing this one. The stored version is fetched and the notice shown
  // for it, the form untouched; the user's text already stored there (saved elsewhere too) needs nothing more.
  const afterRefusal = (latest: Note | null) => {
    if (latest === null) setElsewhere({ kind: 'deleted' })
    else if (sameContent(latest, draft)) {
      show(latest, false)
      setElsewhere(null)
    } else setElsewhere({ kind: 'changed', theirs: latest })
  }
  const afterRefusalRef = useLatest(afterRefusal)
  useEffect(() => {
    if (refusedSaves === 0) return
    fetchLatestRef.current().then(
      (latest) => afterRefusalRef.current(latest),
      () => toast.error('Your changes were not saved', 'This note was changed elsewhere and could not be loaded. Save again to compare.'),
    )
  }, [refusedSaves, fetchLatestRef, afterRefusalRef]) // the refs never change

  // Changes that arrived while this page was saving, pinning or deleting: looked at once it is done, against the
  // note as its own action left it.
  const waiting = useRef<NoteChange[]>([])
  const live = useNoteChanges((change) => {
    if (busy) waiting.current.push(change)
    else handle(change)
  })
  const handleRef = useLatest(handle)
  useEffect(() => {
    if (busy || waiting.current.length === 0) return
    const arrived = waiting.current
    waiting.current = []
    const relevant = arrived.filter((change) => change.type === 'resync' || change.id === note.id)
    const news = relevant.filter(
      (change) =>
        change.type === 'resync' ||
        change.type === 'DELETE' ||
        !sameTime(new Date(change.updatedAt), note.updatedAt) ||
        (change.pinned !== undefined && change.pinned !== note.pinned),
    )
    if (news.length === 0) return // only this page's own change coming back
    const last = relevant[relevant.length - 1]!
    handleRef.current(last.type === 'DELETE' ? last : { type: 'resync' })
  }, [busy, note, handleRef])

  return { elsewhere, setElsewhere, live }
}

interface NoteLiveProps extends Options {
  /** Replaces the form's text (the other version, or the user's own brought back). */
  setDraft: (draft: NoteDraft) => void
  /** The note was deleted elsewhere (true), or restored there (false). */
  onGone: (gone: boolean) => void
  /** NoteLive is on the page (true), or left it (false): a refused save is then said by its notice. */
  onShown: (shown: boolean) => void
  onSaveAsNew: () => void
  savingAsNew: boolean
}

/**
 * The note page's live part, loaded after the page is up (next/dynamic in NoteScreen): follows the note's changes
 * elsewhere, shows the notice above the form when it changed under unsaved edits or went away, and says when live
 * updates are interrupted. None of it is first-load JS.
 */
export default function NoteLive({ setDraft, onGone, onShown, onSaveAsNew, savingAsNew, ...options }: NoteLiveProps) {
  const { elsewhere, setElsewhere, live } = useNoteElsewhere(options)
  useEffect(() => {
    onShown(true)
    return () => onShown(false)
  }, [onShown])
  const gone = elsewhere?.kind === 'deleted'
  useEffect(() => onGone(gone), [gone, onGone])
  // The notice goes with its answer, and focus on its button with it (to <body>): it goes to the note's text, where
  // the user goes on writing (and saves).
  const answered = () => {
    setElsewhere(null)
    requestAnimationFrame(focusNoteText)
  }
  const showTheirs = (theirs: Note) => {
    const mine = options.draft
    options.show(theirs, true)
    answered()
    toast.info('Showing the other version', 'Your changes were set aside.', {
      action: { label: 'Bring mine back', onAction: () => setDraft(mine) },
    })
  }
  const keepMine = (theirs: Note) => {
    options.show(theirs, false)
    answered()
  }
  return (
    <>
      <LiveStatus live={live} />
      {elsewhere ? (
        // Keyed by kind: "changed" becoming "deleted" replaces the buttons, as the notice leaving would.
        <ElsewhereBanner key={elsewhere.kind} elsewhere={elsewhere} onShowTheirs={showTheirs} onKeepMine={keepMine} onSaveAsNew={onSaveAsNew} savingAsNew={savingAsNew} />
      ) : null}
    </>
  )
}

interface BannerProps {
  elsewhere: NonNullable<Elsewhere>
  /** Puts the other version into the form (the user's text can be brought back from the toast). */
  onShowTheirs: (theirs: Note) => void
  /** Keeps the user's text; saving replaces the other version. */
  onKeepMine: (theirs: Note) => void
  onSaveAsNew: () => void
  savingAsNew: boolean
}

const focusNoteText = () => document.querySelector<HTMLElement>('form[aria-label="Edit note"] textarea')?.focus()

/**
 * The notice above the form when the note changed or went away elsewhere. It can also go by itself (the other
 * version settles on the text typed here or on the one shown as stored, the note comes back after an Undo, or it is
 * deleted and the notice changes its buttons): focus on one of its buttons would drop to <body> with it, so it goes
 * to the note's text, as after an answer.
 */
function ElsewhereBanner({ elsewhere, onShowTheirs, onKeepMine, onSaveAsNew, savingAsNew }: BannerProps) {
  const changed = elsewhere.kind === 'changed'
  const button = `${controls.button} ${controls.small} ${controls.regular}`
  const ref = useRef<HTMLDivElement>(null)
  useLayoutEffect(() => {
    const element = ref.current
    // Runs before the element leaves the document: the focused button is still in it.
    return () => {
      if (element?.contains(document.activeElement)) focusNoteText()
    }
  }, [])
  return (
    <div ref={ref} role="alert" className={styles.elsewhere} data-testid="note-elsewhere">
      <span className={styles.elsewhereTitle}>
        {changed ? 'This note was changed in another tab or device' : 'This note was deleted in another tab or device'}
      </span>
      <span className={styles.elsewhereText}>
        {changed
          ? 'Your unsaved changes are still here. Look at the other version, or keep yours — saving then replaces the other version.'
          : 'Your text is still here and can be saved as a new note.'}
      </span>
      <div className={styles.elsewhereActions}>
        {changed ? (
          <>
            <button type="button" className={button} onClick={() => onShowTheirs(elsewhere.theirs)}>
              Show the other version
            </button>
            <button type="button" className={button} onClick={() => onKeepMine(elsewhere.theirs)}>
              Keep my changes
            </button>
          </>
        ) : (
          // Saving: aria-disabled, not `disabled`, which would drop a keyboard user's focus to <body> (and leave it
          // there after a failure, where Enter does nothing).
          <button type="button" className={button} aria-disabled={savingAsNew || undefined} onClick={() => savingAsNew || onSaveAsNew()}>
            {savingAsNew ? 'Saving…' : 'Save as a new note'}
          </button>
        )}
      </div>
    </div>
  )
}
