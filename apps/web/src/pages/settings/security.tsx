import { SecurityScreen } from '../../features/mfa/SecurityScreen'
import { withTamagui } from '../../features/theme'
import { withSession } from '../../server/with-session'

export const getServerSideProps = withSession({ protected: true, fresh: true })
export default withTamagui(SecurityScreen)
