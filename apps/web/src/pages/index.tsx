import { StartScreen } from '../features/home'
import { listInput, parseListParams } from '../features/notes/list-params'
import { withApi, type ServerQueriesProps } from '../lib/api-provider'
import { prefetchQueries } from '../server/prefetch-queries'
import { viewportHintOf, type ViewportHint } from '../lib/viewport-hint'
import { withSession } from '../server/with-session'

// Signed in, `/` is the notes list: a session that has not finished two-factor sign-in goes to /mfa first. The server
// render fetches the list the browser would ask for (same input, from the URL) and the page hydrates it (ADR 039), in
// the shape that fits the width the browser's last page had (lib/viewport-hint.ts, ADR 056).
export const getServerSideProps = withSession<ServerQueriesProps & { viewportHint?: ViewportHint }>({
  secondFactorWhenSignedIn: true,
  loadVerified: async (ctx, verified) => {
    if (!verified || verified.needsSecondFactor) return { props: {} }
    const input = listInput(parseListParams(ctx.query))
    const serverQueries = await prefetchQueries(verified, (trpc, queryClient) => queryClient.prefetchQuery(trpc.notes.list.queryOptions(input)))
    const viewportHint = viewportHintOf(ctx.req.headers.cookie)
    return { props: { ...(serverQueries ? { serverQueries } : {}), ...(viewportHint ? { viewportHint } : {}) } }
  },
})
export default withApi(StartScreen)
