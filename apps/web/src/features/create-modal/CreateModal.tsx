import Link from 'next/link'
import { Button, Dialog, XStack } from 'tamagui'

import { CloseIcon } from '../../ui/icons'
import { useSession } from '../auth'
import { CreateNoteForm } from '../notes'
import { takeCreateModalOpener, useCreateModal } from './create-modal-store'

/**
 * The global create modal: the new-note form. Focus moves into it on open (the title field) and back to the
 * opener on close (Tamagui's focus scope); Escape, Cancel and the Close button close it, keeping the draft.
 */
export default function CreateModal() {
  const open = useCreateModal((s) => s.open)
  const setOpen = useCreateModal((s) => s.setOpen)
  const { user } = useSession()

  return (
    <Dialog modal open={open} onOpenChange={setOpen}>
      <Dialog.Portal>
        <Dialog.Overlay
          key="overlay"
          transition="quickest"
          opacity={0.8}
          backgroundColor="$shadow6"
          enterStyle={{ opacity: 0 }}
          exitStyle={{ opacity: 0 }}
        />
        <Dialog.Content
          key="content"
          bordered
          elevate
          transition="quickest"
          enterStyle={{ opacity: 0, y: -12, scale: 0.98 }}
          exitStyle={{ opacity: 0, y: -8, scale: 0.98 }}
          width="92%"
          maxWidth={480}
          borderRadius="$8"
          padding="$5"
          gap="$4"
          backgroundColor="$backgroundHover"
          onOpenAutoFocus={(event: Event) => {
            // Straight into the first field of the form (the title), not the Close button.
            const field = (event.currentTarget as HTMLElement | null)?.querySelector<HTMLElement>('input, textarea')
            if (field) {
              event.preventDefault()
              field.focus()
            }
          }}
          onCloseAutoFocus={(event: Event) => {
            event.preventDefault()
            const target = takeCreateModalOpener()
            if (target?.isConnected) target.focus()
          }}
        >
          <XStack alignItems="center" justifyContent="space-between" gap="$3">
            <Dialog.Title fontSize="$8" lineHeight="$8" fontWeight="700" color="$color12">
              New note
            </Dialog.Title>
            <Dialog.Close asChild>
              <Button
                aria-label="Close"
                size="$3"
                circular
                chromeless
                icon={<CloseIcon size={18} />}
                focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid' }}
              />
            </Dialog.Close>
          </XStack>
          <Dialog.Description fontSize="$4" lineHeight="$4" color="$color11">
            {user ? 'A title, and anything you want to keep. Only you can read it.' : 'Sign in to write notes.'}
          </Dialog.Description>
          {user ? (
            <CreateNoteForm onDone={() => setOpen(false)} />
          ) : (
            <XStack justifyContent="flex-end">
              <Link href="/sign-in" className="button-link" onClick={() => setOpen(false)}>
                Sign in
              </Link>
            </XStack>
          )}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog>
  )
}
