import { StartScreen } from '../features/home'
import { withApi } from '../lib/api-provider'
import { withSession } from '../server/with-session'

// Signed in, `/` is the notes list: a session that has not finished two-factor sign-in goes to /mfa first.
export const getServerSideProps = withSession({ secondFactorWhenSignedIn: true })
export default withApi(StartScreen)
