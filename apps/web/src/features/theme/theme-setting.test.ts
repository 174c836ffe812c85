import { runInNewContext } from 'node:vm'

import { describe, expect, it } from 'vitest'

import { nextThemeSetting, parseThemeSetting, resolveTheme, themeInitScript, type ThemeSetting } from './theme-setting'

describe('theme cycle', () => {
  it('goes system → light → dark → system when the OS is dark', () => {
    let setting: ThemeSetting = 'system'
    const seen: ThemeSetting[] = []
    for (let i = 0; i < 4; i++) {
      setting = nextThemeSetting(setting, 'dark')
      seen.push(setting)
    }
    expect(seen).toEqual(['light', 'dark', 'system', 'light'])
  })

  it('goes system → dark → light → system when the OS is light', () => {
    expect(nextThemeSetting('system', 'light')).toBe('dark')
    expect(nextThemeSetting('dark', 'light')).toBe('light')
    expect(nextThemeSetting('light', 'light')).toBe('system')
  })

  it('always changes the visible scheme on the first click from system', () => {
    for (const os of ['light', 'dark'] as const) {
      expect(resolveTheme(nextThemeSetting('system', os), os)).not.toBe(resolveTheme('system', os))
    }
  })

  it('resolves system to the OS scheme and explicit values to themselves', () => {
    expect(resolveTheme('system', 'dark')).toBe('dark')
    expect(resolveTheme('system', 'light')).toBe('light')
    expect(resolveTheme('light', 'dark')).toBe('light')
    expect(resolveTheme('dark', 'light')).toBe('dark')
  })

  it('treats a missing or unknown stored value as system', () => {
    expect(parseThemeSetting(null)).toBe('system')
    expect(parseThemeSetting('blue')).toBe('system')
    expect(parseThemeSetting('dark')).toBe('dark')
  })
})

describe('theme init script', () => {
  function run(stored: string | null, osDark: boolean, initial: string[] = []) {
    const classes = new Set(initial)
    const html = {
      classList: {
        add: (...names: string[]) => names.forEach((n) => classes.add(n)),
        remove: (...names: string[]) => names.forEach((n) => classes.delete(n)),
      },
      style: { colorScheme: '' },
    }
    runInNewContext(themeInitScript(), {
      localStorage: { getItem: (key: string) => (key === 'theme' ? stored : null) },
      window: { matchMedia: (q: string) => ({ matches: q === '(prefers-color-scheme: dark)' && osDark }) },
      document: { documentElement: html },
    })
    return { classes: [...classes], colorScheme: html.style.colorScheme }
  }

  it('applies exactly one of t_light / t_dark from the stored preference and the OS scheme', () => {
    expect(run(null, true)).toEqual({ classes: ['t_dark'], colorScheme: 'dark' })
    expect(run(null, false)).toEqual({ classes: ['t_light'], colorScheme: 'light' })
    expect(run('system', true).classes).toEqual(['t_dark'])
    expect(run('light', true).classes).toEqual(['t_light'])
    expect(run('dark', false, ['t_light']).classes).toEqual(['t_dark'])
    expect(run('garbage', false).classes).toEqual(['t_light'])
  })
})
