import { useEffect, useRef, type ReactNode, type RefObject } from 'react'
import { Button, Paragraph, Text, XStack, YStack } from 'tamagui'

import styles from './confirm-dialog.module.css'

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
      <YStack gap="$3">
        <Text render="h2" id={`${id}-title`} fontSize="$7" lineHeight="$7" fontWeight="700" color="$color12">
          {title}
        </Text>
        <Paragraph id={`${id}-text`} fontSize="$4" lineHeight="$4" color="$color11">
          {text}
        </Paragraph>
        {children}
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
            {pending ? pendingLabel : confirmLabel}
          </button>
        </XStack>
      </YStack>
    </dialog>
  )
}
