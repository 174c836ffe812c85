// Screenshots for human review (test-results/screenshots/) and the layout checks a user would notice:
// no horizontal scrolling and the header controls on screen from 340 px to 1536 px.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { gotoHydrated, openConnectedToast, screenshotPath, sleep, useBrowser, visibleViewportWidth } from './browser.ts';
import { signInDemo } from './notes-helpers.ts';

const fixture = useBrowser();

async function expectFits(page: Page, width: number, signedIn: boolean): Promise<void> {
  const visible = await visibleViewportWidth(page);
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(scrollWidth, `no horizontal scroll at ${width} px`).toBeLessThanOrEqual(visible);
  for (const name of signedIn ? [/^Theme: /, /^New$/, /^Account: /] : [/^Theme: /]) {
    const box = await page.getByRole('banner').getByRole('button', { name }).boundingBox();
    expect(box, `header button ${name} is visible at ${width} px`).not.toBeNull();
    if (box) expect(box.x + box.width).toBeLessThanOrEqual(visible);
  }
}

describe('screenshots and responsive layout', () => {
  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [340, 390, 1280, 1536]) {
      test(`home, ${scheme}, ${width} px`, async () => {
        const page = await fixture.newPage({ colorScheme: scheme, viewport: { width, height: 844 } });
        await gotoHydrated(page);
        await page.getByTestId('server-time').waitFor({ timeout: 15_000 });
        await expectFits(page, width, false);
        await page.getByRole('heading', { level: 1, name: 'Welcome to Foyer' }).waitFor();
        if (width === 390 || width === 1280) {
          await page.screenshot({ path: screenshotPath(`home-${scheme}-${width}`), fullPage: true });
          await openConnectedToast(page);
          await sleep(300);
          await page.screenshot({ path: screenshotPath(`toast-${scheme}-${width}`) });
        }
      });

      test(`notes (demo user), ${scheme}, ${width} px`, async () => {
        const page = await fixture.newPage({ colorScheme: scheme, viewport: { width, height: 844 } });
        await signInDemo(page);
        await expectFits(page, width, true);
        expect(await page.getByTestId('note-row').count()).toBe(20);
        if (width === 390 || width === 1280) {
          await page.screenshot({ path: screenshotPath(`notes-${scheme}-${width}`), fullPage: true });
          await page.getByRole('button', { name: 'New', exact: true }).click();
          await page.getByRole('dialog', { name: 'New note' }).waitFor();
          await page.keyboard.type('Call the plumber');
          await page.getByLabel('Note', { exact: true }).fill('Kitchen tap drips. Ask about Thursday morning.');
          await sleep(400);
          await page.screenshot({ path: screenshotPath(`modal-${scheme}-${width}`) });
          await page.keyboard.press('Escape');
          await page.getByRole('link', { name: /Welcome to Foyer/ }).click();
          await page.getByRole('heading', { name: 'Welcome to Foyer', level: 1 }).waitFor();
          await expectFits(page, width, true);
          await page.screenshot({ path: screenshotPath(`note-${scheme}-${width}`), fullPage: true });
        }
      });
    }
    test(`404 page, ${scheme}`, async () => {
      const page = await fixture.newPage({ colorScheme: scheme, viewport: { width: 390, height: 844 } });
      const response = await page.goto('/this-page-does-not-exist');
      expect(response?.status()).toBe(404);
      expect(await page.getByRole('link').count(), 'the 404 page offers a way back').toBeGreaterThan(0);
      await sleep(300);
      await page.screenshot({ path: screenshotPath(`404-${scheme}-390`), fullPage: true });
    });
  }
});
