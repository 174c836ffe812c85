import { createCaller } from '../../server/root'
import { createInnerContext } from '../../server/trpc'
import { withSession } from '../../server/with-session'
import { NotFoundScreen } from '../../features/app-frame'
import { NoteScreen, type NoteScreenProps } from '../../features/notes'
import { noteIdSchema } from '../../features/notes/schema'
import { withApi } from '../../lib/api-provider'

/** A note id that is no note of the caller's (deleted, never made, or another account's: one answer for all). */
type NotePageProps = NoteScreenProps | { missing: true }

export const getServerSideProps = withSession<NotePageProps>({
  protected: true,
  load: async (ctx, supabase) => {
    const id = noteIdSchema.safeParse(ctx.params?.id)
    if (!id.success) return { notFound: true }
    try {
      const note = await createCaller(createInnerContext({ supabase })).notes.get({ id: id.data })
      return { props: { note: { ...note, createdAt: note.createdAt.toISOString(), updatedAt: note.updatedAt.toISOString() } } }
    } catch (error) {
      if ((error as { code?: string }).code !== 'NOT_FOUND') throw error
      ctx.res.statusCode = 404
      return { props: { missing: true } }
    }
  },
})

/** One screen per note: going from one note to another (e.g. "Save as a new note") starts from the new note's state. */
function NotePage(props: NotePageProps) {
  if ('missing' in props)
    return (
      <NotFoundScreen
        title="Note not found"
        text="It may have been deleted, or the link is not one of your notes."
        back={{ href: '/', label: 'Back to your notes' }}
      />
    )
  return <NoteScreen key={props.note.id} {...props} />
}

export default withApi(NotePage)
