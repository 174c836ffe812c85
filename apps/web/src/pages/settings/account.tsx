import { AccountScreen } from '../../features/settings'
import { withSession } from '../../server/with-session'

export const getServerSideProps = withSession({ protected: true, fresh: true })
export default AccountScreen
