// Theme: toggle cycle under both OS schemes, stored preference, <html> class, cross-tab sync, live OS
// scheme, and no flash of the wrong theme on first paint (inline head script, JS bundles blocked).
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { gotoHydrated, htmlThemeClasses, luminance, useBrowser, visibleBackgroundAt } from './browser.ts';
import { signedInUser } from './notes-helpers.ts';

type Scheme = 'light' | 'dark';
const opposite = (scheme: Scheme): Scheme => (scheme === 'light' ? 'dark' : 'light');

const fixture = useBrowser();

const toggle = (page: Page) => page.getByTestId('theme-toggle');
const storedTheme = (page: Page) => page.evaluate(() => window.localStorage.getItem('theme'));

async function toggleName(page: Page): Promise<string> {
  // The accessible name: aria-label when present, otherwise the text.
  return toggle(page).evaluate((el) => (el.getAttribute('aria-label') ?? el.textContent ?? '').trim());
}

/** Background luminance of the page body area (below the header), as a user sees it. */
async function pageLuminance(page: Page): Promise<number> {
  const size = page.viewportSize() ?? { width: 1280, height: 800 };
  return luminance(await visibleBackgroundAt(page, Math.round(size.width / 2), size.height - 4));
}

async function expectResolved(page: Page, scheme: Scheme): Promise<void> {
  await expect.poll(() => htmlThemeClasses(page), { timeout: 5000 }).toEqual([`t_${scheme}`]);
  const lum = await pageLuminance(page);
  if (scheme === 'dark') expect(lum, 'page background should be dark').toBeLessThan(0.3);
  else expect(lum, 'page background should be light').toBeGreaterThan(0.6);
}

