import { createCaller } from '../../server/root'
import { createInnerContext } from '../../server/trpc'
import { withSession } from '../../server/with-session'
import { NoteScreen, type NoteScreenProps } from '../../features/notes'
import { noteIdSchema } from '../../features/notes/schema'
import { withApi } from '../../lib/api-provider'

export const getServerSideProps = withSession<NoteScreenProps>({
  protected: true,
  load: async (ctx, supabase) => {
    const id = noteIdSchema.safeParse(ctx.params?.id)
    if (!id.success) return { notFound: true }
    try {
      const note = await createCaller(createInnerContext({ supabase })).notes.get({ id: id.data })
      return { props: { note: { ...note, createdAt: note.createdAt.toISOString(), updatedAt: note.updatedAt.toISOString() } } }
    } catch (error) {
      if ((error as { code?: string }).code === 'NOT_FOUND') return { notFound: true }
      throw error
    }
  },
})

/** One screen per note: going from one note to another (e.g. "Save as a new note") starts from the new note's state. */
function NotePage(props: NoteScreenProps) {
  return <NoteScreen key={props.note.id} {...props} />
}

export default withApi(NotePage)
