export { SessionProvider, useSession, type SessionState } from './SessionProvider'
