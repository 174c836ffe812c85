// Shared helpers for the browser tests: Debian Chromium via playwright-core, a fresh context per test,
// and small page utilities (hydration wait, theme class, visible background colour).
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
import { afterAll, beforeAll, inject, onTestFinished } from 'vitest';
import { CHROMIUM_ARGS, CHROMIUM_PATH, disableFeaturesSwitch } from './chromium.ts';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const SCREENSHOT_DIR = join(ROOT, 'test-results/screenshots');

const injectedBaseURL: string | undefined = inject('baseURL');
if (!injectedBaseURL) {
  throw new Error('The browser tests need their global setup: run them with `vitest run --config e2e/vitest.config.ts`.');
}
export const baseURL: string = injectedBaseURL;

const playwrightFeatures = inject('playwrightDisableFeatures');

/** Chromium with Playwright's switches, its `--disable-features` list extended by ours (e2e/chromium.ts). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [...CHROMIUM_ARGS, disableFeaturesSwitch(playwrightFeatures)],
    ignoreDefaultArgs: playwrightFeatures ? [playwrightFeatures] : [],
    headless: true,
  });
}

export interface BrowserFixture {
  /**
   * A fresh context (own storage, cookies) closed automatically when the current test ends. The test fails if any
   * page of it reported a Content-Security-Policy violation, unless `policy.allowViolations`.
   */
  newContext(options?: BrowserContextOptions, policy?: CspPolicy): Promise<BrowserContext>;
  /** A page in a fresh context. */
  newPage(options?: BrowserContextOptions): Promise<Page>;
}

export interface CspPolicy {
  /** The test provokes violations on purpose and inspects them with `cspViolationsOf` (default false). */
  allowViolations?: boolean;
}

/** A `securitypolicyviolation` event as the page saw it. */
export interface CspViolation {
  directive: string;
  blockedURI: string;
  documentURI: string;
  sample: string;
  disposition: string;
}

const violationsByContext = new WeakMap<BrowserContext, CspViolation[]>();

/** Records every CSP violation of every page and frame of the context, from the first script on. */
async function watchCspViolations(context: BrowserContext): Promise<CspViolation[]> {
  const violations: CspViolation[] = [];
  violationsByContext.set(context, violations);
  await context.exposeBinding('__foyerCspViolation', (_source, violation: CspViolation) => {
    violations.push(violation);
  });
  await context.addInitScript(() => {
    const report = (window as unknown as { __foyerCspViolation: (v: unknown) => void }).__foyerCspViolation;
    window.addEventListener(
      'securitypolicyviolation',
      (event) => {
        report({
          directive: event.effectiveDirective,
          blockedURI: event.blockedURI,
          documentURI: event.documentURI,
          sample: event.sample,
          disposition: event.disposition,
        });
      },
      true,
    );
  });
  return violations;
}

/** The violations recorded so far in a context made by `useBrowser()`. */
export function cspViolationsOf(context: BrowserContext): CspViolation[] {
  return violationsByContext.get(context) ?? [];
}

function describeViolation(v: CspViolation): string {
  return `  ${v.directive} blocked ${v.blockedURI || '(inline)'} on ${v.documentURI}${v.sample ? ` — "${v.sample}"` : ''}`;
}

/** One Chromium per test file; every test gets its own context. */
export function useBrowser(): BrowserFixture {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  const newContext = async (options: BrowserContextOptions = {}, policy: CspPolicy = {}): Promise<BrowserContext> => {
    if (!browser) throw new Error('browser not launched');
    const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 800 }, ...options });
    const violations = await watchCspViolations(context);
    onTestFinished(async () => {
      await context.close();
      // Every page of every test runs under the app's enforced Content-Security-Policy: any violation (a blocked
      // script, style, connection or frame) fails the test that caused it.
      if (!policy.allowViolations && violations.length > 0) {
        throw new Error(`Content-Security-Policy violations:\n${violations.map(describeViolation).join('\n')}`);
      }
    });
    return context;
  };
  return {
    newContext,
    async newPage(options) {
      const context = await newContext(options);
      return context.newPage();
    },
  };
}

/** The theme toggle's accessible name once the app has mounted (before mount it is just "Theme"). */
export const MOUNTED_TOGGLE_NAME = /^Theme: (system|light|dark)$/;

/** Navigates and waits until React has hydrated (the theme toggle shows the preference only after mount). */
export async function gotoHydrated(page: Page, path = '/'): Promise<void> {
  const response = await page.goto(path);
  if (!response) throw new Error(`no response for ${path}`);
  await page.getByRole('button', { name: MOUNTED_TOGGLE_NAME }).waitFor({ state: 'visible', timeout: 30_000 });
}

/**
 * Console errors (and warnings with `{ warnings: true }`) and uncaught exceptions of the page from now on, each as
 * "<where> <kind>: <text>" (a hydration mismatch is reported as a console error).
 */
