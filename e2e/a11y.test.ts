// Accessibility: axe-core injected into every page and state (home, 404, notes list/cards/empty, note page with its
// delete dialog, create modal with an error, toast open), in light
// and dark; no violation of impact serious or critical.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { describeViolations, seriousViolations } from './auth-helpers.ts';
import { gotoHydrated, htmlThemeClasses, MOUNTED_TOGGLE_NAME, openConnectedToast, sleep, useBrowser } from './browser.ts';
import { signInDemo } from './notes-helpers.ts';

const fixture = useBrowser();
const states: Array<{ name: string; open: (page: Page) => Promise<void> }> = [
  { name: 'home', open: (page) => gotoHydrated(page, '/') },
  {
    name: '404 page',
    open: async (page) => {
      const response = await page.goto('/this-page-does-not-exist');
      expect(response?.status()).toBe(404);
      await page.getByRole('button', { name: MOUNTED_TOGGLE_NAME }).waitFor({ timeout: 30_000 });
    },
  },
  {
    name: 'notes list',
    open: (page) => signInDemo(page),
  },
  {
    name: 'notes list, 390 px cards',
    open: async (page) => {
      await page.setViewportSize({ width: 390, height: 844 });
      await signInDemo(page);
    },
  },
  {
    name: 'notes search with no match (empty state)',
    open: async (page) => {
      await signInDemo(page);
      await page.getByRole('searchbox', { name: 'Search notes by title' }).fill('zzz no match');
      await page.getByRole('heading', { name: /No notes match/ }).waitFor();
    },
  },
  {
    name: 'note page with its delete confirmation open',
    open: async (page) => {
      await signInDemo(page);
      await page.getByRole('link', { name: /Reading list/ }).click();
      await page.getByRole('heading', { name: 'Reading list', level: 1 }).waitFor();
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('dialog', { name: 'Delete this note?' }).waitFor();
      await sleep(200);
    },
  },
  {
    name: 'create modal open with a validation error',
    open: async (page) => {
      await signInDemo(page);
      await page.getByRole('button', { name: 'New', exact: true }).click();
      await page.getByRole('dialog', { name: 'New note' }).waitFor();
      await page.getByRole('button', { name: 'Create note' }).click();
      await page.getByText('Give the note a title.').waitFor();
      await sleep(400);
    },
  },
  {
    name: 'home with a toast open',
    open: async (page) => {
      await gotoHydrated(page, '/');
      await openConnectedToast(page);
      await sleep(400);
    },
  },
];

describe('axe-core: no serious or critical violations', () => {
  test('the check itself reports a real violation (an unnamed button)', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page, '/');
    await page.evaluate(() => document.querySelector('main')?.append(document.createElement('button')));
    const violations = await seriousViolations(page);
    expect(violations.map((v) => v.id)).toContain('button-name');
  });

  for (const scheme of ['light', 'dark'] as const) {
    for (const state of states) {
      test(`${state.name} (${scheme})`, async () => {
        const page = await fixture.newPage({ colorScheme: scheme });
        await state.open(page);
        expect(await htmlThemeClasses(page)).toEqual([`t_${scheme}`]);
        const violations = await seriousViolations(page);
        expect(violations.map((v) => v.id), describeViolations(violations)).toEqual([]);
      });
    }
  }
});
