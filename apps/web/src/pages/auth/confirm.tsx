import { ConfirmScreen } from '../../features/auth'
import { confirmServerSideProps } from '../../server/auth-confirm'

export const getServerSideProps = confirmServerSideProps
export default ConfirmScreen
