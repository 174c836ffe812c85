// /settings/account: the display name (user metadata) shows up in the header at once and after a reload, a
// password change takes effect, an email change is confirmed from both mailboxes, and field errors keep what
// was typed. Also: Back after sign-out never shows the account page, even when it is the previous entry.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { createAccount, expectCountdown, PASSWORD, signInViaUI, signUpViaUI, uniqueEmail, waitForMail } from './auth-helpers.ts';
import { useBackendWith } from './backend-control.ts';
import { gotoHydrated, useBrowser } from './browser.ts';

const fixture = useBrowser();

async function openAccount(page: Page): Promise<void> {
  await gotoHydrated(page, '/settings/account');
  await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
}

async function signOut(page: Page): Promise<void> {
  await page.getByRole('button', { name: /^Account: / }).click();
  await page.getByRole('button', { name: 'Sign out', exact: true }).click();
  await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
}

describe('account settings', () => {
  test('the display name is saved to the user and shown in the header, also after a reload', async () => {
    const page = await fixture.newPage();
    const email = uniqueEmail('name');
    await signUpViaUI(page, email);
    await page.getByRole('button', { name: `Account: ${email}` }).waitFor();
    await openAccount(page);
    const form = page.getByRole('form', { name: 'Display name' });
    await form.getByLabel('Display name').fill('Katherine Johnson');
    await form.getByRole('button', { name: 'Save name' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Name saved' }).waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Account: Katherine Johnson' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Account: Katherine Johnson' }).waitFor({ timeout: 20_000 });
    expect(await page.getByRole('form', { name: 'Display name' }).getByLabel('Display name').inputValue()).toBe('Katherine Johnson');
  });

  test('changing the password: mismatch and weak errors keep the input; the new password signs in', async () => {
    const page = await fixture.newPage();
    const email = uniqueEmail('pw');
    await signUpViaUI(page, email);
    await openAccount(page);
    const form = page.getByRole('form', { name: 'Change password' });
    await form.getByLabel('New password', { exact: true }).fill('abc');
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('Use at least 6 characters.').waitFor();
    expect(await form.getByLabel('New password', { exact: true }).inputValue()).toBe('abc');

    await form.getByLabel('New password', { exact: true }).fill('another-password-789');
    await form.getByLabel('Repeat the new password').fill('another-password-789');
    await form.getByRole('button', { name: 'Change password' }).click();
    await page.getByTestId('toast').filter({ hasText: 'Password changed' }).waitFor({ timeout: 15_000 });

    await signOut(page);
    await signInViaUI(page, email, PASSWORD);
    await page.getByText('That email and password do not match').waitFor({ timeout: 15_000 });
    await page.getByLabel('Password').fill('another-password-789');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: /^Account: / }).waitFor({ timeout: 20_000 });
  });

  test('a password over 72 characters is refused beside the field, saying the limit (sign-up and password change), text kept', async () => {
    const long = 'p'.repeat(80);
    const page = await fixture.newPage();
    const email = uniqueEmail('longpw');
    await gotoHydrated(page, '/sign-up');
    const signUp = page.getByRole('form', { name: 'Create account' });
    await signUp.getByLabel('Email').fill(email);
    await signUp.getByLabel('Password').fill(long);
    await signUp.getByRole('button', { name: 'Create account' }).click();
    await signUp.getByText('Use at most 72 characters.').waitFor({ timeout: 15_000 });
    expect(await signUp.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    expect(await signUp.getByLabel('Password').inputValue()).toBe(long);
    expect(await page.getByText('Some of what you entered is not valid').count()).toBe(0);

    await signUpViaUI(page, email);
    await openAccount(page);
    const form = page.getByRole('form', { name: 'Change password' });
    await form.getByLabel('New password', { exact: true }).fill(long);
    await form.getByLabel('Repeat the new password').fill(long);
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByText('Use at most 72 characters.').waitFor({ timeout: 15_000 });
    expect(await form.getByLabel('New password', { exact: true }).inputValue()).toBe(long);
    expect(await page.getByText('Some of what you entered is not valid').count()).toBe(0);
  });

  test('changing the email needs confirming from both addresses (said again after a reload until then)', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    const oldEmail = uniqueEmail('old');
    const newEmail = uniqueEmail('new');
    await signUpViaUI(page, oldEmail);
    await openAccount(page);
    const form = page.getByRole('form', { name: 'Change email' });
    await form.getByLabel('New email').fill(oldEmail);
    await form.getByRole('button', { name: 'Change email' }).click();
    await form.getByText('That is already your email address.').waitFor();
    // Another account's address: said as such, not the sign-up form's "Sign in instead".
    const taken = uniqueEmail('taken');
    await createAccount(taken);
    await form.getByLabel('New email').fill(taken);
    await form.getByRole('button', { name: 'Change email' }).click();
    await form.getByText('This email already belongs to another account. Use a different address.').waitFor({ timeout: 15_000 });
    expect(await form.getByLabel('New email').inputValue()).toBe(taken);
    expect(await page.getByText('Sign in instead').count()).toBe(0);

    await form.getByLabel('New email').fill(newEmail);
    await form.getByRole('button', { name: 'Change email' }).click();
    await page.getByRole('status').filter({ hasText: 'Check both inboxes' }).waitFor({ timeout: 15_000 });

    // Still said after a reload: the change waits for both links (the user's new_email).
    await page.reload();
    await page.getByRole('form', { name: 'Change email' }).getByRole('status').filter({ hasText: `Check both inboxes: confirm the change from ${oldEmail} and from ${newEmail}.` }).waitFor({ timeout: 15_000 });

    // Another tab with the account page open while the links are opened here.
    const other = await context.newPage();
    await openAccount(other);
    await other.getByRole('form', { name: 'Change email' }).getByRole('status').filter({ hasText: 'Check both inboxes' }).waitFor({ timeout: 15_000 });

    const toOld = await waitForMail(oldEmail, 'email_change');
    const toNew = await waitForMail(newEmail, 'email_change');
    // the first link only records progress; the server says so in the fragment, and the page in its own words
    await page.goto(toOld.links[0] as string);
    await page.getByRole('status').filter({ hasText: 'To finish changing your email address, also open the link we sent to your other address.' }).waitFor({ timeout: 20_000 });
    await page.getByRole('heading', { name: 'One more step' }).waitFor();
    // the second one applies the change and comes back to the account page
    await page.goto(toNew.links[0] as string);
    await page.waitForURL((url) => url.pathname === '/settings/account', { timeout: 20_000 });
    await openAccount(page);
    await page.getByText(`You sign in with ${newEmail}`).waitFor({ timeout: 15_000 });
    // The other tab follows: the change is done, so no "Check both inboxes" (it read "from <new> and from <new>").
    await other.getByText(`You sign in with ${newEmail}`).waitFor({ timeout: 15_000 });
    await expect.poll(() => other.getByText('Check both inboxes').count(), { timeout: 5_000 }).toBe(0);
  });

  test('Back after sign-out does not show the account page, even when it is the previous history entry', async () => {
    const page = await fixture.newPage();
    await signUpViaUI(page, uniqueEmail('back'));
    await openAccount(page);
    await page.getByRole('link', { name: 'Foyer' }).click(); // client-side to /, the account page stays behind it
    await page.waitForURL((url) => url.pathname === '/');
    await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor(); // signed in, / is the notes list
    await signOut(page);
    await page.goBack();
    await page.waitForURL((url) => url.pathname !== '/', { timeout: 10_000 }).catch(() => undefined);
    await page.waitForTimeout(1500);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect(await page.getByRole('heading', { name: 'Account', level: 1 }).count()).toBe(0);
  });
});

