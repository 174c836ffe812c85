export { SecurityScreen } from './SecurityScreen'
export { MfaScreen } from './MfaScreen'
