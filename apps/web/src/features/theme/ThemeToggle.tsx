import controls from '../../ui/controls.module.css'
import { MonitorIcon, MoonIcon, SunIcon } from '../../ui/icons'
import { useThemeSetting } from './ThemeProvider'
import styles from './theme-toggle.module.css'
import type { ThemeSetting } from './theme-setting'

const LABELS: Record<ThemeSetting, string> = { system: 'System', light: 'Light', dark: 'Dark' }
const ICONS = { system: MonitorIcon, light: SunIcon, dark: MoonIcon } as const

/**
 * Cycles the theme preference. Its accessible name says the current preference ("Theme: dark"); before
 * mount the preference is unknown (it lives in localStorage), so it renders a neutral "Theme". The written
 * preference beside the icon from the sm breakpoint. Plain HTML: it is in every page's first load.
 */
export function ThemeToggle() {
  const { setting, mounted, cycle } = useThemeSetting()
  const Icon = mounted ? ICONS[setting] : MonitorIcon
  const label = mounted ? `Theme: ${setting}` : 'Theme'
  return (
    <button
      type="button"
      data-testid="theme-toggle"
      aria-label={label}
      onClick={cycle}
      className={`${controls.button} ${controls.small} ${controls.chromeless} ${styles.toggle}`}
    >
      <Icon size={17} />
      <span className={styles.label}>{mounted ? LABELS[setting] : ''}</span>
    </button>
  )
}
