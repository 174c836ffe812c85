/**
 * The single Tamagui configuration of the app: tokens, themes, media queries, fonts and animations.
 * Every number here is a requirement from the specification (§9); tests in config.test.ts pin them.
 */
import { createAnimations } from '@tamagui/animations-css'
import { createFont, createTamagui, createTokens, type CreateTamaguiProps } from 'tamagui'

import { breakpoints, maxWidthBreakpoints } from './breakpoints'
import { themes } from './themes.generated'

// ---------------------------------------------------------------------------------------------
// Animations (web: CSS driver). Durations in ms are the spec's; easing curves are ours.
// ---------------------------------------------------------------------------------------------

const easeOut = 'cubic-bezier(0.25, 0.1, 0.25, 1)'
const springy = 'cubic-bezier(0.175, 0.885, 0.32, 1.275)'

/** Duration of every named animation preset, in milliseconds. */
export const animationDurations = {
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
} as const

export type AnimationName = keyof typeof animationDurations

/** The CSS transition value of each preset. */
export const animationPresets = {
  '75ms': '75ms ease-in-out',
  '100ms': '100ms ease-in-out',
  '200ms': '200ms ease-in-out',
  bouncy: `200ms ${springy}`,
  superBouncy: `500ms ${springy}`,
  lazy: `1000ms ${easeOut}`,
  medium: `300ms ${easeOut}`,
  slow: `500ms ${easeOut}`,
  quick: `400ms ${easeOut}`,
  quicker: `300ms ${easeOut}`,
  quickest: `200ms ${easeOut}`,
  tooltip: `400ms ${easeOut}`,
} as const satisfies Record<AnimationName, string>

export const animations = createAnimations(animationPresets)

export type UIAnimationDriver = ReturnType<typeof createAnimations<typeof animationPresets>>

// ---------------------------------------------------------------------------------------------
// Media queries. Two sets, both from the spec:
//  - min-width (mobile-first) breakpoints 2xs…2xl: used by the app for layout (app frame, cards).
//  - max-width breakpoints 390…1650 under `upTo*` names: available for "at most this wide"
//    adjustments (the app uses upTo390 for the narrowest phones). Distinct names so neither set
//    shadows the other.
// ---------------------------------------------------------------------------------------------

// Both sets live in breakpoints.ts (no Tamagui import), so that plain-HTML code can read them without loading Tamagui.
export { breakpoints, maxWidthBreakpoints }

// Order matters: later entries win in CSS. Max-width queries first (wide → narrow so the narrowest
// wins), then min-width queries (narrow → wide so the widest wins).
export const media = {
  upTo1650: { maxWidth: maxWidthBreakpoints.upTo1650 },
  upTo1280: { maxWidth: maxWidthBreakpoints.upTo1280 },
  upTo1020: { maxWidth: maxWidthBreakpoints.upTo1020 },
  upTo800: { maxWidth: maxWidthBreakpoints.upTo800 },
  upTo660: { maxWidth: maxWidthBreakpoints.upTo660 },
  upTo390: { maxWidth: maxWidthBreakpoints.upTo390 },
  '2xs': { minWidth: breakpoints['2xs'] },
  xs: { minWidth: breakpoints.xs },
  sm: { minWidth: breakpoints.sm },
  md: { minWidth: breakpoints.md },
  lg: { minWidth: breakpoints.lg },
  xl: { minWidth: breakpoints.xl },
  '2xl': { minWidth: breakpoints['2xl'] },
} as const

/** What the server assumes before it can measure: a phone-sized viewport (mobile-first SSR). */
const mediaQueryDefaultActive = {
  upTo1650: true,
  upTo1280: true,
  upTo1020: true,
  upTo800: true,
  upTo660: true,
  upTo390: true,
  '2xs': true,
  xs: false,
  sm: false,
  md: false,
  lg: false,
  xl: false,
  '2xl': false,
} as const satisfies Record<keyof typeof media, boolean>

// ---------------------------------------------------------------------------------------------
// Fonts: system sans-serif stack (no web-font download); sizes 11…134, body default 14.
// ---------------------------------------------------------------------------------------------

export const systemFontStack =
  'system-ui, -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif'

export const fontSizes = {
  1: 11,
  2: 12,
  3: 13,
  4: 14,
  true: 14,
  5: 16,
  6: 18,
  7: 20,
  8: 23,
  9: 30,
  10: 46,
  11: 55,
  12: 62,
  13: 72,
  14: 92,
  15: 114,
  16: 134,
} as const

const lineHeights = Object.fromEntries(
  Object.entries(fontSizes).map(([key, size]) => [key, Math.round(size * (size <= 20 ? 1.5 : 1.2))]),
) as { [K in keyof typeof fontSizes]: number }

/** One value per size key (Tamagui fills gaps in font maps unpredictably, so every key is spelled out). */
function perSize<T>(pick: (size: number) => T): { [K in keyof typeof fontSizes]: T } {
  return Object.fromEntries(Object.entries(fontSizes).map(([key, px]) => [key, pick(px)])) as {
    [K in keyof typeof fontSizes]: T
  }
}

