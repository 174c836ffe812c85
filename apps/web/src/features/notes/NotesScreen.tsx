import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import dynamic from 'next/dynamic'
import Head from 'next/head'
import Link from 'next/link'
import { useRouter } from 'next/router'
import { memo, useEffect, useId, useLayoutEffect, useRef, useState, useSyncExternalStore } from 'react'

import { useTRPC, type RouterOutputs } from '../../lib/trpc'
import { useMinWidth, viewportAtLeast } from '../../lib/use-min-width'
import type { ViewportHint } from '../../lib/viewport-hint'
import { breakpoints } from '../../ui/breakpoints'
import controls from '../../ui/controls.module.css'
import { ArrowDownIcon, ArrowUpIcon, CloseIcon, NoteIcon, PinIcon, PlusIcon, RefreshIcon, SearchIcon, SpinnerIcon } from '../../ui/icons'
import { isSecondFactorRequired, readableApiError, secondFactorPath, toastApiError } from '../auth'
import { useCreateModal } from '../create-modal'
import { toast } from '../toast'
import { countMatches, countNotes, formatFull, formatWhen } from './format'
import { listInput, listQuery, parseListParams, type ListParams } from './list-params'
import styles from './notes.module.css'
import { Pagination } from './Pagination'
import { defaultDirFor, NOTES_LIST_END_ID, NOTES_LIST_ID, NOTES_PAGE_SIZE, NOTES_QUERY_MAX, type NoteSort } from './rules'
import { rememberListUrl } from './list-url'

/** Live updates of the list (docs/decisions/044-live-notes.md), loaded after the page is up. */
const LiveList = dynamic(() => import('./LiveList'), { ssr: false })

type NoteListItem = RouterOutputs['notes']['list']['items'][number]

/**
 * How long an answer of the list counts as fresh, in ms: the server render's answer (pages/index.tsx) is shown
 * without asking again when the page mounts. Changes made in the app invalidate the list at once.
 */
export const LIST_FRESH_MS = 5_000

/** How long typing in the search box waits before the list follows, in ms. */
export const SEARCH_DEBOUNCE_MS = 300

const SORT_LABELS: Record<NoteSort, string> = {
  updated_at: 'Last edited',
  created_at: 'Created',
  title: 'Title',
}

function useListParams(): [ListParams, (next: Partial<ListParams>, how?: 'push' | 'replace') => void] {
  const router = useRouter()
  const params = parseListParams(router.query)
  const update = (next: Partial<ListParams>, how: 'push' | 'replace' = 'push') => {
    const merged = { ...params, ...next }
    const url = { pathname: router.pathname, query: listQuery(merged) }
    void (how === 'push' ? router.push(url, undefined, { shallow: true, scroll: false }) : router.replace(url, undefined, { shallow: true, scroll: false }))
  }
  return [params, update]
}

function PinButton({ note }: { note: NoteListItem }) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const setPinned = useMutation(
    trpc.notes.setPinned.mutationOptions({
      onSuccess: (updated) => {
        toast.success(updated.pinned ? 'Pinned' : 'Unpinned', updated.title)
        return queryClient.invalidateQueries({ queryKey: trpc.notes.list.pathKey() })
      },
      onError: (error) => toastApiError('Could not change the pin', error),
    }),
  )
  const label = note.pinned ? `Unpin “${note.title}”` : `Pin “${note.title}”`
  return (
    <button
      type="button"
      className={styles.pinButton}
      aria-pressed={note.pinned}
      aria-label={label}
      title={note.pinned ? 'Unpin' : 'Pin to the top'}
      // Not `disabled` while pending: that would drop a keyboard user's focus to <body>.
      aria-disabled={setPinned.isPending || undefined}
      onClick={() => setPinned.isPending || setPinned.mutate({ id: note.id, pinned: !note.pinned })}
    >
      <PinIcon size={17} fill={note.pinned ? 'currentColor' : 'none'} />
    </button>
  )
}

function PinnedBadge() {
  return (
    <span className={styles.pinnedBadge}>
      <PinIcon size={11} fill="currentColor" />
      Pinned
    </span>
  )
}

