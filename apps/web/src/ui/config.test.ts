import { describe, expect, it } from 'vitest'

import {
  animationDurations,
  animationPresets,
  animations,
  breakpoints,
  config,
  createUIConfig,
  maxWidthBreakpoints,
  systemFontStack,
  UIConfigurationError,
} from './config'
import { buildThemes } from './theme-source'
import { themes as generatedThemes } from './themes.generated'

const durationOf = (css: string) => Number(/^(\d+)ms\b/.exec(css)?.[1])

describe('UI configuration', () => {
  it('defines exactly the spec animation presets with their durations', () => {
    expect(animationDurations).toEqual({
      '75ms': 75,
      '100ms': 100,
      '200ms': 200,
      bouncy: 200,
      superBouncy: 500,
      lazy: 1000,
      medium: 300,
      slow: 500,
      quick: 400,
      quicker: 300,
      quickest: 200,
      tooltip: 400,
    })
    // The CSS the driver receives runs for exactly those durations.
    const driverAnimations = config.animations.animations as Record<string, string>
    expect(Object.keys(driverAnimations).sort()).toEqual(Object.keys(animationDurations).sort())
    for (const [name, ms] of Object.entries(animationDurations)) {
      expect(durationOf(driverAnimations[name] ?? ''), name).toBe(ms)
      expect(driverAnimations[name]).toBe(animationPresets[name as keyof typeof animationPresets])
    }
  })

  it('has the min-width breakpoints and the max-width set under their own names', () => {
    expect(breakpoints).toEqual({ '2xs': 340, xs: 460, sm: 640, md: 768, lg: 1024, xl: 1280, '2xl': 1536 })
    expect(Object.values(maxWidthBreakpoints)).toEqual([390, 660, 800, 1020, 1280, 1650])
    const media = config.media as Record<string, { minWidth?: number; maxWidth?: number }>
    for (const [name, px] of Object.entries(breakpoints)) expect(media[name]).toEqual({ minWidth: px })
    for (const [name, px] of Object.entries(maxWidthBreakpoints)) expect(media[name]).toEqual({ maxWidth: px })
    expect(Object.keys(media)).toHaveLength(13)
  })

  it('uses a system sans-serif font with sizes 11 to 134 and 14 as the default', () => {
    const body = config.fonts.body
    expect(body.family).toBe(systemFontStack)
    expect(systemFontStack).toMatch(/system-ui/)
    expect(systemFontStack.trim().endsWith('sans-serif')).toBe(true)
    const sizes = Object.values(body.size).map(Number)
    expect(Math.min(...sizes)).toBe(11)
    expect(Math.max(...sizes)).toBe(134)
    expect((body.size as Record<string, number>).true).toBe(14)
    expect(config.defaultFont).toBe('body')
  })

  it('has radius tokens 0 to 50 and z-index tokens 0 to 500', () => {
    const radii = Object.values(config.tokens.radius).map((t) => Number(t.val))
    expect(Math.min(...radii)).toBe(0)
    expect(Math.max(...radii)).toBe(50)
    const z = Object.values(config.tokens.zIndex).map((t) => Number(t.val))
    expect(z).toEqual([0, 100, 200, 300, 400, 500])
  })

  it('has light and dark themes with blue, red, yellow and green accents, nested at most 2 levels', () => {
    const names = Object.keys(config.themes)
    for (const scheme of ['light', 'dark']) {
      expect(names).toContain(scheme)
      expect(names).toContain(`${scheme}_accent`)
      for (const accent of ['blue', 'red', 'yellow', 'green']) expect(names).toContain(`${scheme}_${accent}`)
    }
    for (const name of names) expect(name.split('_').filter((part) => part === 'light' || part === 'dark')).toHaveLength(1)
    // themes differ between schemes
    expect(config.themes.light.background?.val).not.toBe(config.themes.dark.background?.val)
  })

  it('ships themes identical to the theme source (run scripts/generate-themes.ts after changing it)', () => {
    expect(JSON.parse(JSON.stringify(buildThemes()))).toEqual(generatedThemes)
  })

  it('throws a configuration error when no animation driver is given', () => {
    const create = () => createUIConfig({ animations: undefined })
    expect(create).toThrow(UIConfigurationError)
    expect(create).toThrow(/animations must be set in the UI configuration/)
    expect(() => createUIConfig({ animations })).not.toThrow()
  })
})
