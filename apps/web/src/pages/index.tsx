import { StartScreen } from '../features/home'
import { withSession } from '../server/with-session'

export const getServerSideProps = withSession()
export default StartScreen
