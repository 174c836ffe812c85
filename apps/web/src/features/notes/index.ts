export { NotesScreen, SEARCH_DEBOUNCE_MS } from './NotesScreen'
export { CreateNoteForm } from './CreateNoteForm'
export { NoteScreen, type NoteScreenProps } from './NoteScreen'
export { listUrl } from './list-url'
export {
  NOTE_BODY_MAX,
  NOTE_TITLE_MAX,
  NOTES_PAGE_SIZE,
  noteIdSchema,
  type NoteInput,
  type NoteSort,
} from './schema'
