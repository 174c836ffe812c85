import { ResetPasswordScreen } from '../features/auth'
import { withSession } from '../server/with-session'

// Where the password is changed: verified by the auth server, so a session signed out elsewhere is refused (ADR 031).
export const getServerSideProps = withSession({ fresh: true })
export default ResetPasswordScreen