function When({ date }: { date: Date }) {
  return (
    <time dateTime={date.toISOString()} title={formatFull(date)}>
      {formatWhen(date)}
    </time>
  )
}

function SortHeader({ column, params, onSort }: { column: NoteSort; params: ListParams; onSort: (sort: NoteSort) => void }) {
  const active = params.sort === column
  const ariaSort = active ? (params.dir === 'asc' ? 'ascending' : 'descending') : 'none'
  const Arrow = params.dir === 'asc' ? ArrowUpIcon : ArrowDownIcon
  return (
    <th scope="col" aria-sort={ariaSort} className={column === 'title' ? styles.colTitle : styles.colDate}>
      <button type="button" className={styles.sortButton} data-active={active} onClick={() => onSort(column)}>
        {SORT_LABELS[column]}
        {active ? <Arrow size={13} /> : null}
      </button>
    </th>
  )
}

const NotesTable = memo(function NotesTable({
  items,
  params,
  onSort,
}: {
  items: NoteListItem[]
  params: ListParams
  onSort: (sort: NoteSort) => void
}) {
  return (
    <table className={styles.table}>
      <caption className={styles.visuallyHidden}>
        Your notes, sorted by {SORT_LABELS[params.sort].toLowerCase()} ({params.dir === 'asc' ? 'ascending' : 'descending'}),
        pinned notes first
      </caption>
      <thead>
        <tr>
          <SortHeader column="title" params={params} onSort={onSort} />
          <SortHeader column="created_at" params={params} onSort={onSort} />
          <SortHeader column="updated_at" params={params} onSort={onSort} />
          <th scope="col" className={styles.colPin}>
            <span className={styles.visuallyHidden}>Pin</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {items.map((note) => (
          <tr key={note.id} className={styles.row} data-testid="note-row">
            <td>
              <Link href={`/notes/${note.id}`} className={`${styles.titleLink} ${styles.stretch}`}>
                {note.pinned ? <PinnedBadge /> : null}
                <bdi>{note.title}</bdi>
              </Link>
              {note.excerpt ? <div className={styles.excerpt} dir="auto">{note.excerpt}</div> : null}
            </td>
            <td className={styles.date}>
              <When date={note.createdAt} />
            </td>
            <td className={styles.date}>
              <When date={note.updatedAt} />
            </td>
            <td className={styles.colPin}>
              <PinButton note={note} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
})

const NoteCards = memo(function NoteCards({ items, params }: { items: NoteListItem[]; params: ListParams }) {
  const shown = params.sort === 'created_at' ? 'created' : 'updated'
  return (
    <ul className={styles.cards} aria-label="Your notes">
      {items.map((note) => (
        <li key={note.id} className={styles.card} data-testid="note-row">
          <div className={styles.cardBody}>
            <Link href={`/notes/${note.id}`} className={`${styles.titleLink} ${styles.stretch}`}>
              {note.pinned ? <PinnedBadge /> : null}
              <bdi>{note.title}</bdi>
            </Link>
            {note.excerpt ? <div className={styles.excerpt} dir="auto">{note.excerpt}</div> : null}
            <div className={styles.cardMeta}>
              {shown === 'created' ? 'Created ' : 'Edited '}
              <When date={shown === 'created' ? note.createdAt : note.updatedAt} />
            </div>
          </div>
          <PinButton note={note} />
        </li>
      ))}
    </ul>
  )
})

function EmptyState({ q, onClear }: { q: string; onClear: () => void }) {
  const openCreate = useCreateModal((s) => s.setOpen)
  // Its buttons go with it when notes show, and focus with them (to <body>): "Clear search" puts focus in the search
  // box at once; after the first note is written (focus back on "Write your first note"), it goes to that note.
  const ref = useRef<HTMLDivElement>(null)
  useLayoutEffect(() => {
    const box = ref.current
    return () => {
      if (box?.contains(document.activeElement)) requestAnimationFrame(() => document.querySelector<HTMLElement>(`#${NOTES_LIST_ID} a`)?.focus())
    }
  }, [])
  return (
    <div ref={ref} className={styles.empty}>
      <span className={styles.emptyIcon}>{q ? <SearchIcon size={24} /> : <NoteIcon size={24} />}</span>
      <h2 className={styles.emptyTitle}>{q ? `No notes match “${q}”` : 'No notes yet'}</h2>
      <p className={styles.emptyText}>
        {q
          ? 'Search looks at note titles. Try fewer letters, or clear the search to see every note.'
          : 'Write down a thought, a plan or a list. Your notes are private to you and sorted the way you like.'}
      </p>
      {q ? (
        <button
          type="button"
          className={`${controls.button} ${controls.small} ${controls.outlined}`}
          onClick={() => {
            onClear()
            document.querySelector<HTMLElement>('[role=search] input')?.focus()
          }}
        >
          Clear search
        </button>
      ) : (
        <button type="button" className={`${controls.button} ${controls.small} ${controls.iconGap} t_accent`} onClick={() => openCreate(true)}>
          <PlusIcon size={16} />
          Write your first note
        </button>
      )}
    </div>
  )
}

function SearchBox({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  const id = useId()
  const inputRef = useRef<HTMLInputElement>(null)
  return (
    <div className={styles.search} role="search">
      <label htmlFor={id} className={styles.visuallyHidden}>
        Search notes by title
      </label>
      <span className={styles.searchIcon}>
        <SearchIcon size={16} />
      </span>
      <input
        ref={inputRef}
        id={id}
        type="search"
        className={styles.searchInput}
        placeholder="Search titles"
        value={value}
        maxLength={NOTES_QUERY_MAX}
        autoComplete="off"
        spellCheck={false}
        onChange={(event) => onChange(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Escape' && value) {
            event.preventDefault()
            onChange('')
          }
        }}
      />
      {value ? (
        <button
          type="button"
          className={styles.clearSearch}
          aria-label="Clear search"
          onClick={() => {
            onChange('')
            inputRef.current?.focus()
          }}
        >
          <CloseIcon size={14} />
        </button>
      ) : null}
    </div>
  )
}

function SortControls({ params, onSort, onDir }: { params: ListParams; onSort: (sort: NoteSort) => void; onDir: () => void }) {
  const id = useId()
  const descending = params.dir === 'desc'
  return (
    <div className={styles.sortControls}>
      <label htmlFor={id} className={styles.visuallyHidden}>
        Sort by
      </label>
      <select id={id} className={styles.select} value={params.sort} onChange={(event) => onSort(event.target.value as NoteSort)}>
        {(Object.keys(SORT_LABELS) as NoteSort[]).map((sort) => (
          <option key={sort} value={sort}>
            {SORT_LABELS[sort]}
          </option>
        ))}
      </select>
      <button
        type="button"
        className={styles.dirButton}
        onClick={onDir}
        aria-label={`Sort direction: ${descending ? 'descending' : 'ascending'}. Switch to ${descending ? 'ascending' : 'descending'}`}
        title={descending ? 'Descending' : 'Ascending'}
      >
        {descending ? <ArrowDownIcon size={16} /> : <ArrowUpIcon size={16} />}
      </button>
    </div>
  )
}

/**
 * The list could not be loaded: what happened and the way on — "Try again" when another attempt may work, or, when
 * two-factor sign-in is not finished (the app is taking the user to /mfa already), the link there.
 */
function ListError({ error, retrying, onRetry }: { error: { message: string }; retrying: boolean; onRetry: () => void }) {
  const needsCode = isSecondFactorRequired(error)
  return (
    <div role="alert" className={styles.listError}>
      <span className={styles.listErrorTitle}>
        {needsCode ? 'Finish two-factor sign-in to see your notes' : 'Your notes could not be loaded'}
      </span>
      <p className={styles.listErrorText}>{needsCode ? 'Enter a code from your authenticator app; you will come back here.' : readableApiError(error)}</p>
      {needsCode ? (
        <Link href={secondFactorPath()} className="button-link">
          Enter a code
        </Link>
      ) : (
        <button
          type="button"
          className={`${controls.button} ${controls.small} ${controls.iconGap} ${controls.outlined}`}
          // Not `disabled` while trying: that would drop a keyboard user's focus to <body> (onRetry does nothing then).
          aria-disabled={retrying || undefined}
          onClick={onRetry}
        >
          {retrying ? <SpinnerIcon size={15} className="spin" /> : <RefreshIcon size={15} />}
          <span>{retrying ? 'Trying again…' : 'Try again'}</span>
        </button>
      )}
    </div>
  )
}

/**
 * The list in the shape that fits: a table from the md breakpoint up, cards below it. The table needs the real width,
 * which the server knows only from the viewport hint the browser's last page left in a cookie (lib/viewport-hint.ts,
 * ADR 056). With the hint it renders that one shape, shown whatever the width until hydration; the browser hydrates
 * it and, should the width have changed since, turns to the other shape right after. Without a hint (a browser's very
 * first page) it renders both shapes and a CSS media query shows one (the notes are on screen at first paint, in the
 * shape that stays); the browser knows the width from its first render, so only the shape that fits is hydrated; the
 * other stays the server's inert HTML (a `dangerouslySetInnerHTML` element is not hydrated, and React leaves its
 * content alone), hidden by the same media query, and is dropped after hydration. The hint counts only when hydrating
 * the server's HTML: a list mounted by a client-side navigation renders the shape that fits at once.
 * The state lives here, not in the screen, so that dropping it re-renders nothing else (the kept list is memoised).
 */
function ListShapes({ items, params, onSort, viewportHint }: ListShapesProps) {
  const md = useMinWidth(breakpoints.md)
  const [hydrated, setHydrated] = useState(false)
  const fromServer = useSyncExternalStore(subscribeToNothing, notOnServer, onServer)
  // The server's one shape, when it rendered one and this render must match it (null: it rendered both, or none).
  const [single] = useState(() => (fromServer ? viewportHint : null))
  // Whether the table fits at the first render: null on the server without a hint (both shapes are rendered).
  const [wideFirst] = useState(() => (single ? single === 'wide' : viewportAtLeast(breakpoints.md)))
  useEffect(() => setHydrated(true), [])
  // The props are the screen's: when only `hydrated` changes, they are the same objects, so the memoised kept list
  // does not render again.
  const wide = hydrated ? md : wideFirst !== false
  const narrow = hydrated ? !md : wideFirst !== true
  const shown = (shapeClass: string | undefined) => (single && !hydrated ? undefined : shapeClass)
  return (
    <>
      {wide ? (
        <div className={shown(styles.onlyWide)}>
          <NotesTable items={items} params={params} onSort={onSort} />
        </div>
      ) : hydrated || single ? null : (
        <div className={styles.onlyWide} dangerouslySetInnerHTML={INERT} suppressHydrationWarning />
      )}
      {narrow ? (
        <div className={shown(styles.onlyNarrow)}>
          <NoteCards items={items} params={params} />
        </div>
      ) : hydrated || single ? null : (
        <div className={styles.onlyNarrow} dangerouslySetInnerHTML={INERT} suppressHydrationWarning />
      )}
    </>
  )
}

interface ListShapesProps {
  items: NoteListItem[]
  params: ListParams
  onSort: (sort: NoteSort) => void
  viewportHint: ViewportHint | null
}

/** true while rendering on the server or hydrating its HTML, false in any other render (useSyncExternalStore). */
const subscribeToNothing = () => () => undefined
const notOnServer = () => false
const onServer = () => true

/** The shape that does not fit, during hydration: whatever the server put there stays, unhydrated and hidden. */
const INERT = { __html: '' }

/**
 * The signed-in home: the caller's notes, pinned first, sorted, searched (titles, debounced) and paginated by 20,
 * with the state in the URL. A table from the md breakpoint up, cards below it.
 */
export function NotesScreen({ viewportHint = null }: { viewportHint?: ViewportHint | null }) {
  const router = useRouter()
  const [params, setParams] = useListParams()
  const trpc = useTRPC()
  const input = listInput(params)
  // The server render may have answered this already (pages/index.tsx): then mounting does not ask again.
  const list = useQuery({ ...trpc.notes.list.queryOptions(input), placeholderData: keepPreviousData, staleTime: LIST_FRESH_MS })

  // The search box is the user's text; the URL follows it after a pause (replace: each keystroke is not a step
  // of history). A change of the URL from elsewhere (Back, a link) puts its text back into the box.
  const [search, setSearch] = useState(params.q)
  const typed = useRef(params.q)
  useEffect(() => {
    if (params.q !== typed.current) {
      typed.current = params.q
      setSearch(params.q)
    }
  }, [params.q])
  useEffect(() => {
    if (search === typed.current) return
    const timer = window.setTimeout(() => {
      typed.current = search
      setParams({ q: search, page: 1 }, 'replace')
    }, SEARCH_DEBOUNCE_MS)
    return () => window.clearTimeout(timer)
  })

  useEffect(() => {
    if (router.isReady) rememberListUrl(router.asPath)
  }, [router.isReady, router.asPath])

  // A page past the end (notes deleted meanwhile, an old link): go to the last page that has notes.
  const data = list.data
  useEffect(() => {
    if (data && data.items.length === 0 && data.total > 0 && params.page > 1) {
      setParams({ page: Math.max(1, Math.ceil(data.total / NOTES_PAGE_SIZE)) }, 'replace')
    }
  })

  const onSort = (sort: NoteSort) => {
    if (sort === params.sort) setParams({ dir: params.dir === 'asc' ? 'desc' : 'asc', page: 1 })
    else setParams({ sort, dir: defaultDirFor(sort), page: 1 })
  }
  const onDir = () => setParams({ dir: params.dir === 'asc' ? 'desc' : 'asc', page: 1 })
  const clearSearch = () => {
    typed.current = ''
    setSearch('')
    setParams({ q: '', page: 1 }, 'replace')
  }

  const showSkeleton = list.isPending
  const stale = list.isPlaceholderData
  // "Try again" after an error keeps the error on screen, saying it is trying: while it runs the query shows the
  // previous search's notes as a placeholder, which are no answer to this one.
  const [retryOf, setRetryOf] = useState<{ message: string } | null>(null)
  const retry = (error: { message: string }) => {
    setRetryOf(error)
    void list.refetch().finally(() => setRetryOf(null))
  }

  return (
    <div className={styles.screen}>
      <div className={styles.heading}>
        <h1 className={styles.screenTitle}>Notes</h1>
        <span className={styles.count} aria-live="polite">
          {data ? (params.q.trim() ? countMatches(data.total, params.q.trim()) : countNotes(data.total)) : ' '}
        </span>
        <LiveList />
      </div>

      <div className={styles.toolbar}>
        <SearchBox value={search} onChange={setSearch} />
        <div className={styles.narrowOnly}>
          <SortControls params={params} onSort={onSort} onDir={onDir} />
        </div>
      </div>

      <Head>
        {/* The first frame waits until the parser has passed the server's list (the marker after it; Chrome 124+,
            ignored elsewhere): the header and heading are not painted a frame ahead of the notes, and the notes do
            not wait for the scripts (ADR 056). Only the server's HTML can block: added later, it does nothing. */}
        <link rel="expect" href={`#${NOTES_LIST_END_ID}`} blocking="render" />
      </Head>
      <div className={styles.list} aria-busy={showSkeleton || list.isFetching} data-stale={stale && !retryOf} id={NOTES_LIST_ID}>
        {retryOf ? (
          <ListError error={retryOf} retrying onRetry={() => {}} />
        ) : showSkeleton ? (
          // Only while the first answer for this list state is on its way: when the server render could not bring
          // it (pages/index.tsx); a list state changed in the page keeps the previous notes meanwhile.
          <p role="status" className={styles.loading} data-testid="notes-skeleton">
            <SpinnerIcon size={15} className="spin" />
            Loading notes…
          </p>
        ) : list.isError && !data ? (
          <ListError error={list.error} retrying={false} onRetry={() => retry(list.error)} />
        ) : data && data.items.length === 0 && data.total === 0 ? (
          <EmptyState q={params.q.trim()} onClear={clearSearch} />
        ) : data ? (
          <>
            <ListShapes items={data.items} params={params} onSort={onSort} viewportHint={viewportHint} />
            <Pagination
              page={params.page}
              pageSize={NOTES_PAGE_SIZE}
              total={data.total}
              onPage={(page) => setParams({ page })}
            />
          </>
        ) : null}
      </div>
      {/* Where the server's list ends: the page's first frame waits until the parser gets here (the link above). */}
      <span id={NOTES_LIST_END_ID} hidden />
    </div>
  )
}
