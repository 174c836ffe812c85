import { ForgotPasswordScreen } from '../features/auth'
import { withSession } from '../server/with-session'

export const getServerSideProps = withSession()
export default ForgotPasswordScreen
