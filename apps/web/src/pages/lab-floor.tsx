import type { GetServerSideProps } from 'next'

/**
 * The floor page of the lab benchmark (bench/web-lab.ts): a server-rendered page of the same build that renders
 * without the app's providers or UI kit (`bare`: _app renders it alone), so a cold load of it costs what React + Next
 * + this build's shared chunks cost and nothing of the app's own rendering. Not reachable by users: it answers 404
 * unless the server process was started with FOYER_LAB_FLOOR=1 (a server-only variable the bench sets, never set in
 * production).
 */
export const getServerSideProps: GetServerSideProps = async () => {
  if (process.env.FOYER_LAB_FLOOR !== '1') return { notFound: true }
  return { props: {} }
}

export default function LabFloor() {
  return (
    <main style={{ maxWidth: 560, margin: '48px auto', padding: '0 16px', fontFamily: 'system-ui, sans-serif' }}>
      <h1 style={{ fontSize: 32, margin: '0 0 12px' }}>Foyer</h1>
      <p style={{ fontSize: 18, lineHeight: 1.5 }}>
        A calm place to keep your notes. This page renders without the app&apos;s providers: the floor of a cold load.
      </p>
    </main>
  )
}
LabFloor.bare = true
