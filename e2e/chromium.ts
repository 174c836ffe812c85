// Debian's Chromium, as the browser tests and the lab benchmark (bench/web-lab.ts) launch it. No test framework here:
// the benchmark imports this file too.
export const CHROMIUM_PATH = '/usr/bin/chromium';
/** Headless on a container: no sandbox, no GPU, no QUIC, and none of the browser's own background traffic. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Every new browser context is a new window, and for every new window this Chromium loads the omnibox's two popup
 * WebUIs (chrome://omnibox-popup.top-chrome/ and its AI-mode page) in a renderer of their own: ≈ 0.25 s of CPU per
 * context, during the page's own load (ADR 060). The tests and the lab switch both off.
 */
export const DISABLED_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'];

/**
 * One `--disable-features` switch: the features of `existing` (a launcher's own switch, e.g. Playwright's) and
 * DISABLED_FEATURES. Chromium reads only the last `--disable-features` of its command line, so a second switch
 * would drop the launcher's list.
 */
export function disableFeaturesSwitch(existing?: string): string {
  const prefix = '--disable-features=';
  const features = existing?.startsWith(prefix) ? existing.slice(prefix.length).split(',').filter(Boolean) : [];
  return prefix + [...new Set([...features, ...DISABLED_FEATURES])].join(',');
}
