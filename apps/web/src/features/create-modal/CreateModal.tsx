import Link from 'next/link'
import { useEffect, useId, useRef, useState } from 'react'

import { ApiProvider } from '../../lib/api-provider'
import controls from '../../ui/controls.module.css'
import { CloseIcon } from '../../ui/icons'
import { secondFactorPath, useSession } from '../auth'
import { CreateNoteForm } from '../notes'
import styles from './create-modal.module.css'
import { takeCreateModalOpener, useCreateModal } from './create-modal-store'

/**
 * The global create modal: the new-note form in a native modal <dialog> (the page behind is inert, focus stays inside,
 * Escape closes it — the browser's). Focus moves into it on open (the title field, its first control) and back to
 * the opener on close; Escape, Cancel and the Close button close it, keeping the draft (it lives in a store). It
 * fades and slides in and out (Tamagui's `quickest`, 200 ms), in CSS. No Tamagui: the frame that renders it has no
 * Tamagui provider, and its runtime would be fetched after every signed-in page's load for it (ADR 053).
 */
export default function CreateModal() {
  const open = useCreateModal((s) => s.open)
  const setOpen = useCreateModal((s) => s.setOpen)
  const { user, needsSecondFactor } = useSession()
  const canWrite = Boolean(user) && !needsSecondFactor
  const dialogRef = useRef<HTMLDialogElement>(null)
  // A new form after every closing (no error messages left for the next opening); the draft itself is kept. Not at
  // the opening: the form would be replaced just after the dialog focused its title field.
  const [closings, setClosings] = useState(0)
  const id = useId()

  useEffect(() => {
    const dialog = dialogRef.current
    if (!dialog) return
    if (open && !dialog.open) dialog.showModal()
    else if (!open && dialog.open) dialog.close()
  }, [open])

  return (
    <dialog
      ref={dialogRef}
      className={styles.dialog}
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-text`}
      // Ctrl+S / Cmd+S creates the note, as it saves one on its page (ADR 131): the form in front takes the keys.
      onKeyDown={(event) => {
        if (event.key.toLowerCase() !== 's' || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return
        event.preventDefault()
        event.currentTarget.querySelector('form')?.requestSubmit()
      }}
      onClose={() => {
        setOpen(false)
        setClosings((n) => n + 1)
        const opener = takeCreateModalOpener()
        if (opener?.isConnected) opener.focus()
      }}
    >
      <h2 id={`${id}-title`} className={styles.title}>
        New note
      </h2>
      <p id={`${id}-text`} className={styles.text}>
        {canWrite
          ? 'A title, and anything you want to keep. Only you can read it.'
          : user
            ? 'Finish two-factor sign-in to write notes. What you typed is kept.'
            : 'Sign in to write notes.'}
      </p>
      {canWrite ? (
        // The modal opens on any page, also those without the API providers: it brings its own, on the browser's
        // one query cache, so a saved note shows in the list at once.
        <ApiProvider>
          <CreateNoteForm key={closings} onDone={() => setOpen(false)} />
        </ApiProvider>
      ) : (
        <div className={styles.actions}>
          <Link href={user ? secondFactorPath() : '/sign-in'} className="button-link" onClick={() => setOpen(false)}>
            {user ? 'Enter a code' : 'Sign in'}
          </Link>
        </div>
      )}
      {/* Last in the DOM, so the dialog's first focus goes to the form's title field; shown top right. */}
      <button
        type="button"
        aria-label="Close"
        className={`${controls.button} ${controls.small} ${controls.circular} ${controls.chromeless} ${styles.close}`}
        onClick={() => setOpen(false)}
      >
        <CloseIcon size={18} />
      </button>
    </dialog>
  )
}