describe('theme toggle', () => {
  for (const os of ['light', 'dark'] as const) {
    test(`cycles system → ${opposite(os)} → ${os} → system with the OS in ${os} mode`, async () => {
      const page = await fixture.newPage({ colorScheme: os });
      await gotoHydrated(page);

      // Default preference: system, resolved from the OS.
      expect(await storedTheme(page)).toBeNull();
      expect(await toggleName(page)).toBe('Theme: system');
      await page.getByRole('button', { name: 'Theme: system', exact: true }).waitFor();
      await expectResolved(page, os);

      const steps: Array<{ name: string; stored: string; resolved: Scheme }> = [
        { name: `Theme: ${opposite(os)}`, stored: opposite(os), resolved: opposite(os) },
        { name: `Theme: ${os}`, stored: os, resolved: os },
        { name: 'Theme: system', stored: 'system', resolved: os },
      ];
      for (const step of steps) {
        await toggle(page).click();
        await page.getByRole('button', { name: step.name, exact: true }).waitFor({ timeout: 5000 });
        expect(await storedTheme(page)).toBe(step.stored);
        await expectResolved(page, step.resolved);
      }

      // The preference survives a reload.
      await toggle(page).click();
      await gotoHydrated(page);
      expect(await toggleName(page)).toBe(`Theme: ${opposite(os)}`);
      await expectResolved(page, opposite(os));
    });
  }

  test('a change in one tab applies in the other tab', async () => {
    const context = await fixture.newContext({ colorScheme: 'light' });
    const first = await context.newPage();
    const second = await context.newPage();
    await gotoHydrated(first);
    await gotoHydrated(second);
    await expectResolved(second, 'light');

    await toggle(first).click(); // system → dark
    await first.getByRole('button', { name: 'Theme: dark', exact: true }).waitFor();
    await expectResolved(second, 'dark');
    await second.getByRole('button', { name: 'Theme: dark', exact: true }).waitFor({ timeout: 5000 });

    await toggle(second).click(); // dark → light
    await second.getByRole('button', { name: 'Theme: light', exact: true }).waitFor();
    await expectResolved(first, 'light');
    await first.getByRole('button', { name: 'Theme: light', exact: true }).waitFor({ timeout: 5000 });
  });

  test('system follows the OS colour scheme live; an explicit choice does not', async () => {
    const page = await fixture.newPage({ colorScheme: 'light' });
    await gotoHydrated(page);
    await expectResolved(page, 'light');

    await page.emulateMedia({ colorScheme: 'dark' });
    await expectResolved(page, 'dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await expectResolved(page, 'light');

    await toggle(page).click(); // system → dark (opposite of light)
    await page.getByRole('button', { name: 'Theme: dark', exact: true }).waitFor();
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.emulateMedia({ colorScheme: 'light' });
    await expectResolved(page, 'dark');
  });
});

describe('pages with and without Tamagui components (ADR 053)', () => {
  // The frame and most pages are plain HTML; the settings pages and the create modal bring Tamagui's provider, which
  // takes its theme class off <html> when it unmounts. The theme provider keeps exactly one of t_light / t_dark there.
  test('moving between them, and toggling on either, keeps the resolved theme on <html>', async () => {
    const { page } = await signedInUser(fixture, { colorScheme: 'dark' });
    await expectResolved(page, 'dark');
    await page.getByRole('button', { name: /^Account: / }).click();
    await page.getByRole('link', { name: 'Account settings' }).click();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await expectResolved(page, 'dark');
    await toggle(page).click(); // system (dark) → light
    await expectResolved(page, 'light');
    await page.getByRole('link', { name: 'Foyer' }).click();
    await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor();
    await expectResolved(page, 'light');
    await page.getByRole('button', { name: 'New', exact: true }).click();
    await page.getByRole('dialog', { name: 'New note' }).waitFor();
    await toggle(page).evaluate((button: HTMLElement) => button.click()); // under the modal's overlay: a script click
    await expectResolved(page, 'dark');
    await page.keyboard.press('Escape');
    await page.goBack();
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await expectResolved(page, 'dark');
  });
});

describe('hydration', () => {
  for (const { stored, os } of [
    { stored: 'dark', os: 'light' },
    { stored: 'light', os: 'dark' },
    { stored: 'system', os: 'dark' },
  ] as const) {
    test(`no hydration mismatch or runtime error with ${stored} stored and the OS in ${os} mode`, async () => {
      const page = await fixture.newPage({ colorScheme: os });
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || /hydrat/i.test(message.text())) problems.push(`console.${message.type()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
      await page.addInitScript((value) => window.localStorage.setItem('theme', value), stored);
      await gotoHydrated(page);
      await page.getByTestId('server-time').waitFor({ timeout: 15_000 });
      expect(await toggleName(page)).toBe(`Theme: ${stored}`);
      expect(problems).toEqual([]);
    });
  }
});

describe('first paint without JavaScript bundles', () => {
  const cases: Array<{ stored: string | null; os: Scheme; expected: Scheme }> = [
    { stored: 'dark', os: 'light', expected: 'dark' },
    { stored: 'light', os: 'dark', expected: 'light' },
    { stored: null, os: 'dark', expected: 'dark' },
    { stored: 'system', os: 'light', expected: 'light' },
  ];
  for (const { stored, os, expected } of cases) {
    test(`stored ${stored ?? '(nothing)'} with the OS in ${os} mode paints ${expected}`, async () => {
      const page = await fixture.newPage({ colorScheme: os });
      await gotoHydrated(page);
      await page.evaluate((value) => {
        if (value === null) window.localStorage.removeItem('theme');
        else window.localStorage.setItem('theme', value);
      }, stored);

      // Block every JS bundle: only the server HTML, its CSS and the inline head script run.
      let blocked = 0;
      await page.route('**/_next/static/**/*.js', async (route) => {
        blocked += 1;
        await route.abort();
      });
      await page.reload({ waitUntil: 'load' });
      expect(blocked, 'the page should have requested JS bundles that were blocked').toBeGreaterThan(0);
      // Not hydrated: the toggle still has its pre-mount name.
      expect(await toggleName(page)).toBe('Theme');

      expect(await htmlThemeClasses(page)).toEqual([`t_${expected}`]);
      const lum = await pageLuminance(page);
      if (expected === 'dark') expect(lum, 'first paint background should be dark').toBeLessThan(0.3);
      else expect(lum, 'first paint background should be light').toBeGreaterThan(0.6);
    });
  }
});
