import { createStore } from 'zustand/vanilla'

export type ToastKind = 'success' | 'error' | 'info'

/**
 * One action on a toast, which closes it: a button that runs `onAction` (e.g. Undo), or a link to `href` (e.g.
 * "Enter a code" → /mfa), which is a real link, so a page's leave guard sees it like any other.
 */
export type ToastAction = { label: string; onAction: () => void } | { label: string; href: string }

export interface ToastItem {
  id: number
  kind: ToastKind
  title: string
  description?: string
  action?: ToastAction
  /** A toast with a key takes the place of the open one with the same key (see ToastOptions). */
  key?: string
}

export interface ToastOptions {
  action?: ToastAction
  /**
   * News that repeats (a note saved again and again, ADR 153): a toast with the key of one still open replaces it —
   * one toast, the newest, with a fresh timer — instead of stacking a copy per save over the page.
   */
  key?: string
}

/** Inset of the toast viewport from the top, left and right edges of the window, in px (spec §9). */
export const TOAST_INSET_PX = 10
/** How long a toast stays open, in ms (spec §9). The timer pauses while the viewport is hovered or focused. */
export const TOAST_DURATION_MS = 6000
/** Enter and exit animation length, in ms (spec §9). */
export const TOAST_ANIMATION_MS = 100
/** Upward pointer movement before a drag becomes a swipe, in px (spec §9). */
export const SWIPE_START_PX = 10
/** Upward distance past which releasing a swipe dismisses the toast, in px (spec §9). */
export const SWIPE_DISMISS_PX = 20

interface ToastStoreState {
  toasts: ToastItem[]
  add: (toast: Omit<ToastItem, 'id'>) => number
  remove: (id: number) => void
}

let nextId = 1

/** The open toasts, oldest first. Client-side state only; nothing is toasted during SSR. */
export const toastStore = createStore<ToastStoreState>()((set) => ({
  toasts: [],
  add: (toast) => {
    const id = nextId++
    set((state) => ({
      toasts: [...(toast.key === undefined ? state.toasts : state.toasts.filter((t) => t.key !== toast.key)), { ...toast, id }],
    }))
    return id
  },
  remove: (id) => set((state) => ({ toasts: state.toasts.filter((t) => t.id !== id) })),
}))

function show(kind: ToastKind) {
  return (title: string, description?: string, options: ToastOptions = {}): number =>
    toastStore.getState().add({
      kind,
      title,
      ...(description === undefined ? {} : { description }),
      ...(options.action ? { action: options.action } : {}),
      ...(options.key === undefined ? {} : { key: options.key }),
    })
}

/**
 * The app-level toast API features call: `toast.success('Saved', 'Your note is stored.')`, or with a button:
 * `toast.info('Note deleted', undefined, { action: { label: 'Undo', onAction: restore } })`.
 */
export const toast = {
  success: show('success'),
  error: show('error'),
  info: show('info'),
  dismiss: (id: number) => toastStore.getState().remove(id),
}

/** Swipe decision for a vertical drag of `upward` px (positive = up). */
export function swipeOutcome(upward: number): 'none' | 'dragging' | 'dismiss' {
  if (upward > SWIPE_DISMISS_PX) return 'dismiss'
  if (upward > SWIPE_START_PX) return 'dragging'
  return 'none'
}
