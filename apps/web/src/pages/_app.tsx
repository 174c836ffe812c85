import type { Session } from '@supabase/supabase-js'
import type { NextPage } from 'next'
import type { AppProps } from 'next/app'
import dynamic from 'next/dynamic'
import Head from 'next/head'
import type { ReactElement, ReactNode } from 'react'

import { AppFrame } from '../features/app-frame'
import { RenderErrorBoundary } from '../features/app-frame/RenderErrorBoundary'
import { SessionProvider } from '../features/auth'
import { ThemeProvider } from '../features/theme'
import { ToastProvider } from '../features/toast'
import { SITE_TITLE } from '../lib/site'

/** Only a page whose server render could not reach the backend shows it: its code stays out of every first load. */
const ServerUnreachableScreen = dynamic(() => import('../features/app-frame/ServerUnreachableScreen').then((m) => m.ServerUnreachableScreen))

/** A page may bring its own layout; pages without one are wrapped in the app frame. */
export type NextPageWithLayout<P = object> = NextPage<P> & {
  getLayout?: (page: ReactElement) => ReactNode
  /** Rendered alone, without the app's providers and frame: only the lab benchmark's floor page (pages/lab-floor.tsx). */
  bare?: boolean
}

export interface AppPageProps {
  initialSession?: Session | null
  /** This guest dismissed the guest banner (withSession reads its cookie). */
  guestBannerDismissed?: boolean
  /** The server render could not reach the backend (withSession, 503): the page says so instead of rendering. */
  serverUnreachable?: boolean
}

type AppPropsWithLayout = AppProps<AppPageProps> & { Component: NextPageWithLayout<AppPageProps> }

export default function App({ Component, pageProps }: AppPropsWithLayout) {
  if (Component.bare) return <Component {...pageProps} />
  const getLayout =
    Component.getLayout ?? ((page: ReactElement) => <AppFrame guestBannerDismissed={pageProps.guestBannerDismissed === true}>{page}</AppFrame>)

  // A failure outside the page (the header, a provider): the same words without the frame (the page's is inside it).
  return (
    <RenderErrorBoundary>
      <SessionProvider initialSession={pageProps.initialSession}>
        <ThemeProvider>
          <ToastProvider>
            <Head>
              <title>{SITE_TITLE}</title>
              <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover" />
            </Head>
            {/* No API providers here: the pages that call the API bring them (withApi, lib/api-provider.tsx). */}
            {getLayout(pageProps.serverUnreachable === true ? <ServerUnreachableScreen /> : <Component {...pageProps} />)}
          </ToastProvider>
        </ThemeProvider>
      </SessionProvider>
    </RenderErrorBoundary>
  )
}