export function recordConsoleProblems(page: Page, options: { warnings?: boolean } = {}): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || (options.warnings && message.type() === 'warning'))
      problems.push(`${message.location().url || page.url()} console.${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`${page.url()} uncaught: ${error.message}`));
  return problems;
}

export function htmlThemeClasses(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    Array.from(document.documentElement.classList).filter((name) => name === 't_light' || name === 't_dark'),
  );
}

export interface Rgba {
  r: number;
  g: number;
  b: number;
  a: number;
}

/**
 * The background colour a user sees at a point: the first non-transparent background from the element under
 * the point up to <html>; when all are transparent, the canvas colour from the used color-scheme.
 */
export async function visibleBackgroundAt(page: Page, x: number, y: number): Promise<Rgba> {
  const color = await page.evaluate(
    ({ px, py }) => {
      let element: Element | null = document.elementFromPoint(px, py);
      while (element) {
        const value = getComputedStyle(element).backgroundColor;
        const parts = value.match(/[\d.]+/g)?.map(Number) ?? [];
        const alpha = parts.length >= 4 ? (parts[3] ?? 1) : 1;
        if (parts.length >= 3 && alpha > 0.5) return value;
        element = element.parentElement;
      }
      const scheme = getComputedStyle(document.documentElement).colorScheme;
      return scheme.includes('dark') && !scheme.includes('light') ? 'rgb(18, 18, 18)' : 'rgb(255, 255, 255)';
    },
    { px: x, py: y },
  );
  const [r = 0, g = 0, b = 0, a = 1] = color.match(/[\d.]+/g)?.map(Number) ?? [];
  return { r, g, b, a };
}

/** WCAG relative luminance, 0 (black) … 1 (white). */
export function luminance({ r, g, b }: Rgba): number {
  const channel = (v: number): number => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}

/**
 * The width fixed-position elements see: the window minus a classic scrollbar or a reserved scrollbar gutter
 * (headless Chromium draws 15 px scrollbars; phones overlay them).
 */
export function visibleViewportWidth(page: Page): Promise<number> {
  return page.evaluate(() => {
    const probe = document.createElement('div');
    probe.style.cssText = 'position:fixed;left:0;right:0;top:0;height:1px;pointer-events:none';
    document.body.append(probe);
    const width = probe.getBoundingClientRect().width;
    probe.remove();
    return width;
  });
}

export function screenshotPath(name: string): string {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return join(SCREENSHOT_DIR, `${name}.png`);
}

/** Opens a success toast the way a user does: the "Check connection" button on the home page. */
export async function openConnectedToast(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Check connection' }).click();
  await page.getByTestId('toast').filter({ hasText: 'Connected' }).waitFor({ state: 'visible', timeout: 15_000 });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Counts React re-renders of the page's elements that match `selector`, from the next document on: a stand-in for
 * React DevTools' hook (`__REACT_DEVTOOLS_GLOBAL_HOOK__`, which React calls after every commit, production builds
 * included) walks the committed tree and counts each matching element whose props are a new object since the last
 * commit — the element was rendered again (an element React skipped keeps its props object). Read the counts with
 * `rendersOf`. A count, not a time: how much work a keystroke does, whatever the machine.
 */
export async function recordRenders(page: Page, selector: string): Promise<void> {
  await page.addInitScript((matching: string) => {
    const props = new WeakMap<Element, unknown>();
    const counts = { rendered: 0, seen: 0 };
    interface Fiber {
      tag: number;
      stateNode: unknown;
      memoizedProps: unknown;
      child: Fiber | null;
      sibling: Fiber | null;
    }
    const walk = (root: Fiber) => {
      const stack: Fiber[] = [root];
      for (let fiber = stack.pop(); fiber; fiber = stack.pop()) {
        // 5: a host component (an HTML element).
        if (fiber.tag === 5 && fiber.stateNode instanceof Element && fiber.stateNode.matches(matching)) {
          const before = props.get(fiber.stateNode);
          if (before === undefined) counts.seen += 1;
          else if (before !== fiber.memoizedProps) counts.rendered += 1;
          props.set(fiber.stateNode, fiber.memoizedProps);
        }
        if (fiber.sibling) stack.push(fiber.sibling);
        if (fiber.child) stack.push(fiber.child);
      }
    };
    Object.assign(window, {
      __REACT_DEVTOOLS_GLOBAL_HOOK__: {
        supportsFiber: true,
        isDisabled: false,
        renderers: new Map(),
        inject: () => 1,
        checkDCE: () => {},
        onScheduleFiberRoot: () => {},
        onCommitFiberRoot: (_id: number, root: { current: Fiber }) => walk(root.current),
        onCommitFiberUnmount: () => {},
        onPostCommitFiberRoot: () => {},
      },
      __renders: counts,
    });
  }, selector);
}

/** What `recordRenders` counted so far: elements `seen` (first rendered) and re-renders of them (`rendered`). */
export function rendersOf(page: Page): Promise<{ rendered: number; seen: number }> {
  return page.evaluate(() => ({ ...(window as unknown as { __renders: { rendered: number; seen: number } }).__renders }));
}
