import { Button, Dialog, Paragraph, Text, XStack, YStack } from 'tamagui'

import { CloseIcon } from '../../ui/icons'
import { takeCreateModalOpener, useCreateModal } from './create-modal-store'

/**
 * The global create modal. Focus moves into it on open and back to the opener on close (Tamagui's
 * focus scope); Escape and the Close button close it. Its form arrives with the notes feature.
 */
export default function CreateModal() {
  const open = useCreateModal((s) => s.open)
  const setOpen = useCreateModal((s) => s.setOpen)

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
          <XStack alignItems="center" justifyContent="space-between" gap="$3">
            <Dialog.Title fontSize="$8" lineHeight="$8" fontWeight="700" color="$color12">
              Create
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
            Create new notes here: a title and a body, saved to your account and listed on your notes page.
          </Dialog.Description>
          <YStack
            borderWidth={1}
            borderStyle="dashed"
            borderColor="$borderColor"
            borderRadius="$6"
            padding="$4"
            gap="$1.5"
            backgroundColor="$color2"
          >
            <Text fontSize="$4" fontWeight="600" color="$color12">
              Notes are coming next
            </Text>
            <Paragraph fontSize="$3" lineHeight="$3" color="$color11">
              The note form lands here with the notes feature. Open this dialog any time with the New button or
              by pressing N.
            </Paragraph>
          </YStack>
          <XStack justifyContent="flex-end">
            <Button size="$3" theme="accent" onPress={() => setOpen(false)}>
              Got it
            </Button>
          </XStack>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog>
  )
}
