import { MfaScreen } from '../features/mfa/MfaScreen'
import { resolveNext } from '../lib/safe-next'
import { withSession } from '../server/with-session'

// Reachable at aal1 (that is its purpose); signed-out visitors go to /sign-in, sessions that need no second
// factor go straight on to `next`.
export const getServerSideProps = withSession({
  protected: true,
  allowAal1: true,
  fresh: true,
  redirectUnlessMfaNeeded: (ctx) => resolveNext(ctx.query.next),
})
export default MfaScreen
