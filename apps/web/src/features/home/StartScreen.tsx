import dynamic from 'next/dynamic'
import Head from 'next/head'

import { SITE_TITLE } from '../../lib/site'
import { useSession } from '../auth'

// Each visitor downloads only their branch: the notes app when signed in, the welcome page otherwise. Both render
// on the server (ssr), and Next preloads the rendered branch's chunk with the page (bench/web-size.ts counts it).
const NotesScreen = dynamic(() => import(/* webpackExports: ["NotesScreen"] */ '../notes').then((m) => m.NotesScreen))
const HomeScreen = dynamic(() => import('./HomeScreen').then((m) => m.HomeScreen))

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
