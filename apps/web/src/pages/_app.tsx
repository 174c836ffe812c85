import type { Session } from '@supabase/supabase-js'
import { QueryClientProvider } from '@tanstack/react-query'
import type { NextPage } from 'next'
import type { AppProps } from 'next/app'
import Head from 'next/head'
import { useState, type ReactElement, type ReactNode } from 'react'

import { AppFrame } from '../features/app-frame'
import { SessionProvider, SessionQueryScope } from '../features/auth'
import { ThemeProvider } from '../features/theme'
import { ToastProvider } from '../features/toast'
import { createQueryClient } from '../lib/query-client'
import { SITE_TITLE } from '../lib/site'
import { createApiClient, TRPCProvider } from '../lib/trpc'

/** A page may bring its own layout; pages without one are wrapped in the app frame. */
export type NextPageWithLayout<P = object> = NextPage<P> & {
  getLayout?: (page: ReactElement) => ReactNode
}

export interface AppPageProps {
  initialSession?: Session | null
  /** This guest dismissed the guest banner (withSession reads its cookie). */
  guestBannerDismissed?: boolean
}

type AppPropsWithLayout = AppProps<AppPageProps> & { Component: NextPageWithLayout<AppPageProps> }

export default function App({ Component, pageProps }: AppPropsWithLayout) {
  // One client per app instance: per request on the server, once in the browser.
  const [queryClient] = useState(createQueryClient)
  const [apiClient] = useState(() => createApiClient())
  const getLayout =
    Component.getLayout ?? ((page: ReactElement) => <AppFrame guestBannerDismissed={pageProps.guestBannerDismissed === true}>{page}</AppFrame>)

  return (
    <SessionProvider initialSession={pageProps.initialSession}>
      <ThemeProvider>
        <ToastProvider>
          <QueryClientProvider client={queryClient}>
            <SessionQueryScope />
            <TRPCProvider trpcClient={apiClient} queryClient={queryClient}>
              <Head>
                <title>{SITE_TITLE}</title>
                <meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover" />
              </Head>
              {getLayout(<Component {...pageProps} />)}
            </TRPCProvider>
          </QueryClientProvider>
        </ToastProvider>
      </ThemeProvider>
    </SessionProvider>
  )
}
