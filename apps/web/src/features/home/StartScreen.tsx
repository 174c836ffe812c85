import Head from 'next/head'

import { SITE_TITLE } from '../../lib/site'
import { useSession } from '../auth'
import { NotesScreen } from '../notes'
import { HomeScreen } from './HomeScreen'

/** `/`: the notes list for a signed-in user, the welcome page for everyone else. */
export function StartScreen() {
  const { user } = useSession()
  if (!user) return <HomeScreen />
  return (
    <>
      <Head>
        <title>{`Notes · ${SITE_TITLE}`}</title>
      </Head>
      <NotesScreen />
    </>
  )
}
