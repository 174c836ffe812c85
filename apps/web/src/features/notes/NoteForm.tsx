import { useId } from 'react'

import { AlertCircleIcon } from '../../ui/icons'
import styles from './note-form.module.css'
import { groupDigits } from '../../lib/digits'
import { bodyProblem, charLength, NOTE_BODY_MAX, NOTE_TITLE_MAX, titleProblem } from './rules'

export interface NoteDraft {
  title: string
  body: string
  pinned: boolean
}

export type NoteFieldErrors = Partial<Record<'title' | 'body', string>>

/** The form's own check, with the server's rules (rules.ts, which the router's schemas are built from). */
export function checkNote(draft: NoteDraft): NoteFieldErrors {
  const errors: NoteFieldErrors = {}
  const title = titleProblem(draft.title)
  const body = bodyProblem(draft.body)
  if (title) errors.title = title
  if (body) errors.body = body
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

function FieldError({ id, message }: { id: string; message: string }) {
  return (
    <div id={id} className={styles.error}>
      <AlertCircleIcon size={14} />
      <span>{message}</span>
    </div>
  )
}

/**
 * Title, body (with a character count) and, when asked, the pinned checkbox: the fields of a note. Each error sits
 * under its field and describes it (aria-describedby, aria-invalid), so the form can move focus to it.
 */
export function NoteFields({
  draft,
  onChange,
  errors,
  disabled,
  withPinned,
  bodyRows = 6,
}: {
  draft: NoteDraft
  onChange: (draft: NoteDraft) => void
  errors: NoteFieldErrors
  disabled?: boolean
  withPinned?: boolean
  bodyRows?: number
}) {
  const id = useId()
  const titleLength = charLength(draft.title.trim())
  const bodyLength = charLength(draft.body)
  const describedBy = (...ids: (string | false)[]) => ids.filter(Boolean).join(' ') || undefined
  return (
    <div style={{ display: 'flex', flexDirection: 'column', gap: 16 }}>
      <div className={styles.field}>
        <div className={styles.labelRow}>
          <label htmlFor={`${id}-title`} className={styles.label}>
            Title
          </label>
          {titleLength > NOTE_TITLE_MAX - 20 ? (
            <span id={`${id}-title-count`} className={styles.count} data-over={titleLength > NOTE_TITLE_MAX}>
              {titleLength} / {NOTE_TITLE_MAX}
            </span>
          ) : null}
        </div>
        <input
          id={`${id}-title`}
          name="title"
          // Right to left when the text is (Hebrew, Arabic…): from its first letter, as the list and the heading show it.
          dir="auto"
          className={styles.input}
          value={draft.title}
          onChange={(event) => onChange({ ...draft, title: event.target.value })}
          disabled={disabled}
          autoComplete="off"
          aria-invalid={errors.title ? true : undefined}
          aria-describedby={describedBy(titleLength > NOTE_TITLE_MAX - 20 && `${id}-title-count`, Boolean(errors.title) && `${id}-title-error`)}
        />
        {errors.title ? <FieldError id={`${id}-title-error`} message={errors.title} /> : null}
      </div>
      <div className={styles.field}>
        <div className={styles.labelRow}>
          <label htmlFor={`${id}-body`} className={styles.label}>
            Note
          </label>
          <span id={`${id}-body-count`} className={styles.count} data-over={bodyLength > NOTE_BODY_MAX}>
            {groupDigits(bodyLength)} / {groupDigits(NOTE_BODY_MAX)}
          </span>
        </div>
        <textarea
          id={`${id}-body`}
          name="body"
          dir="auto"
          className={styles.textarea}
          value={draft.body}
          onChange={(event) => onChange({ ...draft, body: event.target.value })}
          disabled={disabled}
          rows={bodyRows}
          placeholder="Write anything — plain text, as long as you like."
          aria-invalid={errors.body ? true : undefined}
          aria-describedby={describedBy(`${id}-body-count`, Boolean(errors.body) && `${id}-body-error`)}
        />
        {errors.body ? <FieldError id={`${id}-body-error`} message={errors.body} /> : null}
      </div>
      {withPinned ? (
        <label className={styles.check}>
          <input
            type="checkbox"
            name="pinned"
            checked={draft.pinned}
            disabled={disabled}
            onChange={(event) => onChange({ ...draft, pinned: event.target.checked })}
          />
          Pin to the top of the list
        </label>
      ) : null}
    </div>
  )
}
