/**
 * The spec's two sets of breakpoints (§9), in px. The Tamagui media queries (config.ts) are built from them; the
 * plain-HTML parts of the app (ADR 053) read them here, without loading Tamagui, and their CSS modules use the same
 * numbers in their @media rules (sm 640, md 768, lg 1024). config.test.ts pins them.
 */
export const breakpoints = {
  '2xs': 340,
  xs: 460,
  sm: 640,
  md: 768,
  lg: 1024,
  xl: 1280,
  '2xl': 1536,
} as const

export const maxWidthBreakpoints = {
  upTo390: 390,
  upTo660: 660,
  upTo800: 800,
  upTo1020: 1020,
  upTo1280: 1280,
  upTo1650: 1650,
} as const
