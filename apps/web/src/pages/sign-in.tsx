import { SignInScreen } from '../features/auth'
import { resolveNext } from '../lib/safe-next'
import { withSession } from '../server/with-session'

export const getServerSideProps = withSession({ signedInRedirect: (ctx) => resolveNext(ctx.query.next) })
export default SignInScreen
