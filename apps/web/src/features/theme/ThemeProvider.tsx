import { createContext, useCallback, useContext, useEffect, useLayoutEffect, useMemo, useState, type ReactNode } from 'react'
import {
  DARK_SCHEME_QUERY,
  THEME_CLASS,
  THEME_STORAGE_KEY,
  nextThemeSetting,
  parseThemeSetting,
  resolveTheme,
  type ColorScheme,
  type ThemeSetting,
} from './theme-setting'

const useIsomorphicLayoutEffect = typeof window === 'undefined' ? useEffect : useLayoutEffect

export interface ThemeState {
  /** The stored preference. Only meaningful once `mounted` is true (unknown on the server). */
  setting: ThemeSetting
  /** The scheme in effect (preference resolved against the OS scheme). */
  resolved: ColorScheme
  /** False during SSR and hydration: render preference-dependent labels only after mount. */
  mounted: boolean
  setSetting: (setting: ThemeSetting) => void
  /** system → opposite of the resolved scheme → the remaining one → system. */
  cycle: () => void
}

const ThemeContext = createContext<ThemeState | null>(null)

function readStoredSetting(): ThemeSetting {
  try {
    return parseThemeSetting(window.localStorage.getItem(THEME_STORAGE_KEY))
  } catch {
    return 'system'
  }
}

/** The scheme the inline head script already applied, so the first client render agrees with the page. */
function readAppliedScheme(): ColorScheme {
  if (typeof document === 'undefined') return 'light'
  return document.documentElement.classList.contains(THEME_CLASS.dark) ? 'dark' : 'light'
}

/** Puts exactly one of `t_light` / `t_dark` on <html> (and the matching `color-scheme`). */
export function applyToDocument(scheme: ColorScheme) {
  const html = document.documentElement
  html.classList.remove(THEME_CLASS[scheme === 'dark' ? 'light' : 'dark'])
  html.classList.add(THEME_CLASS[scheme])
  html.style.colorScheme = scheme
}

/**
 * Owns the theme preference (localStorage `theme`), follows the OS scheme live and other tabs' changes, and keeps
 * `t_light` / `t_dark` on <html>: the CSS variables Tamagui generates (_document's stylesheet) follow that class, so
 * plain elements styled with them and Tamagui components alike take the theme. It renders no Tamagui provider: the
 * parts of a page that still use Tamagui components bring one (`TamaguiScope`, `withTamagui`), so Tamagui's runtime
 * is not in every page's first load (ADR 053).
 */
export function ThemeProvider({ children }: { children: ReactNode }) {
  const [setting, setSettingState] = useState<ThemeSetting>('system')
  const [systemScheme, setSystemScheme] = useState<ColorScheme>(readAppliedScheme)
  const [mounted, setMounted] = useState(false)
  const resolved = mounted ? resolveTheme(setting, systemScheme) : readAppliedScheme()

  useIsomorphicLayoutEffect(() => {
    const media = window.matchMedia(DARK_SCHEME_QUERY)
    setSettingState(readStoredSetting())
    setSystemScheme(media.matches ? 'dark' : 'light')
    setMounted(true)

    const onSchemeChange = (event: MediaQueryListEvent) => setSystemScheme(event.matches ? 'dark' : 'light')
    // Another tab wrote the preference: apply it here without writing it back.
    const onStorage = (event: StorageEvent) => {
      if (event.key === THEME_STORAGE_KEY || event.key === null) setSettingState(readStoredSetting())
    }
    media.addEventListener('change', onSchemeChange)
    window.addEventListener('storage', onStorage)
    return () => {
      media.removeEventListener('change', onSchemeChange)
      window.removeEventListener('storage', onStorage)
    }
  }, [])

  useIsomorphicLayoutEffect(() => {
    if (mounted) applyToDocument(resolved)
  }, [mounted, resolved])

  const setSetting = useCallback((next: ThemeSetting) => {
    setSettingState(next)
    try {
      window.localStorage.setItem(THEME_STORAGE_KEY, next)
    } catch {
      // storage unavailable (private mode): the preference lasts for this page only
    }
  }, [])

  const cycle = useCallback(() => setSetting(nextThemeSetting(setting, systemScheme)), [setSetting, setting, systemScheme])

  const value = useMemo<ThemeState>(
    () => ({ setting, resolved, mounted, setSetting, cycle }),
    [setting, resolved, mounted, setSetting, cycle],
  )

  return (
    <ThemeContext.Provider value={value}>{children}</ThemeContext.Provider>
  )
}

export function useThemeSetting(): ThemeState {
  const state = useContext(ThemeContext)
  if (!state) throw new Error('useThemeSetting must be used inside <ThemeProvider>')
  return state
}
