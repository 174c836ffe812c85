import { themeInitScript } from '../features/theme/theme-setting'
import { viewportHintScript } from './viewport-hint'

/**
 * The inline scripts of every page's `<head>`, in order (`_document`): the theme before first paint, then the
 * viewport hint for the next server render. The Content-Security-Policy allows exactly these, by hash (next.config).
 */
export const headScripts = (): string[] => [themeInitScript(), viewportHintScript()]
