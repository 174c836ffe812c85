export { ThemeProvider, useThemeSetting, type ThemeState } from './ThemeProvider'
export { TamaguiScope, withTamagui } from './TamaguiScope'
export { ThemeToggle } from './ThemeToggle'
export {
  THEME_CLASS,
  THEME_STORAGE_KEY,
  nextThemeSetting,
  resolveTheme,
  themeInitScript,
  type ColorScheme,
  type ThemeSetting,
} from './theme-setting'
