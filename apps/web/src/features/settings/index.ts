export { AccountScreen } from './AccountScreen'
