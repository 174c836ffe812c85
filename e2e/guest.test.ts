// Guest sessions (anonymous sign-ins, ADR 033), end to end in Chromium against the production build and localbase:
// "Try it without an account" → notes at once → the guest banner → add an email and password → confirm from the
// mailbox → the same user (id and notes) as a permanent account; the sign-out warning; the banner hidden for a
// week; a server with guest sessions switched off.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { describeViolations, expectCountdown, seriousViolations, signInViaUI, supabaseURL, uniqueEmail, waitForMail, type MailMessage } from './auth-helpers.ts';
import { useBackendWith } from './backend-control.ts';
import { baseURL, gotoHydrated, screenshotPath, useBrowser } from './browser.ts';
import { listedTitles, listSettled } from './notes-helpers.ts';

const fixture = useBrowser();
const GUEST_PASSWORD = 'guest-keeps-notes-2026';

const banner = (page: Page) => page.getByRole('complementary', { name: 'Guest session' });
const accountButton = (page: Page) => page.getByRole('button', { name: /^Account: / });
const signOutDialog = (page: Page) => page.getByRole('dialog', { name: 'Sign out of the guest session?' });

/** The signed-in user as the app's API sees it (tRPC `auth.me`, with this page's cookies). */
async function me(page: Page): Promise<{ id: string; email: string | null }> {
  const response = await page.request.get(`${baseURL}/api/trpc/auth.me`);
  expect(response.status()).toBe(200);
  const body = (await response.json()) as { result: { data: { json: { id: string; email: string | null } } } };
  return body.result.data.json;
}

/** From the welcome page: "Try it without an account", then the notes list of the new guest. */
async function tryAsGuest(page: Page): Promise<void> {
  await gotoHydrated(page, '/');
  await page.getByRole('button', { name: 'Try it without an account' }).click();
  await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor({ timeout: 20_000 });
  await page.getByRole('button', { name: 'Account: Guest' }).waitFor();
}

