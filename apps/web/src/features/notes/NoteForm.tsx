import { useId, type ReactNode } from 'react'
import { Label, Text, TextArea, Theme, XStack, YStack } from 'tamagui'

import { AlertCircleIcon } from '../../ui/icons'
import { Field } from '../auth'
import { charLength, NOTE_BODY_MAX, NOTE_TITLE_MAX, noteInputSchema } from './schema'

export interface NoteDraft {
  title: string
  body: string
  pinned: boolean
}

export type NoteFieldErrors = Partial<Record<'title' | 'body', string>>

/** The form's own check, with the server's rules (zod schema shared with the router). */
export function checkNote(draft: NoteDraft): NoteFieldErrors {
  const result = noteInputSchema.safeParse(draft)
  if (result.success) return {}
  const errors: NoteFieldErrors = {}
  for (const issue of result.error.issues) {
    const field = issue.path[0]
    if ((field === 'title' || field === 'body') && !errors[field]) errors[field] = issue.message
  }
  return errors
}

/** Field errors the server sent back (tRPC BAD_REQUEST with zod issues), in the form's shape. */
export function serverFieldErrors(data: unknown): NoteFieldErrors {
  const fieldErrors = (data as { zodError?: { fieldErrors?: Record<string, string[] | undefined> } | null } | undefined)
    ?.zodError?.fieldErrors
  const errors: NoteFieldErrors = {}
  if (fieldErrors?.title?.[0]) errors.title = fieldErrors.title[0]
  if (fieldErrors?.body?.[0]) errors.body = fieldErrors.body[0]
  return errors
}

function ErrorText({ id, children }: { id: string; children: ReactNode }) {
  return (
    <XStack id={id} gap="$1.5" alignItems="flex-start">
      <Theme name="red">
        <Text color="$color11" display="flex" paddingTop={2}>
          <AlertCircleIcon size={14} />
        </Text>
        <Text fontSize="$3" lineHeight="$3" color="$color11">
          {children}
        </Text>
      </Theme>
    </XStack>
  )
}

/** Title, body (with a character count) and, when asked, the pinned switch: the fields of a note. */
export function NoteFields({
  draft,
  onChange,
  errors,
  disabled,
  withPinned,
  autoFocusTitle,
  bodyRows = 6,
}: {
  draft: NoteDraft
  onChange: (draft: NoteDraft) => void
  errors: NoteFieldErrors
  disabled?: boolean
  withPinned?: boolean
  autoFocusTitle?: boolean
  bodyRows?: number
}) {
  const bodyId = useId()
  const pinnedId = useId()
  const bodyLength = charLength(draft.body)
  const countId = `${bodyId}-count`
  const errorId = `${bodyId}-error`
  const nearLimit = bodyLength > NOTE_BODY_MAX * 0.9
  return (
    <YStack gap="$4">
      <Field
        label="Title"
        name="title"
        value={draft.title}
        onChange={(title) => onChange({ ...draft, title })}
        error={errors.title}
        disabled={disabled}
        autoFocus={autoFocusTitle}
        autoComplete="off"
        hint={charLength(draft.title) > NOTE_TITLE_MAX - 20 ? `${charLength(draft.title)} / ${NOTE_TITLE_MAX} characters` : undefined}
      />
      <YStack gap="$1.5">
        <XStack justifyContent="space-between" alignItems="baseline">
          <Label htmlFor={bodyId} fontSize="$3" lineHeight="$3" fontWeight="600" color="$color12">
            Note
          </Label>
          <Text id={countId} fontSize="$2" color={bodyLength > NOTE_BODY_MAX ? '$red11' : '$color10'} aria-live={nearLimit ? 'polite' : 'off'}>
            {bodyLength.toLocaleString('en-US')} / {NOTE_BODY_MAX.toLocaleString('en-US')}
          </Text>
        </XStack>
        <TextArea
          id={bodyId}
          name="body"
          value={draft.body}
          onChangeText={(body: string) => onChange({ ...draft, body })}
          disabled={disabled}
          rows={bodyRows}
          placeholder="Write anything — plain text, as long as you like."
          placeholderTextColor="$color9"
          aria-invalid={errors.body ? true : undefined}
          aria-describedby={[countId, errors.body ? errorId : null].filter(Boolean).join(' ')}
          size="$4"
          borderColor={errors.body ? '$red9' : '$borderColor'}
          focusStyle={{ borderColor: errors.body ? '$red10' : '$color9' }}
          backgroundColor="$background"
          color="$color12"
          lineHeight={22}
          minHeight={bodyRows * 22 + 20}
        />
        {errors.body ? <ErrorText id={errorId}>{errors.body}</ErrorText> : null}
      </YStack>
      {withPinned ? (
        <XStack gap="$2.5" alignItems="center">
          <input
            id={pinnedId}
            type="checkbox"
            name="pinned"
            checked={draft.pinned}
            disabled={disabled}
            onChange={(event) => onChange({ ...draft, pinned: event.target.checked })}
            style={{ width: 18, height: 18, margin: 0, accentColor: 'var(--color9)' }}
          />
          <Label htmlFor={pinnedId} fontSize="$4" lineHeight="$4" color="$color12">
            Pin to the top of the list
          </Label>
        </XStack>
      ) : null}
    </YStack>
  )
}
