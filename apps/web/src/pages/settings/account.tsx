import { AccountScreen } from '../../features/settings'
import { withTamagui } from '../../features/theme'
import { withSession } from '../../server/with-session'

export const getServerSideProps = withSession({ protected: true, fresh: true })
export default withTamagui(AccountScreen)