async function createNote(page: Page, title: string): Promise<void> {
  await page.getByRole('banner').getByRole('button', { name: 'New', exact: true }).click();
  const dialog = page.getByRole('dialog', { name: 'New note' });
  await dialog.getByLabel('Title', { exact: true }).fill(title);
  await dialog.getByRole('button', { name: 'Create note' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await page.getByTestId('toast').filter({ hasText: 'Note created' }).first().waitFor();
}

async function expectNoSeriousViolations(page: Page): Promise<void> {
  const violations = await seriousViolations(page);
  expect(violations, describeViolations(violations)).toEqual([]);
}

describe('a guest keeps their notes by adding an email and password (confirmations on)', () => {
  useBackendWith({ env: { LOCALBASE_ENABLE_CONFIRMATIONS: '1' } });

  test('try → notes → banner → add email and password → confirm from the mailbox → same user, same notes, banner gone', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    await gotoHydrated(page, '/');

    // While the guest session is created the button waits (aria-disabled) and says so (the call is held until checked).
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/auth/v1/signup', async (route) => {
      await held;
      await route.continue();
    });
    const tryButton = page.getByRole('button', { name: 'Try it without an account' });
    await tryButton.click();
    const pending = page.getByRole('button', { name: 'Starting a guest session…' });
    await pending.waitFor();
    expect(await pending.getAttribute('aria-disabled')).toBe('true');
    release();

    await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor({ timeout: 20_000 });
    await page.getByTestId('toast').filter({ hasText: 'You are in as a guest' }).waitFor();
    await page.getByRole('button', { name: 'Account: Guest' }).waitFor();
    await banner(page).getByText('Your notes live only in this browser until you add an email and password.').waitFor();
    const guest = await me(page);
    expect(guest.email ?? '').toBe(''); // a guest has no address (GoTrue sends "")

    await createNote(page, 'Guest note one');
    await createNote(page, 'Guest note two');
    await listSettled(page);
    await expect.poll(() => listedTitles(page)).toEqual(['Guest note two', 'Guest note one']);
    await expectNoSeriousViolations(page);

    // The menu calls the user "Guest" and offers the way to keep the notes.
    await page.getByRole('button', { name: 'Account: Guest' }).click();
    expect(await page.getByTestId('user-menu-name').innerText()).toBe('Guest');
    await page.getByRole('banner').getByRole('link', { name: 'Add email and password' }).waitFor();
    await page.keyboard.press('Escape');

    // The banner's action opens the form; the form checks its fields before any call.
    await banner(page).getByRole('link', { name: 'Add email and password' }).click();
    await page.getByRole('heading', { name: 'Keep your notes', level: 1 }).waitFor({ timeout: 20_000 });
    const form = page.getByRole('form', { name: 'Add email and password' });
    await form.getByRole('button', { name: 'Add email and password' }).click();
    await form.getByText('Enter your email address.').waitFor();
    await form.getByText('Use at least 6 characters.').waitFor();
    await expectNoSeriousViolations(page);

    const email = uniqueEmail('guest');
    await form.getByLabel('Email').fill(email);
    await form.getByLabel('Password').fill(GUEST_PASSWORD);
    await form.getByRole('button', { name: 'Add email and password' }).click();
    await form.getByRole('status').filter({ hasText: `Check your mailbox: we sent a link to ${email}` }).waitFor({ timeout: 20_000 });
    // Until the link is opened the user is still a guest.
    await banner(page).waitFor();
    expect((await me(page)).email ?? '').toBe('');

    const mail = await waitForMail(email, 'email_change');
    await page.goto(mail.links[0] as string);
    await page.waitForURL((url) => url.pathname === '/settings/account' && url.searchParams.get('saved') === '1', { timeout: 20_000 });
    await page.getByRole('status').filter({ hasText: 'Your account is saved' }).waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: `Account: ${email}` }).waitFor();
    expect(await banner(page).count()).toBe(0);
    const permanent = await me(page);
    expect(permanent).toMatchObject({ id: guest.id, email });

    await page.getByRole('link', { name: 'Go to your notes' }).click();
    await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor({ timeout: 20_000 });
    await expect.poll(() => listedTitles(page)).toEqual(['Guest note two', 'Guest note one']);
    expect(await banner(page).count()).toBe(0);

    // A permanent account: signing out needs no warning, and the email and password sign in to the same notes.
    await page.getByRole('button', { name: `Account: ${email}` }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
    await signInViaUI(page, email, GUEST_PASSWORD);
    await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor({ timeout: 20_000 });
    await expect.poll(() => listedTitles(page)).toEqual(['Guest note two', 'Guest note one']);
    expect((await me(page)).id).toBe(guest.id);
  });
});

/** The email-change mails to `to` (a guest's link to keep the account), newest first. */
async function keepMails(to: string): Promise<MailMessage[]> {
  const response = await fetch(`${supabaseURL}/mailbox/api/messages?to=${encodeURIComponent(to)}`);
  expect(response.status).toBe(200);
  const messages = (await response.json()) as MailMessage[];
  return messages.filter((m) => m.type === 'email_change').sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/** A new guest on the account page who added `email` and GUEST_PASSWORD and was told to check the mailbox. */
async function guestWaitingForLink(page: Page, email: string): Promise<void> {
  await tryAsGuest(page);
  await gotoHydrated(page, '/settings/account');
  const form = page.getByRole('form', { name: 'Add email and password' });
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Password').fill(GUEST_PASSWORD);
  await form.getByRole('button', { name: 'Add email and password' }).click();
  await form.getByRole('status').filter({ hasText: `Check your mailbox: we sent a link to ${email}` }).waitFor({ timeout: 20_000 });
}

describe('a guest waiting for the link (confirmations on)', () => {
  useBackendWith({ env: { LOCALBASE_ENABLE_CONFIRMATIONS: '1' } });

  test('"Send the link again" sends it without asking for the password again (already saved); the newest link keeps the account', async () => {
    const page = await fixture.newPage();
    const email = uniqueEmail('guest-again');
    await guestWaitingForLink(page, email);
    const form = page.getByRole('form', { name: 'Add email and password' });
    // The password was saved with the first request: asking for it again could only be refused as "the same".
    expect(await form.getByLabel('Password').count()).toBe(0);
    await form.getByRole('button', { name: 'Send the link again' }).click();
    await expect.poll(async () => (await keepMails(email)).length, { timeout: 15_000 }).toBe(2);
    await form.getByRole('status').filter({ hasText: `Check your mailbox: we sent a link to ${email}` }).waitFor();
    expect(await form.getByRole('alert').count()).toBe(0);
    const [newest] = await keepMails(email);
    await page.goto(newest!.links[0] as string);
    await page.getByRole('status').filter({ hasText: 'Your account is saved' }).waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: `Account: ${email}` }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
    await signInViaUI(page, email, GUEST_PASSWORD);
    await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor({ timeout: 20_000 });
  });
});

