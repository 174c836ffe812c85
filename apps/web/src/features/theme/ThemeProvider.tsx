import { createContext, useCallback, useContext, useEffect, useLayoutEffect, useMemo, useState, type ReactNode } from 'react'
import { TamaguiProvider } from 'tamagui'

import { config } from '../../ui/config'
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
  /** The stored preference. Unknown on the server ('system' there): render what depends on it only after mount (useMounted). */
  setting: ThemeSetting
  /** The scheme in effect (preference resolved against the OS scheme). */
  resolved: ColorScheme
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

/** The OS scheme now ('light' on the server, which cannot know it). */
function readSystemScheme(): ColorScheme {
  if (typeof window === 'undefined' || typeof window.matchMedia !== 'function') return 'light'
  return window.matchMedia(DARK_SCHEME_QUERY).matches ? 'dark' : 'light'
}

function applyToDocument(scheme: ColorScheme) {
  const html = document.documentElement
  html.classList.remove(THEME_CLASS[scheme === 'dark' ? 'light' : 'dark'])
  html.classList.add(THEME_CLASS[scheme])
  html.style.colorScheme = scheme
}

/**
 * Owns the theme preference (localStorage `theme`), follows the OS scheme live and other tabs' changes,
 * keeps `t_light` / `t_dark` on <html>, and feeds the resolved scheme to Tamagui.
 */
export function ThemeProvider({ children }: { children: ReactNode }) {
  // Read once, in the first render, so hydrating changes nothing afterwards (a state update at mount would re-render
  // every themed component right after hydration): the inline head script applied the same preference before paint.
  const [setting, setSettingState] = useState<ThemeSetting>(() => (typeof window === 'undefined' ? 'system' : readStoredSetting()))
  const [systemScheme, setSystemScheme] = useState<ColorScheme>(readSystemScheme)
  const resolved = resolveTheme(setting, systemScheme)

  useEffect(() => {
    const media = window.matchMedia(DARK_SCHEME_QUERY)
    const onSchemeChange = (event: MediaQueryListEvent) => setSystemScheme(event.matches ? 'dark' : 'light')
    // Another tab wrote the preference: apply it here without writing it back.
    const onStorage = (event: StorageEvent) => {
      if (event.key === THEME_STORAGE_KEY || event.key === null) setSettingState(readStoredSetting())
    }
    media.addEventListener('change', onSchemeChange)
    window.addEventListener('storage', onStorage)
    // Changed between the first render and now (rare): follow it.
    setSystemScheme(media.matches ? 'dark' : 'light')
    setSettingState(readStoredSetting())
    return () => {
      media.removeEventListener('change', onSchemeChange)
      window.removeEventListener('storage', onStorage)
    }
  }, [])

  useIsomorphicLayoutEffect(() => {
    applyToDocument(resolved)
  }, [resolved])

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
    () => ({ setting, resolved, setSetting, cycle }),
    [setting, resolved, setSetting, cycle],
  )

  return (
    <ThemeContext.Provider value={value}>
      <TamaguiProvider config={config} defaultTheme={resolved} disableInjectCSS>
        {children}
      </TamaguiProvider>
    </ThemeContext.Provider>
  )
}

export function useThemeSetting(): ThemeState {
  const state = useContext(ThemeContext)
  if (!state) throw new Error('useThemeSetting must be used inside <ThemeProvider>')
  return state
}
