import { SecurityScreen } from '../../features/mfa/SecurityScreen'
import { withSession } from '../../server/with-session'

export const getServerSideProps = withSession({ protected: true, fresh: true })
export default SecurityScreen
