import { useRouter } from 'next/router'

import { NotFoundScreen } from './NotFoundScreen'

/**
 * What a page says when its server render could not reach the backend (auth or data; server/with-session.ts answers
 * 503 with `serverUnreachable`): in words, in the app frame, with "Try again" to the same address — never a sign-in
 * redirect for a user who may well be signed in, nor a bare "Internal Server Error".
 */
export function ServerUnreachableScreen() {
  const { asPath } = useRouter()
  return (
    <NotFoundScreen
      code="Error 503"
      title="Can't reach the server"
      text="Foyer could not reach its server just now. Check your connection and try again."
      back={{ href: asPath, label: 'Try again' }}
    />
  )
}
