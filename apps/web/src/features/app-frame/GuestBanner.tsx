import Link from 'next/link'
import { useState } from 'react'

import { ADD_EMAIL_PATH, guestBannerDismissCookie } from '../../lib/guest'

/**
 * Under the header on every page of a guest session: the notes live only in this browser until the guest adds an
 * email and password (the link goes there). "Hide for a week" sets a cookie naming this guest, so the server renders
 * the next pages without the banner (no flash), and moves focus to the page's main content. Plain HTML styled by
 * base.css (`.guest-banner`): it is part of every page's first load, so it stays small.
 */
/** Focus to <main> (where the page goes on), focusable only until focus leaves it: a click in it never focuses it. */
function focusMain() {
  const main = document.getElementById('main')
  if (!main) return
  main.tabIndex = -1
  main.addEventListener('blur', () => main.removeAttribute('tabindex'), { once: true })
  main.focus()
}

export function GuestBanner({ userId, dismissed }: { userId: string; dismissed: boolean }) {
  const [hidden, setHidden] = useState(dismissed)
  if (hidden) return null
  return (
    <aside className="guest-banner" aria-label="Guest session">
      <p>You are using Foyer as a guest. Your notes live only in this browser until you add an email and password.</p>
      <Link href={ADD_EMAIL_PATH} className="button-link">
        Add email and password
      </Link>
      <button
        type="button"
        className="link-button"
        onClick={() => {
          document.cookie = guestBannerDismissCookie(userId, location.protocol === 'https:')
          setHidden(true)
          focusMain()
        }}
      >
        Hide for a week
      </button>
    </aside>
  )
}
