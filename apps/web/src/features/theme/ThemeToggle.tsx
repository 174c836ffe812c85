import { Button, Text } from 'tamagui'

import { MonitorIcon, MoonIcon, SunIcon } from '../../ui/icons'
import { useThemeSetting } from './ThemeProvider'
import type { ThemeSetting } from './theme-setting'

const LABELS: Record<ThemeSetting, string> = { system: 'System', light: 'Light', dark: 'Dark' }
const ICONS = { system: MonitorIcon, light: SunIcon, dark: MoonIcon } as const

/**
 * Cycles the theme preference. Its accessible name says the current preference ("Theme: dark"); before
 * mount the preference is unknown (it lives in localStorage), so it renders a neutral "Theme".
 */
export function ThemeToggle() {
  const { setting, mounted, cycle } = useThemeSetting()
  const Icon = mounted ? ICONS[setting] : MonitorIcon
  const label = mounted ? `Theme: ${setting}` : 'Theme'
  return (
    <Button
      data-testid="theme-toggle"
      aria-label={label}
      onPress={cycle}
      size="$3"
      chromeless
      borderWidth={1}
      borderColor="$borderColor"
      paddingHorizontal="$2.5"
      gap="$1.5"
      icon={<Icon size={17} />}
      focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid', outlineOffset: 2 }}
    >
      <Text fontSize="$3" color="$color11" display="none" $sm={{ display: 'flex' }}>
        {mounted ? LABELS[setting] : ''}
      </Text>
    </Button>
  )
}
