import { useEffect, useRef, type ReactNode, type RefObject } from 'react'

import styles from './confirm-dialog.module.css'
import controls from './controls.module.css'

/**
 * A destructive action's confirmation: a native modal <dialog> (the page behind is inert, Escape closes it — not
 * while the action is under way) with a title, an explanation, optional extra content, "Cancel" and a red confirm.
 * Either the caller opens it (`dialogRef.current.showModal()`: the browser focuses "Cancel", the first control) or,
 * with `openOnMount`, it opens itself when mounted and puts focus on "Cancel", the safe choice.
 */
export function ConfirmDialog({
  dialogRef: givenRef,
  id,
  title,
  text,
  children,
  confirmLabel,
  pendingLabel,
  pending,
  onConfirm,
  onClose,
  openOnMount = false,
}: {
  dialogRef?: RefObject<HTMLDialogElement | null>
  /** Prefix of the title's and the text's element ids. */
  id: string
  title: string
  text: ReactNode
  children?: ReactNode
  confirmLabel: string
  pendingLabel: string
  pending: boolean
  onConfirm: () => void
  onClose?: () => void
  openOnMount?: boolean
}) {
  const ownRef = useRef<HTMLDialogElement>(null)
  const dialogRef = givenRef ?? ownRef
  const cancelRef = useRef<HTMLButtonElement>(null)

  useEffect(() => {
    const dialog = dialogRef.current
    if (!openOnMount || !dialog || dialog.open) return
    dialog.showModal()
    cancelRef.current?.focus()
  }, [openOnMount, dialogRef])

  return (
    <dialog
      ref={dialogRef}
      className={styles.dialog}
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-text`}
      onClose={onClose}
      onCancel={(event) => {
        if (pending) event.preventDefault()
      }}
    >
      <div className={styles.body}>
        <h2 id={`${id}-title`} className={styles.title}>
          {title}
        </h2>
        <p id={`${id}-text`} className={styles.text}>
          {text}
        </p>
        {children}
        <div className={styles.actions}>
          <button
            ref={cancelRef}
            type="button"
            className={`${controls.button} ${controls.small} ${controls.outlined}`}
            // While the action is under way it cannot be called back: Cancel does nothing then, as Escape.
            aria-disabled={pending || undefined}
            onClick={() => pending || dialogRef.current?.close()}
          >
            Cancel
          </button>
          {/* Pending: aria-disabled, not `disabled`, which would drop a keyboard user's focus to <body>. */}
          <button type="button" className={styles.dangerButton} aria-disabled={pending || undefined} onClick={() => pending || onConfirm()}>
            {pending ? pendingLabel : confirmLabel}
          </button>
        </div>
      </div>
    </dialog>
  )
}
