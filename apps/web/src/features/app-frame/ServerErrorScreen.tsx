import { useEffect, useState } from 'react'

import { NotFoundScreen } from './NotFoundScreen'

/**
 * The 500 page's content (pages/500.tsx, a static page like the 404): an unexpected failure of a page's server render
 * said in words, in the app frame, with "Try again" — the whole page loaded again (its state on the client may be
 * what failed). The link is the address in the bar, known only in the browser (the page was rendered at build time):
 * until then an empty href, which is that same address.
 */
export function ServerErrorScreen() {
  const [here, setHere] = useState('')
  useEffect(() => setHere(window.location.pathname + window.location.search), [])
  return (
    <NotFoundScreen
      code="Error 500"
      title="Something went wrong"
      text="Foyer could not open this page because of an error on its side. Try again in a moment."
      back={{ href: here, label: 'Try again', reload: true }}
    />
  )
}
