import Head from 'next/head'
import Link from 'next/link'

import { SITE_TITLE } from '../../lib/site'
import styles from './not-found.module.css'

/** The 404 page's content (a static page: plain HTML, no Tamagui runtime; ADR 053). */
export function NotFoundScreen() {
  return (
    <div className={styles.screen}>
      <Head>
        <title>{`Page not found · ${SITE_TITLE}`}</title>
      </Head>
      <p className={styles.code}>Error 404</p>
      <h1 className={styles.title}>Page not found</h1>
      <p className={styles.text}>The address may be mistyped, or the page has moved.</p>
      <Link href="/" className="button-link">
        Back to the start page
      </Link>
    </div>
  )
}
