import Router from 'next/router'
import { useEffect, useRef } from 'react'

export interface RouteChangeHandlers {
  /** A client-side route change started (`shallow`: only the URL changes, no new page is loaded). */
  onStart: (url: string, options: { shallow: boolean }) => void
  /** It completed or failed. */
  onEnd: () => void
}

/** Calls the handlers on Next's route-change events while the component is mounted (the latest handlers). */
export function useRouteChange(handlers: RouteChangeHandlers): void {
  const latest = useRef(handlers)
  useEffect(() => {
    latest.current = handlers
  })
  useEffect(() => {
    const start = (url: string, options: { shallow: boolean }) => latest.current.onStart(url, options)
    const end = () => latest.current.onEnd()
    Router.events.on('routeChangeStart', start)
    Router.events.on('routeChangeComplete', end)
    Router.events.on('routeChangeError', end)
    return () => {
      Router.events.off('routeChangeStart', start)
      Router.events.off('routeChangeComplete', end)
      Router.events.off('routeChangeError', end)
    }
  }, [])
}
