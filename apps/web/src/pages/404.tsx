import { NotFoundScreen } from '../features/app-frame'

export default NotFoundScreen
