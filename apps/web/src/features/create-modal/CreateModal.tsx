import Link from 'next/link'
import { Button, Dialog, XStack } from 'tamagui'

import { ApiProvider } from '../../lib/api-provider'
import { CloseIcon } from '../../ui/icons'
import { secondFactorPath, useSession } from '../auth'
import { CreateNoteForm } from '../notes'
import { TamaguiScope } from '../theme'
import { takeCreateModalOpener, useCreateModal } from './create-modal-store'

/**
 * The global create modal: the new-note form. Focus moves into it on open (the title field) and back to the
 * opener on close (Tamagui's focus scope); Escape, Cancel and the Close button close it, keeping the draft. It is
 * rendered by the frame, which has no Tamagui provider, so it brings its own (TamaguiScope, ADR 053).
 */
export default function CreateModal() {
  return (
    <TamaguiScope>
      <CreateModalDialog />
    </TamaguiScope>
  )
}

function CreateModalDialog() {
  const open = useCreateModal((s) => s.open)
  const setOpen = useCreateModal((s) => s.setOpen)
  const { user, needsSecondFactor } = useSession()
  const canWrite = Boolean(user) && !needsSecondFactor

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
          onCloseAutoFocus={(event: Event) => {
            event.preventDefault()
            const target = takeCreateModalOpener()
            if (target?.isConnected) target.focus()
          }}
        >
          <Dialog.Title fontSize="$8" lineHeight="$8" fontWeight="700" color="$color12" paddingRight="$8">
            New note
          </Dialog.Title>
          <Dialog.Description fontSize="$4" lineHeight="$4" color="$color11">
            {canWrite
              ? 'A title, and anything you want to keep. Only you can read it.'
              : user
                ? 'Finish two-factor sign-in to write notes. What you typed is kept.'
                : 'Sign in to write notes.'}
          </Dialog.Description>
          {canWrite ? (
            // The modal opens on any page, also those without the API providers: it brings its own, on the
            // browser's one query cache, so a saved note shows in the list at once.
            <ApiProvider>
              <CreateNoteForm onDone={() => setOpen(false)} />
            </ApiProvider>
          ) : (
            <XStack justifyContent="flex-end">
              <Link href={user ? secondFactorPath() : '/sign-in'} className="button-link" onClick={() => setOpen(false)}>
                {user ? 'Enter a code' : 'Sign in'}
              </Link>
            </XStack>
          )}
          {/* Last in the DOM, so the dialog's first focus goes to the form's title field; shown top right. */}
          <Dialog.Close asChild>
            <Button
              position="absolute"
              top="$3.5"
              right="$3.5"
              aria-label="Close"
              size="$3"
              circular
              chromeless
              icon={<CloseIcon size={18} />}
              focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid' }}
            />
          </Dialog.Close>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog>
  )
}