describe("a guest's link asked for again within the mail interval (LOCALBASE_EMAIL_MAX_FREQUENCY)", () => {
  useBackendWith({ env: { LOCALBASE_ENABLE_CONFIRMATIONS: '1', LOCALBASE_EMAIL_MAX_FREQUENCY: '4' } });

  test('"Send the link again" at once says how many seconds to wait, counts them down with the button waiting, then sends', async () => {
    const page = await fixture.newPage();
    const email = uniqueEmail('guest-wait');
    await guestWaitingForLink(page, email);
    const form = page.getByRole('form', { name: 'Add email and password' });
    await form.getByRole('button', { name: 'Send the link again' }).click();
    await expectCountdown(page, /^A link was just sent\. Wait (\d) seconds? before asking for another\.$/, 'Send the link again');
    await form.getByRole('button', { name: 'Send the link again' }).click();
    await expect.poll(async () => (await keepMails(email)).length, { timeout: 15_000 }).toBe(2);
  });
});

describe('guest sessions', () => {
  test('"Try it without an account" pressed by keyboard keeps focus while it starts (aria-disabled, a second Enter sends nothing) and after a failure (Enter tries again)', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page, '/');
    let calls = 0;
    let release: () => void = () => {};
    let held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/auth/v1/signup', async (route) => {
      calls += 1;
      await held;
      await route.abort('internetdisconnected');
    });
    const focusedText = () => page.evaluate(() => document.activeElement?.textContent ?? '');
    await page.getByRole('button', { name: 'Try it without an account' }).focus();
    await page.keyboard.press('Enter');
    const pending = page.getByRole('button', { name: 'Starting a guest session…' });
    await pending.waitFor();
    expect(await pending.getAttribute('aria-disabled')).toBe('true');
    expect(await focusedText()).toBe('Starting a guest session…');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Space');
    release();
    await page.getByRole('alert').filter({ hasText: 'Could not reach' }).waitFor({ timeout: 20_000 });
    expect(calls).toBe(1);
    expect(await focusedText()).toBe('Try it without an account');
    // Enter again tries again.
    held = Promise.resolve();
    await page.keyboard.press('Enter');
    await expect.poll(() => calls).toBe(2);
  });

  test('signing out as a guest asks first: Cancel and Escape keep the session, focus returns; "Sign out anyway" ends it', async () => {
    const page = await fixture.newPage();
    await tryAsGuest(page);
    await createNote(page, 'Soon gone');
    await page.screenshot({ path: screenshotPath('guest-notes') });

    await accountButton(page).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await signOutDialog(page).waitFor();
    await signOutDialog(page).getByText('Your notes will be lost').waitFor();
    await page.screenshot({ path: screenshotPath('guest-sign-out') });
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await expectNoSeriousViolations(page);

    await signOutDialog(page).getByRole('button', { name: 'Cancel' }).click();
    await signOutDialog(page).waitFor({ state: 'hidden' });
    // The dialog hides at once; focus moves back on its `close` event, which the browser dispatches a task later.
    const focusedLabel = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label'));
    await expect.poll(focusedLabel, { timeout: 5_000 }).toBe('Account: Guest');

    // By keyboard: the menu opens with Enter, Escape closes the dialog, focus is back on the account button.
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab'); // Add email and password
    await page.keyboard.press('Tab'); // Sign out
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Sign out');
    await page.keyboard.press('Enter');
    await signOutDialog(page).waitFor();
    await page.keyboard.press('Escape');
    await signOutDialog(page).waitFor({ state: 'hidden' });
    await expect.poll(focusedLabel, { timeout: 5_000 }).toBe('Account: Guest');
    await page.reload();
    await page.getByRole('button', { name: 'Account: Guest' }).waitFor({ timeout: 20_000 });
    await expect.poll(() => listedTitles(page)).toEqual(['Soon gone']);

    await accountButton(page).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await signOutDialog(page).getByRole('button', { name: 'Sign out anyway' }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
    await gotoHydrated(page, '/');
    await page.getByRole('heading', { name: 'Welcome to Foyer', level: 1 }).waitFor();
  });

  test('with confirmations off (the default here) the email and password apply at once: saved, same notes, no banner', async () => {
    const page = await fixture.newPage();
    await tryAsGuest(page);
    await createNote(page, 'Kept at once');
    const guest = await me(page);
    await page.getByRole('button', { name: 'Account: Guest' }).click();
    await page.getByRole('banner').getByRole('link', { name: 'Add email and password' }).click(); // the menu's
    const form = page.getByRole('form', { name: 'Add email and password' });
    const email = uniqueEmail('guest-now');
    await form.getByLabel('Email').fill(email);
    await form.getByLabel('Password').fill(GUEST_PASSWORD);
    await form.getByRole('button', { name: 'Add email and password' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Your account is saved' }).waitFor({ timeout: 20_000 });
    await page.getByRole('main').getByRole('status').filter({ hasText: 'Your account is saved' }).waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: `Account: ${email}` }).waitFor();
    expect(await banner(page).count()).toBe(0);
    expect(await me(page)).toMatchObject({ id: guest.id, email });
    await gotoHydrated(page, '/');
    await expect.poll(() => listedTitles(page)).toEqual(['Kept at once']);
    expect(await banner(page).count()).toBe(0); // also rendered so by the server after the refreshed session
  });

  test('"Hide for a week" hides the banner on later pages too (rendered without it), but not for the next guest', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    await tryAsGuest(page);
    await banner(page).waitFor();
    // On a phone the banner wraps; nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 800 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.screenshot({ path: screenshotPath('guest-banner-390') });
    await banner(page).getByRole('button', { name: 'Hide for a week' }).click();
    await banner(page).waitFor({ state: 'detached' });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');

    const cookie = (await context.cookies()).find((c) => c.name === 'foyer-guest-banner');
    expect(cookie?.value).toBe((await me(page)).id);
    expect((cookie?.expires ?? 0) - Date.now() / 1000).toBeGreaterThan(6.9 * 24 * 3600);
    const html = await (await page.request.get(`${baseURL}/`)).text();
    expect(html).not.toContain('Guest session');
    await gotoHydrated(page, '/settings/account');
    expect(await banner(page).count()).toBe(0);

    // A new guest in the same browser (the first one signed out) sees the banner again.
    await accountButton(page).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await signOutDialog(page).getByRole('button', { name: 'Sign out anyway' }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
    await tryAsGuest(page);
    await banner(page).waitFor();
  });
});

describe('a server with guest sessions switched off', () => {
  useBackendWith({ dropArgs: ['--enable-anonymous-sign-ins'] });

  test('"Try it without an account" explains the refusal beside the button and can be pressed again', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page, '/');
    const tryButton = page.getByRole('button', { name: 'Try it without an account' });
    await tryButton.click();
    const alert = page.getByRole('alert').filter({ hasText: 'without an account is switched off on this server' });
    await alert.waitFor({ timeout: 20_000 });
    expect(await tryButton.isEnabled()).toBe(true);
    expect(new URL(page.url()).pathname).toBe('/');
    expect(await page.getByRole('link', { name: 'Sign in' }).count()).toBeGreaterThan(0); // still signed out
    await expectNoSeriousViolations(page);
  });
});
