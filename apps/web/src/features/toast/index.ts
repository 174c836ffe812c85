export { ToastProvider } from './ToastProvider'
export { TOAST_INSET_PX, TOAST_Z_INDEX } from './ToastViewport'
export {
  SWIPE_DISMISS_PX,
  SWIPE_START_PX,
  toast,
  TOAST_ANIMATION_MS,
  TOAST_DURATION_MS,
  type ToastAction,
  type ToastItem,
  type ToastKind,
} from './toast-store'
