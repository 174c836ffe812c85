/** Theme preference logic, free of React and the DOM so it can be unit-tested and inlined as a script. */

export type ThemeSetting = 'light' | 'dark' | 'system'
export type ColorScheme = 'light' | 'dark'

/** localStorage key of the preference (spec §3). */
export const THEME_STORAGE_KEY = 'theme'
/** Class names put on <html> for the resolved scheme (spec §9). */
export const THEME_CLASS: Record<ColorScheme, string> = { light: 't_light', dark: 't_dark' }
export const DARK_SCHEME_QUERY = '(prefers-color-scheme: dark)'

export function parseThemeSetting(value: string | null | undefined): ThemeSetting {
  return value === 'light' || value === 'dark' || value === 'system' ? value : 'system'
}

export function resolveTheme(setting: ThemeSetting, systemScheme: ColorScheme): ColorScheme {
  return setting === 'system' ? systemScheme : setting
}

export function oppositeScheme(scheme: ColorScheme): ColorScheme {
  return scheme === 'dark' ? 'light' : 'dark'
}

/**
 * The preference after one toggle: system → the opposite of the scheme system resolves to → the remaining
 * one → system. With the OS in dark mode: system → light → dark → system; in light mode: system → dark →
 * light → system.
 */
export function nextThemeSetting(current: ThemeSetting, systemScheme: ColorScheme): ThemeSetting {
  const order: ThemeSetting[] = ['system', oppositeScheme(systemScheme), systemScheme]
  return order[(order.indexOf(current) + 1) % order.length] ?? 'system'
}

/**
 * The inline <head> script that applies the stored preference before first paint (no flash of the wrong
 * theme, works with the JS bundles blocked). Keep it self-contained: it is serialised as a string.
 */
export function themeInitScript(): string {
  const key = JSON.stringify(THEME_STORAGE_KEY)
  const query = JSON.stringify(DARK_SCHEME_QUERY)
  return (
    `(function(){var s='system';try{s=localStorage.getItem(${key})||'system'}catch(e){}` +
    `if(s!=='light'&&s!=='dark')s='system';` +
    `var d=s==='system'?(window.matchMedia&&window.matchMedia(${query}).matches?'dark':'light'):s;` +
    `var c=document.documentElement.classList;c.remove('t_light','t_dark');c.add('t_'+d);` +
    `document.documentElement.style.colorScheme=d})()`
  )
}
