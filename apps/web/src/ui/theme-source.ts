/**
 * The theme definition: Tamagui v5 light/dark palettes with an accent theme and the blue, red, yellow and
 * green accents as sub-themes (light_blue, dark_red, …), one level under light/dark (so dark/light nesting
 * stays within 2 levels). Not imported by the app at run time — scripts/generate-themes.ts bakes the result
 * into themes.generated.ts.
 */
import { createV5Theme, defaultChildrenThemes } from '@tamagui/config/v5'

export const accentNames = ['blue', 'red', 'yellow', 'green'] as const

/** Sub-themes the v5 builder always adds (for its own palette generation) but the app never renders. */
const UNUSED_CHILDREN = new Set(['black', 'white'])

export function buildThemes() {
  const all = createV5Theme({
    childrenThemes: {
      blue: defaultChildrenThemes.blue,
      red: defaultChildrenThemes.red,
      yellow: defaultChildrenThemes.yellow,
      green: defaultChildrenThemes.green,
    },
    grandChildrenThemes: {},
    componentThemes: false,
  })
  // Only the themes the app renders: every theme costs its CSS variables in each page's <style> (ADR 038).
  return Object.fromEntries(
    Object.entries(all).filter(([name]) => !UNUSED_CHILDREN.has(name.replace(/^(light|dark)_/, ''))),
  ) as { [K in keyof typeof all as K extends `${string}_${'black' | 'white'}` ? never : K]: (typeof all)[K] }
}