const bodyFont = createFont({
  family: systemFontStack,
  size: fontSizes,
  lineHeight: lineHeights,
  weight: perSize(() => '400'),
  letterSpacing: perSize((px) => (px < 20 ? 0 : px < 40 ? -0.3 : -0.8)),
})

const headingFont = createFont({
  family: systemFontStack,
  size: fontSizes,
  lineHeight: lineHeights,
  weight: perSize((px) => (px < 20 ? '600' : '700')),
  letterSpacing: perSize((px) => (px < 20 ? 0 : px < 40 ? -0.4 : -1)),
})

// ---------------------------------------------------------------------------------------------
// Tokens: space/size on a 4-px-ish scale, radius 0…50, z-index 0…500, a few fixed colours.
// ---------------------------------------------------------------------------------------------

export const radius = {
  0: 0,
  1: 3,
  2: 5,
  3: 7,
  4: 9,
  true: 9,
  5: 10,
  6: 16,
  7: 19,
  8: 22,
  9: 26,
  10: 34,
  11: 42,
  12: 50,
} as const

export const zIndex = {
  0: 0,
  1: 100,
  2: 200,
  3: 300,
  4: 400,
  5: 500,
} as const

const size = {
  0: 0,
  0.25: 2,
  0.5: 4,
  0.75: 8,
  1: 20,
  1.5: 24,
  2: 28,
  2.5: 32,
  3: 36,
  3.5: 40,
  4: 44,
  true: 44,
  4.5: 48,
  5: 52,
  6: 64,
  7: 74,
  8: 84,
  9: 94,
  10: 104,
} as const

const space = {
  0: 0,
  0.25: 1,
  0.5: 2,
  0.75: 4,
  1: 6,
  1.5: 8,
  2: 10,
  2.5: 12,
  3: 14,
  3.5: 16,
  4: 18,
  true: 18,
  4.5: 20,
  5: 24,
  6: 32,
  7: 40,
  8: 48,
  9: 56,
  10: 64,
  '-1': -6,
  '-2': -10,
  '-3': -14,
} as const

export const tokens = createTokens({
  size,
  space,
  radius,
  zIndex,
  color: {
    white: '#ffffff',
    black: '#000000',
  },
})

// ---------------------------------------------------------------------------------------------
// Themes: light and dark, each with an accent theme and the blue / red / yellow / green accents
// (light_blue, dark_red, …), defined in theme-source.ts and baked into themes.generated.ts.
// ---------------------------------------------------------------------------------------------

export { themes }
export const accentNames = ['blue', 'red', 'yellow', 'green'] as const
export type AccentName = (typeof accentNames)[number]

// ---------------------------------------------------------------------------------------------
// The config factory.
// ---------------------------------------------------------------------------------------------

export class UIConfigurationError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'UIConfigurationError'
  }
}

export interface UIConfigOptions {
  /** The animation driver; required. Tamagui 2 only warns without one, we refuse to start. */
  animations: UIAnimationDriver | undefined
}

export function createUIConfig(options: UIConfigOptions) {
  if (!options.animations) {
    throw new UIConfigurationError(
      'No animation driver configured: animations must be set in the UI configuration (src/ui/config.ts, createUIConfig({ animations })).',
    )
  }
  return createTamagui({
    animations: options.animations,
    media,
    tokens,
    // In the browser the themes come from the CSS the server sent (_document's <style id="tamagui-css">, every
    // theme's variables): with an empty object Tamagui 2 reads them back from that stylesheet (scanAllSheets), so
    // the theme JS (themes.generated.ts, ~11 kB gz) is not shipped twice. Next compiles `typeof window` to a constant
    // per bundle, so the client bundle does not include the generated module at all (ADR 038).
    themes: (typeof window === 'undefined' ? themes : {}) as typeof themes,
    fonts: { body: bodyFont, heading: headingFont },
    shorthands: {},
    selectionStyles: (theme: Record<string, unknown>) =>
      theme.color5 ? { backgroundColor: theme.color5, color: theme.color11 } : null,
    settings: {
      mediaQueryDefaultActive,
      // No second render pass right after hydration (ADR 048): otherwise every styled component renders again as soon
      // as it has hydrated (Tamagui's useDidFinishSSR flips). The server still renders every page; the one reader of
      // `useMedia()` (NotesScreen) waits for its own hydrated flag. TBT on /sign-in ≈ 25–35 % lower (bench/web-lab.ts).
      disableSSR: true,
      defaultFont: 'body',
      fastSchemeChange: true,
      shouldAddPrefersColorThemes: true,
      allowedStyleValues: 'somewhat-strict-web',
      addThemeClassName: 'html',
      styleCompat: 'web',
    },
  } satisfies CreateTamaguiProps)
}

export const config = createUIConfig({ animations })

export type AppConfig = typeof config

declare module 'tamagui' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- Tamagui's documented type hook
  interface TamaguiCustomConfig extends AppConfig {}
}

export default config
