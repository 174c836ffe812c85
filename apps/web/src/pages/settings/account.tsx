import { AccountScreen } from '../../features/settings'
import { withSession } from '../../server/with-session'

export const getServerSideProps = withSession({ protected: true })
export default AccountScreen
