import Head from 'next/head'

import { SITE_TITLE } from './site'

/**
 * The document title of a page: what the page is, then the site's name ("Sign in · Foyer"). It is what a tab, the
 * history and bookmarks show, and what a screen reader reads first on a new page (also after a client-side route
 * change: Next's route announcer reads it). Pages without one keep the site's name alone (_app).
 */
export function PageTitle({ name }: { name: string }) {
  return (
    <Head>
      <title>{`${name} · ${SITE_TITLE}`}</title>
    </Head>
  )
}
