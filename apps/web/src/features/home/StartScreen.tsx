import dynamic from 'next/dynamic'

import { PageTitle } from '../../lib/page-title'
import type { ViewportHint } from '../../lib/viewport-hint'
import { useSession } from '../auth'

// Each visitor downloads only their branch: the notes app when signed in, the welcome page otherwise. Both render
// on the server (ssr), and Next preloads the rendered branch's chunk with the page (bench/web-size.ts counts it).
const NotesScreen = dynamic(() => import(/* webpackExports: ["NotesScreen"] */ '../notes').then((m) => m.NotesScreen))
const HomeScreen = dynamic(() => import('./HomeScreen').then((m) => m.HomeScreen))

/**
 * `/`: the notes list for a signed-in user, the welcome page for everyone else. `viewportHint`: the width class of the
 * browser's last page, from the server (the list renders the shape that fits it; lib/viewport-hint.ts).
 */
export function StartScreen({ viewportHint = null }: { viewportHint?: ViewportHint | null }) {
  const { user } = useSession()
  if (!user) return <HomeScreen />
  return (
    <>
      <PageTitle name="Notes" />
      <NotesScreen viewportHint={viewportHint} />
    </>
  )
}
