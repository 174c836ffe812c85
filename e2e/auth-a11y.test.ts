// Every auth screen (and its error states) in light and dark: axe-core reports no serious or critical
// violation, nothing scrolls sideways at 390 px, and a screenshot of each at 390 and 1280 px lands in
// test-results/screenshots/ for a human to look at.
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { describeViolations, seriousViolations, signUpViaUI, uniqueEmail } from './auth-helpers.ts';
import { gotoHydrated, htmlThemeClasses, screenshotPath, sleep, useBrowser } from './browser.ts';

const fixture = useBrowser();

interface Screen {
  name: string;
  signedIn?: boolean;
  open: (page: Page) => Promise<void>;
}

const screens: Screen[] = [
  { name: 'sign-in', open: (page) => gotoHydrated(page, '/sign-in') },
  {
    name: 'sign-in-errors',
    open: async (page) => {
      await gotoHydrated(page, '/sign-in');
      await page.getByLabel('Email').fill('not-an-email');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByText('Enter a valid email address').waitFor();
      await page.getByText('Enter your password.').waitFor();
    },
  },
  { name: 'sign-up', open: (page) => gotoHydrated(page, '/sign-up') },
  {
    name: 'sign-up-errors',
    open: async (page) => {
      await gotoHydrated(page, '/sign-up');
      await page.getByLabel('Password').fill('abc');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.getByText('Use at least 6 characters.').waitFor();
    },
  },
  { name: 'forgot-password', open: (page) => gotoHydrated(page, '/forgot-password') },
  { name: 'reset-password-expired', open: (page) => gotoHydrated(page, '/reset-password') },
  {
    name: 'confirm-error',
    open: async (page) => {
      await gotoHydrated(page, '/auth/confirm?token_hash=nope&type=magiclink');
      await page.getByRole('heading', { name: 'That link did not work' }).waitFor();
    },
  },
  {
    name: 'confirm-first-of-two',
    open: async (page) => {
      await gotoHydrated(page, '/auth/confirm#message=Confirmation+link+accepted.+Please+proceed+to+confirm+link+sent+to+the+other+email');
      await page.getByRole('heading', { name: 'One more step' }).waitFor();
    },
  },
  {
    name: 'account',
    signedIn: true,
    open: async (page) => {
      await gotoHydrated(page, '/settings/account');
      await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    },
  },
  {
    name: 'user-menu-open',
    signedIn: true,
    open: async (page) => {
      await gotoHydrated(page, '/');
      await page.getByRole('button', { name: /^Account: / }).click();
      await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    },
  },
];

async function signedInContext(scheme: 'light' | 'dark', width: number): Promise<BrowserContext> {
  const context = await fixture.newContext({ colorScheme: scheme, viewport: { width, height: 900 } });
  const page = await context.newPage();
  await signUpViaUI(page, uniqueEmail(`a11y-${scheme}`), undefined, 'Lin Ahn');
  await page.close();
  return context;
}

describe('auth screens: axe, layout and screenshots', () => {
  for (const scheme of ['light', 'dark'] as const) {
    for (const screen of screens) {
      test(`${screen.name} (${scheme})`, async () => {
        for (const width of [1280, 390]) {
          const context = screen.signedIn
            ? await signedInContext(scheme, width)
            : await fixture.newContext({ colorScheme: scheme, viewport: { width, height: 900 } });
          const page = await context.newPage();
          await screen.open(page);
          await sleep(300);
          expect(await htmlThemeClasses(page)).toEqual([`t_${scheme}`]);
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
          expect(overflow, `horizontal scroll at ${width} px`).toBeLessThanOrEqual(0);
          await page.screenshot({ path: screenshotPath(`auth-${screen.name}-${scheme}-${width}`), fullPage: true });
          const violations = await seriousViolations(page);
          expect(violations.map((v) => v.id), `${width} px: ${describeViolations(violations)}`).toEqual([]);
          await context.close();
        }
      });
    }
  }
});
