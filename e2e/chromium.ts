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
