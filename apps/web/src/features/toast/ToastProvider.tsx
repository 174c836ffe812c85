import type { ReactNode } from 'react'

import { ToastViewport } from './ToastViewport'

/** Renders the app and, above it, the notification viewport. Toasts are raised with `toast.*`. */
export function ToastProvider({ children }: { children: ReactNode }) {
  return (
    <>
      {children}
      <ToastViewport />
    </>
  )
}
