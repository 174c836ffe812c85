// Guest sessions' screens. Each is loaded where it is needed only (the banner and the sign-out dialog are dynamic
// imports of this index); the shared rules (who is a guest, the banner cookie) are in lib/guest.ts.
export { AddEmailForm, checkGuestSave } from './AddEmailForm'
export { GuestBanner } from './GuestBanner'
export { GuestSignOutDialog } from './GuestSignOutDialog'
export { readableGuestSaveError, readableGuestStartError, waitFromMessage } from './guest-errors'
export { TryAsGuest } from './TryAsGuest'
