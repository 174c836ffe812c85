export { SystemStatusCard } from './SystemStatusCard'
