// Email flows through localbase's mailbox: a magic sign-in link, and a password reset that ends signed in
// with the new password working (and the old one refused). Links go through the auth server's /verify, come
// back to /auth/confirm with a PKCE code, and the server exchanges it for the session cookies.
import { describe, expect, test } from 'vitest';
import { createAccount, sessionCookies, signInViaUI, supabaseURL, uniqueEmail, waitForMail } from './auth-helpers.ts';
import { DEFAULT_SERVICE_ROLE_KEY } from './backend-control.ts';
import { baseURL, gotoHydrated, useBrowser } from './browser.ts';

const fixture = useBrowser();

describe('email links', () => {
  test('"Email me a sign-in link": the mailed link signs in and honours next', async () => {
    const email = uniqueEmail('magic');
    await createAccount(email);
    const context = await fixture.newContext();
    const page = await context.newPage();
    await gotoHydrated(page, '/sign-in?next=%2Fsettings%2Faccount');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByRole('status').filter({ hasText: `a sign-in link is on its way` }).waitFor({ timeout: 15_000 });
    expect(await page.getByLabel('Email').inputValue()).toBe(email);

    const mail = await waitForMail(email, 'magiclink');
    expect(mail.links).toHaveLength(1);
    const link = mail.links[0] as string;
    await page.goto(link);
    await page.waitForURL((url) => url.pathname === '/settings/account', { timeout: 20_000 });
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.getByText(`You sign in with ${email}`).waitFor();
    expect((await sessionCookies(context)).length).toBeGreaterThan(0);

    // the same link a second time does not work
    const other = await fixture.newPage();
    await other.goto(link);
    await other.getByRole('heading', { name: 'That link did not work' }).waitFor({ timeout: 20_000 });
  });

  test('a sign-in link asked for an address without an account is answered as for one with (never "not enabled"), and no mail is sent', async () => {
    const email = uniqueEmail('no-account');
    const page = await fixture.newPage();
    await gotoHydrated(page, '/sign-in');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByRole('status').filter({ hasText: `If an account exists for ${email}, a sign-in link is on its way` }).waitFor({ timeout: 15_000 });
    expect(await page.getByText('not enabled').count()).toBe(0);
    expect(await page.getByRole('alert').filter({ hasText: /\S/ }).count()).toBe(0);
    expect(await page.getByTestId('toast').count()).toBe(0);
    const mailbox = await fetch(`${supabaseURL}/mailbox/api/messages?to=${encodeURIComponent(email)}`);
    expect(await mailbox.json()).toEqual([]);
  });

  test('the magic link needs an email address first', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page, '/sign-in');
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByText('Enter your email address to get a sign-in link.').waitFor();
    expect(await page.getByLabel('Email').getAttribute('aria-invalid')).toBe('true');
  });

  test('forgot password → mailed link → new password → signed in; the old password stops working', async () => {
    const email = uniqueEmail('reset');
    await createAccount(email, 'old-password-123');
    const context = await fixture.newContext();
    const page = await context.newPage();
    await gotoHydrated(page, '/sign-in');
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.waitForURL((url) => url.pathname === '/forgot-password');
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByRole('status').filter({ hasText: 'a reset link is on its way' }).waitFor({ timeout: 15_000 });

    const mail = await waitForMail(email, 'recovery');
    await page.goto(mail.links[0] as string);
    await page.waitForURL((url) => url.pathname === '/reset-password', { timeout: 20_000 });
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();

    // mismatch: error beside the field, typed text kept
    await page.getByLabel('New password', { exact: true }).fill('new-password-456');
    await page.getByLabel('Repeat the new password').fill('new-password-457');
    await page.getByRole('button', { name: 'Save new password' }).click();
    await page.getByText('The two passwords are not the same.').waitFor();
    expect(await page.getByLabel('New password', { exact: true }).inputValue()).toBe('new-password-456');

    await page.getByLabel('Repeat the new password').fill('new-password-456');
    await page.getByRole('button', { name: 'Save new password' }).click();
    await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
    await page.getByTestId('toast').filter({ hasText: 'Password changed' }).waitFor();

    // sign out, then the old password is refused and the new one works
    await page.getByRole('button', { name: /^Account: / }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in');
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await signInViaUI(page, email, 'old-password-123');
    await page.getByText('That email and password do not match').waitFor({ timeout: 15_000 });
    await page.getByLabel('Password').fill('new-password-456');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
    await page.getByRole('button', { name: /^Account: / }).waitFor();
  });

  test('/reset-password without a recovery session explains and offers a new link', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page, '/reset-password');
    await page.getByText('This page needs the link from your password-reset email').waitFor();
    await page.getByRole('link', { name: 'Request a new link' }).waitFor();
  });

  test('the session cookies are Secure when the app is served over https (behind its TLS proxy), and not over http', async () => {
    const email = uniqueEmail('secure-cookie');
    await createAccount(email);
    const setCookiesOfLink = async (headers: Record<string, string>) => {
      const link = await fetch(`${supabaseURL}/auth/v1/admin/generate_link`, {
        method: 'POST',
        headers: { apikey: DEFAULT_SERVICE_ROLE_KEY, authorization: `Bearer ${DEFAULT_SERVICE_ROLE_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'magiclink', email }),
      });
      const { hashed_token: tokenHash } = (await link.json()) as { hashed_token: string };
      const page = await fixture.newPage();
      const response = await page.request.get(`${baseURL}/auth/confirm?token_hash=${tokenHash}&type=magiclink`, { headers, maxRedirects: 0 });
      expect(response.status()).toBe(307);
      const lines = response.headersArray().filter((h) => h.name.toLowerCase() === 'set-cookie').map((h) => h.value);
      const session = lines.filter((line) => line.startsWith('sb-127-auth-token'));
      expect(session.length).toBeGreaterThan(0);
      return session;
    };
    for (const line of await setCookiesOfLink({ 'x-forwarded-proto': 'https' })) expect(line).toMatch(/; Secure(;|$)/);
    for (const line of await setCookiesOfLink({})) expect(line).not.toMatch(/; Secure(;|$)/i);
  });

  test('/auth/confirm with a bad token explains instead of failing', async () => {
    const page = await fixture.newPage();
    const response = await page.goto('/auth/confirm?token_hash=deadbeef&type=magiclink');
    expect(response?.status()).toBe(200);
    await page.getByRole('heading', { name: 'That link did not work' }).waitFor();
    await page.getByText('expired or was already used').waitFor();
    const noToken = await page.goto('/auth/confirm?type=bogus');
    expect(noToken?.status()).toBe(200);
  });

  test('/auth/confirm shows only messages the app knows, never text written into the link', async () => {
    const page = await fixture.newPage();
    const planted = 'Your account has been suspended. Call Foyer Support at +1 555 0100';
    const expired = 'This link or code has expired or was already used. Request a new one.';

    // a success message in the fragment that is not the auth server's: not shown, not as a success
    await gotoHydrated(page, `/auth/confirm#message=${encodeURIComponent(planted)}`);
    await page.getByRole('heading', { name: 'That link did not work' }).waitFor();
    await page.getByText(expired).waitFor();
    expect(await page.getByText(/suspended|555 0100/).count()).toBe(0);

    // an error description in the query or the fragment: worded by the error code, generic for an unknown one
    await gotoHydrated(page, `/auth/confirm?error=access_denied&error_code=no_such_code&error_description=${encodeURIComponent(planted)}`);
    await page.getByRole('heading', { name: 'That link did not work' }).waitFor();
    await page.getByText('This link could not be used. Request a new one.').waitFor();
    expect(await page.getByText(/suspended|555 0100|Something went wrong/).count()).toBe(0);
    await gotoHydrated(page, `/auth/confirm?error_description=${encodeURIComponent(planted)}`);
    await page.getByText('This link could not be used. Request a new one.').waitFor();
    expect(await page.getByText(/suspended|555 0100/).count()).toBe(0);

    await gotoHydrated(page, `/auth/confirm#error=access_denied&error_code=otp_expired&error_description=${encodeURIComponent(planted)}`);
    await page.getByText(expired).waitFor();
    expect(await page.getByText(/suspended|555 0100/).count()).toBe(0);
  });
});
