// The sign-in form with the keyboard only: Tab order, Enter submits, focus lands on the first invalid field,
// and a correct sign-in with Enter goes through. The user menu opens, is walked and closes with the keyboard.
import { describe, expect, test } from 'vitest';
import { createAccount, signInViaUI, uniqueEmail } from './auth-helpers.ts';
import { gotoHydrated, useBrowser } from './browser.ts';

const fixture = useBrowser();

const focusedLabel = (page: import('playwright-core').Page) =>
  page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el) return '';
    const labelled = el.id ? document.querySelector(`label[for="${CSS.escape(el.id)}"]`)?.textContent : null;
    return (labelled ?? el.getAttribute('aria-label') ?? el.textContent ?? '').trim();
  });

describe('keyboard', () => {
  test('sign in with the keyboard alone; an invalid submit focuses the field that needs fixing', async () => {
    const email = uniqueEmail('keys');
    await createAccount(email);
    const page = await fixture.newPage();
    await gotoHydrated(page, '/sign-in');
    await page.getByLabel('Email').focus();
    await page.keyboard.type(email);
    await page.keyboard.press('Enter'); // no password yet
    await page.getByText('Enter your password.').waitFor();
    await expect.poll(() => focusedLabel(page)).toBe('Password');

    await page.keyboard.type('wrong-password');
    await page.keyboard.press('Enter');
    await page.getByText('That email and password do not match').waitFor({ timeout: 15_000 });
    await expect.poll(() => focusedLabel(page)).toBe('Password');
    await page.keyboard.press('Shift+Tab');
    expect(await focusedLabel(page)).toBe('Email');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('correct-horse-battery-staple');
    await page.keyboard.press('Tab');
    expect(await focusedLabel(page)).toBe('Forgot password?');
    await page.keyboard.press('Tab');
    expect(await focusedLabel(page)).toBe('Sign in');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });

    // the user menu: open with Enter, Tab to its items, Escape closes and returns focus to the button
    const menuButton = page.getByRole('button', { name: /^Account: / });
    await menuButton.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Account settings' }).waitFor();
    expect(await menuButton.getAttribute('aria-expanded')).toBe('true');
    await page.keyboard.press('Tab');
    expect(await focusedLabel(page)).toBe('Account settings');
    await page.keyboard.press('Tab');
    expect(await focusedLabel(page)).toBe('Security');
    await page.keyboard.press('Tab');
    expect(await focusedLabel(page)).toBe('Sign out');
    await page.keyboard.press('Escape');
    await page.getByRole('link', { name: 'Account settings' }).waitFor({ state: 'detached' });
    expect(await focusedLabel(page)).toMatch(/^Account: /);
  });

  test('after a refused sign-in the user moves on with Shift+Tab; focus is not pulled back to the field a frame later', async () => {
    const email = uniqueEmail('keys-stay');
    await createAccount(email);
    const page = await fixture.newPage();
    await gotoHydrated(page, '/sign-in');
    // Animation frames wait for the test's go-ahead, so the key press surely comes before the next frame (the
    // order a busy machine produced by chance). Rendering and network are not held up.
    await page.clock.install();
    await page.clock.pauseAt(Date.now() + 1_000);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByLabel('Password').focus();
    await page.keyboard.press('Enter');
    await page.getByText('That email and password do not match').waitFor({ timeout: 15_000 });
    expect(await focusedLabel(page)).toBe('Password');
    await page.keyboard.press('Shift+Tab');
    expect(await focusedLabel(page)).toBe('Email');
    await page.clock.runFor(1_000); // the frames (and the form's focus step) run now
    expect(await focusedLabel(page)).toBe('Email');
    await page.keyboard.press('Tab');
    expect(await focusedLabel(page)).toBe('Password');
    await page.keyboard.press('Tab');
    expect(await focusedLabel(page)).toBe('Forgot password?');
  });
});

describe('the email typed on one auth page', () => {
  test('goes along to "Forgot password?", "Create an account" and back, and never into a URL (nor the password anywhere)', async () => {
    const page = await fixture.newPage();
    const urls: string[] = [];
    page.on('request', (request) => urls.push(request.url()));
    await gotoHydrated(page, '/sign-in');
    const email = uniqueEmail('carried');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not-carried-secret');
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(email);

    const corrected = `fixed-${email}`;
    await page.getByLabel('Email').fill(corrected);
    await page.getByRole('link', { name: 'Back to sign in' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(corrected);
    expect(await page.getByLabel('Password').inputValue()).toBe('');

    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(corrected);
    expect(await page.getByLabel('Password').inputValue()).toBe('');
    await page.getByText('Already have an account?').getByRole('link', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe(corrected);

    for (const url of [...urls, page.url()]) {
      expect(decodeURIComponent(url)).not.toContain(email);
      expect(url).not.toContain('not-carried-secret');
    }
  });
});

describe('the email typed on one auth page, once a session started (a shared computer)', () => {
  const emailFields = async (page: import('playwright-core').Page): Promise<string[]> => {
    const values = [await page.getByLabel('Email').inputValue()];
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    values.push(await page.getByLabel('Email').inputValue());
    await page.getByRole('link', { name: 'Back to sign in' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    values.push(await page.getByLabel('Email').inputValue());
    return values;
  };
  const signOut = async (page: import('playwright-core').Page): Promise<void> => {
    await page.getByRole('button', { name: /^Account: / }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  };

  test('after signing in and out (no reload), no auth page offers the previous user\'s email', async () => {
    const email = uniqueEmail('shared');
    await createAccount(email);
    const page = await fixture.newPage();
    await gotoHydrated(page, '/sign-in');
    await signInViaUI(page, email);
    await page.getByRole('button', { name: /^Account: / }).waitFor({ timeout: 20_000 });
    await signOut(page);
    expect(await emailFields(page)).toEqual(['', '', '']);
  });

  test('…nor when the session was started in another tab, which moved this one off its form', async () => {
    const email = uniqueEmail('shared-tab');
    await createAccount(email);
    const context = await fixture.newContext();
    const typedHere = await context.newPage();
    await gotoHydrated(typedHere, '/sign-in');
    await typedHere.getByLabel('Email').fill(email);
    const other = await context.newPage();
    await gotoHydrated(other, '/sign-in');
    await signInViaUI(other, email);
    await other.getByRole('button', { name: /^Account: / }).waitFor({ timeout: 20_000 });
    await typedHere.bringToFront();
    await typedHere.getByRole('button', { name: /^Account: / }).waitFor({ timeout: 20_000 });
    await signOut(typedHere);
    expect(await emailFields(typedHere)).toEqual(['', '', '']);
  });
});
