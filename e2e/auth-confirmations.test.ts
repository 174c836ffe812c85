// Accounts that wait for their confirmation link (localbase with confirmations on): sign-up's "Almost there" and
// sign-in's "confirm your email address first" each offer "Send the link again", which mails a new link that
// replaces the old one and finishes the sign-up.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { ANON_KEY, expectCountdown, PASSWORD, signInViaUI, supabaseURL, uniqueEmail, type MailMessage } from './auth-helpers.ts';
import { useBackendWith } from './backend-control.ts';
import { gotoHydrated, screenshotPath, useBrowser } from './browser.ts';

const fixture = useBrowser();

/** The sign-up confirmation mails to `to`, newest first (localbase's mailbox). */
async function signupMails(to: string): Promise<MailMessage[]> {
  const response = await fetch(`${supabaseURL}/mailbox/api/messages?to=${encodeURIComponent(to)}`);
  expect(response.status).toBe(200);
  const messages = (await response.json()) as MailMessage[];
  return messages.filter((m) => m.type === 'signup').sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

async function expectSignupMails(to: string, count: number): Promise<MailMessage[]> {
  await expect.poll(async () => (await signupMails(to)).length, { timeout: 15_000 }).toBe(count);
  return signupMails(to);
}

/** Clicks "Send the link again" and waits for its answer; the button is disabled while the request is out. */
async function sendAgain(page: Page, email: string): Promise<void> {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.route('**/auth/v1/resend*', async (route) => {
    await held;
    await route.continue();
  });
  await page.getByRole('button', { name: 'Send the link again' }).click();
  const pending = page.getByRole('button', { name: 'Sending link…' });
  await pending.waitFor();
  expect(await pending.isDisabled()).toBe(true);
  expect(await pending.evaluate((el) => el === document.activeElement), 'focus stays on the pending button').toBe(true);
  release();
  await page
    .getByRole('status')
    .filter({ hasText: `A new confirmation link is on its way to ${email}. Use the newest one: it replaces the others.` })
    .waitFor();
  await page.unroute('**/auth/v1/resend*');
}

/** Opens a confirmation link and expects to land signed in as `email`'s account. */
async function confirmWith(page: Page, mail: MailMessage): Promise<void> {
  await page.goto(mail.links[0] as string);
  await page.getByRole('button', { name: /^Account: / }).waitFor({ timeout: 20_000 });
}

describe('an account waiting for its confirmation link (confirmations on)', () => {
  useBackendWith({ env: { LOCALBASE_ENABLE_CONFIRMATIONS: '1' } });

  test('sign-up\'s "Almost there" sends the link again; the newest link finishes the sign-up, the first no longer does', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    const email = uniqueEmail('resend-signup');
    await gotoHydrated(page, '/sign-up');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('status').filter({ hasText: `Almost there: we sent a confirmation link to ${email}.` }).waitFor();
    const [first] = await expectSignupMails(email, 1);

    await sendAgain(page, email);
    await page.screenshot({ path: screenshotPath('sign-up-resend-confirmation'), fullPage: true });
    const [newest] = await expectSignupMails(email, 2);
    expect(newest?.links[0]).not.toBe(first?.links[0]);

    // The first link was replaced: it no longer confirms (and signs nobody in).
    const old = await context.newPage();
    await old.goto(first?.links[0] as string);
    await old.getByText('This link or code has expired or was already used. Request a new one.').waitFor({ timeout: 20_000 });
    await old.close();

    await confirmWith(page, newest as MailMessage);
    await context.close();
  });

  test('sign-in before confirming offers "Send the link again" beside "confirm your email address first"', async () => {
    const email = uniqueEmail('resend-signin');
    const signup = await fetch(`${supabaseURL}/auth/v1/signup`, {
      method: 'POST',
      headers: { apikey: ANON_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signup.status).toBe(200);
    await expectSignupMails(email, 1);

    const context = await fixture.newContext();
    const page = await context.newPage();
    await gotoHydrated(page, '/sign-in');
    await signInViaUI(page, email);
    await page.getByText('Please confirm your email address first — open the link we sent you.').waitFor();

    // Only for the address the sign-in was refused for: typing another one takes the offer away.
    const again = page.getByRole('button', { name: 'Send the link again' });
    await again.waitFor();
    await page.getByLabel('Email').fill(`other-${email}`);
    await again.waitFor({ state: 'hidden' });
    await page.getByLabel('Email').fill(email);
    await again.waitFor();

    await sendAgain(page, email);
    await page.screenshot({ path: screenshotPath('sign-in-resend-confirmation'), fullPage: true });
    const [newest] = await expectSignupMails(email, 2);
    await confirmWith(page, newest as MailMessage);
    await context.close();
  });
});

describe("the auth server's least time between two mails to an address (LOCALBASE_EMAIL_MAX_FREQUENCY)", () => {
  useBackendWith({ env: { LOCALBASE_ENABLE_CONFIRMATIONS: '1', LOCALBASE_EMAIL_MAX_FREQUENCY: '4' } });

  const WAIT = /^An email was just sent to this address\. Wait (\d) seconds? before asking for another\.$/;

  test('"Send the link again" at once says how many seconds to wait, counts them down, then sends', async () => {
    const page = await fixture.newPage();
    const email = uniqueEmail('resend-wait');
    await gotoHydrated(page, '/sign-up');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('status').filter({ hasText: `Almost there: we sent a confirmation link to ${email}.` }).waitFor();
    await page.getByRole('button', { name: 'Send the link again' }).click();
    await expectCountdown(page, WAIT, 'Send the link again');
    await page.screenshot({ path: screenshotPath('sign-up-resend-after-wait'), fullPage: true });
    await sendAgain(page, email);
    await expectSignupMails(email, 2);
  });

  test('a second reset link at once says how many seconds to wait, counts them down, then sends', async () => {
    const email = uniqueEmail('reset-wait');
    const signup = await fetch(`${supabaseURL}/auth/v1/signup`, {
      method: 'POST',
      headers: { apikey: ANON_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signup.status).toBe(200);
    const page = await fixture.newPage();
    await gotoHydrated(page, '/forgot-password');
    await page.getByLabel('Email').fill(email);
    const sent = page.getByRole('status').filter({ hasText: `If an account exists for ${email}, a reset link is on its way.` });
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await sent.waitFor();
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.screenshot({ path: screenshotPath('forgot-password-wait'), fullPage: true });
    await expectCountdown(page, WAIT, 'Send reset link');
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await sent.waitFor();
  });
});
