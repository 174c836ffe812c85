/**
 * The theme definition: Tamagui v5 light/dark palettes with an accent theme and the blue, red, yellow and
 * green accents as sub-themes (light_blue, dark_red, …), one level under light/dark (so dark/light nesting
 * stays within 2 levels). Not imported by the app at run time — scripts/generate-themes.ts bakes the result
 * into themes.generated.ts.
 */
import { createV5Theme, defaultChildrenThemes } from '@tamagui/config/v5'

export const accentNames = ['blue', 'red', 'yellow', 'green'] as const

export function buildThemes() {
  return createV5Theme({
    childrenThemes: {
      blue: defaultChildrenThemes.blue,
      red: defaultChildrenThemes.red,
      yellow: defaultChildrenThemes.yellow,
      green: defaultChildrenThemes.green,
    },
    grandChildrenThemes: {},
    componentThemes: false,
  })
}
