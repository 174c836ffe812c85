import Link from 'next/link'

import { PageTitle } from '../../lib/page-title'
import styles from './not-found.module.css'

export interface NotFoundScreenProps {
  /** The small line above the heading (default "Error 404"). */
  code?: string
  title?: string
  text?: string
  /** Where the button leads, and what it says; `reload`: a plain link that loads the address again in full. */
  back?: { href: string; label: string; reload?: boolean }
}

/**
 * The 404 page's content (a static page: plain HTML, no Tamagui runtime; ADR 053), also what a page says of one of
 * its own things that is not there (a note deleted, or not the caller's), in its own words.
 */
export function NotFoundScreen({
  code = 'Error 404',
  title = 'Page not found',
  text = 'The address may be mistyped, or the page has moved.',
  back = { href: '/', label: 'Back to the start page' },
}: NotFoundScreenProps) {
  return (
    <div className={styles.screen}>
      <PageTitle name={title} />
      <p className={styles.code}>{code}</p>
      <h1 className={styles.title}>{title}</h1>
      <p className={styles.text}>{text}</p>
      {back.reload ? (
        <a href={back.href} className="button-link">
          {back.label}
        </a>
      ) : (
        <Link href={back.href} className="button-link">
          {back.label}
        </Link>
      )}
    </div>
  )
}
