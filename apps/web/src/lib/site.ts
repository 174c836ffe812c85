/** Generic starter texts for the page head (spec §1). */
export const SITE_TITLE = 'Foyer'
export const SITE_DESCRIPTION = 'Foyer — a web app starter with sign-in, notes, themes and a typed API.'
