import { config } from './config'

/** The last stylesheet built, and the runtime rules it was built with. */
let built: { runtime: string; css: string } | undefined

/**
 * Tamagui's stylesheet for the server's HTML (pages/_document.tsx), the same text as `config.getCSS()`.
 *
 * `getCSS()` rebuilds the themes' rules (≈ 60 kB of text) on every call: ≈ 0.6–0.9 ms of every page the server
 * renders, for text that never changes while it runs. Only its last part can: the rules of the Tamagui components
 * rendered so far in this process. So the whole is rebuilt only when those have changed (ADR 061).
 */
export function tamaguiCSS(): string {
  const runtime = config.getCSS({ exclude: 'design-system' })
  if (built?.runtime !== runtime) built = { runtime, css: config.getCSS() }
  return built.css
}
