import type { Session } from '@supabase/supabase-js'
import type { AppProps } from 'next/app'
import { renderToString } from 'react-dom/server'
import { describe, expect, it } from 'vitest'

import { useSession } from './features/auth'
import App, { type AppPageProps, type NextPageWithLayout } from './pages/_app'

function SessionProbe() {
  const { session, isLoading } = useSession()
  return <p data-probe="">{JSON.stringify({ user: session?.user.id ?? null, isLoading })}</p>
}

function render(Component: NextPageWithLayout<AppPageProps>, pageProps: AppPageProps = {}) {
  const props = { Component, pageProps, router: undefined } as unknown as AppProps<AppPageProps>
  return renderToString(<App {...(props as Parameters<typeof App>[0])} />)
}

describe('_app', () => {
  it('wraps pages without getLayout in the app frame (banner with New and the theme toggle, main)', () => {
    const signedIn = { user: { id: 'user-1', email: 'a@example.com' } } as Session
    const html = render(() => <p>page body</p>, { initialSession: signedIn })
    expect(html).toMatch(/<header[^>]*>/)
    expect(html).toMatch(/<main[^>]*>[\s\S]*page body/)
    expect(html).toContain('aria-keyshortcuts="N"')
    expect(html).toContain('data-testid="theme-toggle"')
    expect(html).toContain('aria-label="Theme"') // preference unknown on the server
    expect(html).toContain('aria-label="Notifications (F8)"')
  })

  it('offers "New" only to signed-in users (there is nothing to create signed out)', () => {
    const html = render(() => <p>page body</p>, { initialSession: null })
    expect(html).toMatch(/<header[^>]*>/)
    expect(html).not.toContain('aria-keyshortcuts="N"')
  })

  it('lets a page replace the frame with its own layout', () => {
    const Page: NextPageWithLayout<AppPageProps> = () => <p>bare page</p>
    Page.getLayout = (page) => <div data-layout="custom">{page}</div>
    const html = render(Page)
    expect(html).toContain('<div data-layout="custom"><p>bare page</p></div>')
    expect(html).not.toMatch(/<header/)
  })

  it('feeds pageProps.initialSession to the session provider', () => {
    const session = { user: { id: 'user-1' } } as Session
    expect(render(SessionProbe, { initialSession: session })).toContain(
      JSON.stringify({ user: 'user-1', isLoading: false }).replace(/"/g, '&quot;'),
    )
    // the server verified "signed out": nothing left to read
    expect(render(SessionProbe, { initialSession: null })).toContain(
      JSON.stringify({ user: null, isLoading: false }).replace(/"/g, '&quot;'),
    )
    // no server-side session read (a static page): loading until the auth client has read the cookie
    expect(render(SessionProbe)).toContain(JSON.stringify({ user: null, isLoading: true }).replace(/"/g, '&quot;'))
  })
})

describe('_app for a guest (anonymous sign-in)', () => {
  const guestSession = { user: { id: 'guest-1', is_anonymous: true } } as unknown as Session
  const memberSession = { user: { id: 'user-1', email: 'a@example.com', is_anonymous: false } } as unknown as Session

  it('renders the guest banner under the header on the server, with its way to add an email and password', () => {
    const html = render(() => <p>page body</p>, { initialSession: guestSession })
    expect(html).toMatch(/<aside[^>]*aria-label="Guest session"/)
    expect(html).toContain('Your notes live only in this browser until you add an email and password.')
    expect(html).toMatch(/<a[^>]*href="\/settings\/account"[^>]*>Add email and password<\/a>/)
    expect(html).toContain('Hide for a week')
    expect(html).toContain('aria-label="Account: Guest"')
  })

  it('leaves the banner out for a guest who dismissed it, and for permanent users', () => {
    expect(render(() => <p>page body</p>, { initialSession: guestSession, guestBannerDismissed: true })).not.toContain('Guest session')
    const member = render(() => <p>page body</p>, { initialSession: memberSession })
    expect(member).not.toContain('Guest session')
    expect(member).toContain('aria-label="Account: a@example.com"')
  })
})
