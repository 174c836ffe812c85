import Link from 'next/link'
import { useEffect, useRef } from 'react'
import { Button, Paragraph, Text, XStack, YStack } from 'tamagui'

import { ADD_EMAIL_PATH } from '../../lib/guest'
import styles from './guest-dialog.module.css'

/**
 * "Sign out of the guest session?": a guest's notes cannot be reached again after signing out. A native modal
 * <dialog> (the page behind is inert, Escape closes it); focus starts on "Cancel", the safe choice, and goes back
 * to the account button when it closes (the caller's `onClose`). Loaded only when a guest chooses Sign out.
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
  const dialogRef = useRef<HTMLDialogElement>(null)
  const cancelRef = useRef<HTMLButtonElement>(null)

  useEffect(() => {
    const dialog = dialogRef.current
    if (!dialog || dialog.open) return
    dialog.showModal()
    cancelRef.current?.focus()
  }, [])

  return (
    <dialog
      ref={dialogRef}
      className={styles.dialog}
      aria-labelledby="guest-sign-out-title"
      aria-describedby="guest-sign-out-text"
      onClose={onClose}
      onCancel={(event) => {
        // Escape: not while the sign-out is under way (it ends on the sign-in page anyway).
        if (pending) event.preventDefault()
      }}
    >
      <YStack gap="$3">
        <Text render="h2" id="guest-sign-out-title" fontSize="$7" lineHeight="$7" fontWeight="700" color="$color12">
          Sign out of the guest session?
        </Text>
        <Paragraph id="guest-sign-out-text" fontSize="$4" lineHeight="$4" color="$color11">
          Your notes will be lost: a guest session has no email or password, so nobody can sign in to it again. To keep
          them, add an email and password first.
        </Paragraph>
        <Link href={ADD_EMAIL_PATH} className="text-link" onClick={() => dialogRef.current?.close()}>
          Add email and password
        </Link>
        <XStack gap="$2" justifyContent="flex-end" paddingTop="$2" flexWrap="wrap">
          <Button
            ref={cancelRef as never}
            size="$3"
            onPress={() => dialogRef.current?.close()}
            borderWidth={1}
            borderColor="$borderColor"
            backgroundColor="$background"
            focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid', outlineOffset: 2 }}
          >
            <Text fontSize="$3" fontWeight="600" color="$color12">
              Cancel
            </Text>
          </Button>
          <button type="button" className={styles.dangerButton} disabled={pending} onClick={onConfirm}>
            {pending ? 'Signing out…' : 'Sign out anyway'}
          </button>
        </XStack>
      </YStack>
    </dialog>
  )
}
