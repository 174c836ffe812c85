import { useIsMutating, useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'

import { useTRPC } from '../../lib/trpc'
import { useFocusBack } from '../../lib/use-focus-back'
import { AuthForm, SecondaryButton, SubmitButton, toastApiError, useSession } from '../auth'
import { toast } from '../toast'
import { draftOf, useNoteDraft } from './draft-store'
import styles from './note-form.module.css'
import { checkNote, NoteFields, serverFieldErrors, type NoteFieldErrors } from './NoteForm'

/**
 * The new-note form of the global create modal: checks as you type once a submit found a problem, cannot be sent
 * twice, and on success closes, toasts (with a link to the note) and refreshes the list. On failure the error is
 * toasted and every character typed stays (the draft lives in a store, not in this component).
 */
export function CreateNoteForm({ onDone }: { onDone: () => void }) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const userId = useSession().user?.id
  const draft = useNoteDraft((state) => draftOf(state, userId))
  const { setDraft, clear } = useNoteDraft()
  const [errors, setErrors] = useState<NoteFieldErrors>({})
  const [tried, setTried] = useState(false)

  const create = useMutation(
    trpc.notes.create.mutationOptions({
      onSuccess: async (note) => {
        clear()
        setTried(false)
        onDone()
        toast.success('Note created', note.title, {
          action: { label: 'Open', href: `/notes/${note.id}` },
        })
        await queryClient.invalidateQueries({ queryKey: trpc.notes.list.pathKey() })
      },
      onError: (error) => {
        const fieldErrors = serverFieldErrors(error.data)
        setErrors(fieldErrors)
        toastApiError('The note was not saved', error, error.message && !error.data?.zodError ? error.message : 'Check the fields marked below.')
      },
    }),
  )

  // A create sent by this modal before it was closed (Escape, Close) and opened again is still on its way: this form
  // waits for it too, so the note is not sent twice and nothing typed meanwhile is cleared by its success (ADR 133).
  const pending = useIsMutating({ mutationKey: trpc.notes.create.mutationKey() }) > 0

  // The fields are disabled while the note is sent, which drops focus to <body>: after a failure it goes back.
  const rememberFocus = useFocusBack(create.isPending)

  const onChange = (next: typeof draft) => {
    if (userId) setDraft(userId, next)
    if (tried) setErrors(checkNote(next))
  }

  return (
    <AuthForm
      label="New note"
      onSubmit={() => {
        if (pending || create.isPending) return
        setTried(true)
        const found = checkNote(draft)
        setErrors(found)
        if (Object.keys(found).length > 0) return
        rememberFocus()
        create.mutate(draft)
      }}
    >
      <NoteFields draft={draft} onChange={onChange} errors={errors} disabled={pending} withPinned />
      <div className={styles.formActions}>
        <SecondaryButton onPress={onDone} disabled={pending}>
          Cancel
        </SecondaryButton>
        <SubmitButton pending={pending} pendingLabel="Creating…">
          Create note
        </SubmitButton>
      </div>
    </AuthForm>
  )
}
