import Link from 'next/link'

import { ADD_EMAIL_PATH } from '../../lib/guest'
import { ConfirmDialog } from '../../ui/ConfirmDialog'

/**
 * "Sign out of the guest session?": a guest's notes cannot be reached again after signing out. Opens when mounted
 * with focus on "Cancel"; focus goes back to the account button when it closes (the caller's `onClose`). Loaded
 * only when a guest chooses Sign out.
 */
export function GuestSignOutDialog({
  pending,
  onConfirm,
  onClose,
}: {
  pending: boolean
  onConfirm: () => void
  onClose: () => void
}) {
  return (
    <ConfirmDialog
      openOnMount
      id="guest-sign-out"
      title="Sign out of the guest session?"
      text="Your notes will be lost: a guest session has no email or password, so nobody can sign in to it again. To keep them, add an email and password first."
      confirmLabel="Sign out anyway"
      pendingLabel="Signing out…"
      pending={pending}
      onConfirm={onConfirm}
      onClose={onClose}
    >
      {/* Closing the dialog on the way out: the page behind stays usable during the navigation. */}
      <Link href={ADD_EMAIL_PATH} className="text-link" onClick={(event) => event.currentTarget.closest('dialog')?.close()}>
        Add email and password
      </Link>
    </ConfirmDialog>
  )
}
