import Router from 'next/router'
import { Component, useEffect, useRef, type ReactNode } from 'react'

import { focusMainHeading } from '../../lib/focus-heading'
import { PageTitle } from '../../lib/page-title'
import styles from './not-found.module.css'

const TITLE = 'Something went wrong'

/**
 * What a page says when it fails to render in the browser (a component throwing on data it did not expect, e.g. an
 * answer of a server of another version): in words, where the page was, with "Try again" (the page rendered anew:
 * a note page reads its note from the page's props again and offers back the text typed before the failure, kept
 * when it went; ADR 065) and "Reload the page". Focus goes to its heading when it went with the failed page.
 */
function RenderErrorScreen({ onRetry }: { onRetry: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    const active = document.activeElement
    if (!active || active === document.body || !active.isConnected) heading.current?.focus({ preventScroll: true })
  }, [])
  return (
    <div className={styles.screen}>
      <PageTitle name={TITLE} />
      <p className={styles.code}>Error</p>
      <h1 ref={heading} tabIndex={-1} className={styles.title}>
        {TITLE}
      </h1>
      <p className={styles.text}>
        This page stopped because of an error in Foyer. Try again, or reload the page. Text you had not saved in a note is
        offered back when the note opens again.
      </p>
      <div className={styles.actions}>
        <button type="button" className="button-link" onClick={onRetry}>
          Try again
        </button>
        <button type="button" className="button-link" onClick={() => window.location.reload()}>
          Reload the page
        </button>
      </div>
    </div>
  )
}

/**
 * Catches an error thrown while rendering the page below it (React 19 logs it with console.error), and shows
 * RenderErrorScreen instead of Next's bare "Application error: a client-side exception has occurred" over a blank
 * page. The app frame puts it around the page (the header stays), _app around everything (a failing header). A route
 * change to another page (a link in the header, Back) shows that page instead of the failure.
 */
export class RenderErrorBoundary extends Component<{ children: ReactNode }, { failed: boolean }> {
  state = { failed: false }

  static getDerivedStateFromError() {
    return { failed: true }
  }

  private readonly reset = () => {
    if (this.state.failed) this.setState({ failed: false })
  }

  componentDidMount() {
    Router.events.on('routeChangeComplete', this.reset)
  }

  componentWillUnmount() {
    Router.events.off('routeChangeComplete', this.reset)
  }

  render() {
    // Try again: the button goes with the screen, so focus goes to the page's heading once it is back.
    return this.state.failed ? <RenderErrorScreen onRetry={() => this.setState({ failed: false }, focusMainHeading)} /> : this.props.children
  }
}
