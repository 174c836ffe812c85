import type { Session } from '@supabase/supabase-js'
import type { GetServerSideProps, GetServerSidePropsContext, GetServerSidePropsResult } from 'next'

import { createServerSupabase, getVerifiedUser } from '../lib/supabase/server'
import { signInPathFor } from '../lib/safe-next'

export interface SessionPageProps {
  /** The verified session for the session provider; null when signed out. */
  initialSession: Session | null
}

export interface WithSessionOptions {
  /** Signed-out visitors are redirected to `/sign-in?next=<this path>`. */
  protected?: boolean
  /** Signed-in visitors are redirected here (e.g. the sign-in page sends them on). */
  signedInRedirect?: (ctx: GetServerSidePropsContext) => string
}

/**
 * The session of a page request, verified by the auth server. `getUser()` checks the access token (refreshing it
 * through the cookie when it expired — new cookies go to the response); only then is the cookie's session passed
 * on, with the verified user in it. Responses are private and never stored: they carry a session.
 */
export async function readVerifiedSession(ctx: Pick<GetServerSidePropsContext, 'req' | 'res'>): Promise<Session | null> {
  const supabase = createServerSupabase(ctx)
  const user = await getVerifiedUser(supabase)
  if (!user) return null
  const { data } = await supabase.auth.getSession()
  return data.session ? { ...data.session, user } : null
}

/**
 * `export const getServerSideProps = withSession({ protected: true })` — one line per page; passes
 * `initialSession` to the page (and so to the session provider in _app).
 */
export function withSession(options: WithSessionOptions = {}): GetServerSideProps<SessionPageProps> {
  return async (ctx): Promise<GetServerSidePropsResult<SessionPageProps>> => {
    ctx.res.setHeader('Cache-Control', 'private, no-cache, no-store, must-revalidate, max-age=0')
    const initialSession = await readVerifiedSession(ctx)
    if (!initialSession && options.protected) {
      return { redirect: { destination: signInPathFor(ctx.resolvedUrl), permanent: false } }
    }
    if (initialSession && options.signedInRedirect) {
      return { redirect: { destination: options.signedInRedirect(ctx), permanent: false } }
    }
    return { props: { initialSession } }
  }
}
