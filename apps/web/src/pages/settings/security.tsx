import { SecurityScreen } from '../../features/mfa/SecurityScreen'
import { withSession } from '../../server/with-session'

export const getServerSideProps = withSession({ protected: true })
export default SecurityScreen