describe("the auth server's least time between two mails of an email change (LOCALBASE_EMAIL_MAX_FREQUENCY)", () => {
  useBackendWith({ env: { LOCALBASE_EMAIL_MAX_FREQUENCY: '4' } });

  test('a second email change at once says how many seconds to wait, counts them down with the button waiting, then sends', async () => {
    const page = await fixture.newPage();
    const email = uniqueEmail('change-wait');
    await signUpViaUI(page, email);
    await openAccount(page);
    const form = page.getByRole('form', { name: 'Change email' });
    await form.getByLabel('New email').fill(uniqueEmail('first'));
    await form.getByRole('button', { name: 'Change email' }).click();
    await page.getByRole('status').filter({ hasText: 'Check both inboxes' }).waitFor({ timeout: 15_000 });
    const second = uniqueEmail('second');
    await form.getByLabel('New email').fill(second);
    await form.getByRole('button', { name: 'Change email' }).click();
    await expectCountdown(page, /^Links for an email change were just sent\. Wait (\d) seconds? before asking for another\.$/, 'Change email');
    expect(await form.getByLabel('New email').inputValue()).toBe(second); // nothing typed is lost
    expect(await form.getByLabel('New email').getAttribute('aria-invalid')).not.toBe('true'); // the address is not wrong
    await form.getByRole('button', { name: 'Change email' }).click();
    await page.getByRole('status').filter({ hasText: `Check both inboxes: confirm the change from ${email} and from ${second}.` }).waitFor({ timeout: 15_000 });
    await waitForMail(second, 'email_change');
  });
});
