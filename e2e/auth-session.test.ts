// Cookie sessions end to end: sign-up lands signed in, the session survives a reload in an `sb-…-auth-token`
// cookie (path /, SameSite Lax), sign-out goes to /sign-in for good (also from another tab) and ends this browser's
// session only (other devices are signed out from /settings/security), protected pages
// send signed-out visitors to /sign-in?next=… and back after signing in, a hostile next is ignored, and the
// protected tRPC procedure auth.me answers only to a signed-in caller.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { createAccount, PASSWORD, sessionCookies, signInViaUI, signUpViaUI, uniqueEmail } from './auth-helpers.ts';
import { baseURL, gotoHydrated, useBrowser } from './browser.ts';

const fixture = useBrowser();

async function waitForPath(page: Page, path: string): Promise<void> {
  await page.waitForURL((url) => url.pathname === path, { timeout: 20_000 });
}

async function callMe(page: Page): Promise<{ status: number; body: unknown }> {
  const response = await page.request.get(`${baseURL}/api/trpc/auth.me`);
  return { status: response.status(), body: await response.json() };
}

describe('cookie session', () => {
  test('sign-up lands signed in; a reload keeps the session in an sb-…-auth-token cookie; sign-out leads to /sign-in and Back does not show the account page', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    const email = uniqueEmail('signup');
    await signUpViaUI(page, email, PASSWORD, 'Ada Lovelace');
    await waitForPath(page, '/');
    await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor(); // signed in, / is the notes list
    await expect(page.getByRole('button', { name: 'Account: Ada Lovelace' }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('link', { name: 'Sign in', exact: true }).count()).resolves.toBe(0);

    const cookies = await sessionCookies(context);
    expect(cookies.length).toBeGreaterThan(0);
    for (const cookie of cookies) {
      expect(cookie.name).toMatch(/^sb-127-auth-token(\.\d+)?$/);
      expect(cookie.path).toBe('/');
      expect(cookie.sameSite).toBe('Lax');
      expect(cookie.httpOnly).toBe(false);
      // max-age 31536000000 s asked for; Chromium clamps every cookie to 400 days
      const days = (cookie.expires * 1000 - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(399);
      expect(days).toBeLessThanOrEqual(400.01);
    }

    await page.reload();
    await page.getByRole('button', { name: 'Account: Ada Lovelace' }).waitFor({ timeout: 20_000 });

    // the server verified the session on its own: the account page renders signed in, straight from SSR
    const html = await (await page.request.get(`${baseURL}/settings/account`, { maxRedirects: 0 })).text();
    expect(html).toContain(email);

    await gotoHydrated(page, '/settings/account');
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Account: Ada Lovelace' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await waitForPath(page, '/sign-in');
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    expect(await sessionCookies(context)).toEqual([]);
    await page.getByRole('link', { name: 'Sign in', exact: true }).waitFor();

    await page.goBack();
    await page.waitForLoadState('load');
    await page.waitForTimeout(1500);
    expect(new URL(page.url()).pathname).not.toBe('/settings/account');
    await expect(page.getByRole('heading', { name: 'Account', level: 1 }).count()).resolves.toBe(0);

    // and a direct visit is refused now
    await page.goto('/settings/account');
    await waitForPath(page, '/sign-in');
  });

  test('a large session is split into sb-…-auth-token.0/.1 cookies of at most 3180 characters, survives a reload and is cleared whole on sign-out', async () => {
    const email = uniqueEmail('chunks');
    await createAccount(email, PASSWORD, { display_name: 'Chunky', bio: 'x'.repeat(1200) });
    const context = await fixture.newContext();
    const page = await context.newPage();
    await gotoHydrated(page, '/sign-in');
    await signInViaUI(page, email);
    await page.getByRole('button', { name: 'Account: Chunky' }).waitFor({ timeout: 20_000 });
    const chunks = (await sessionCookies(context)).sort((a, b) => a.name.localeCompare(b.name));
    // the metadata is in the token's claims and in the stored user: several chunks, numbered from .0
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(chunks.map((c) => c.name)).toEqual(chunks.map((_, i) => `sb-127-auth-token.${i}`));
    for (const chunk of chunks) {
      expect(encodeURIComponent(chunk.value).length).toBeLessThanOrEqual(3180);
      expect(chunk.path).toBe('/');
      expect(chunk.sameSite).toBe('Lax');
    }
    await page.goto('/settings/account');
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Account: Chunky' }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await waitForPath(page, '/sign-in');
    expect(await sessionCookies(context)).toEqual([]);
  });

  test('a signed-out visit of /settings/account goes to /sign-in?next=/settings/account and back there after signing in', async () => {
    const email = uniqueEmail('next');
    await createAccount(email);
    const page = await fixture.newPage();
    const response = await page.goto('/settings/account');
    expect(response?.status()).toBe(200);
    const url = new URL(page.url());
    expect(url.pathname).toBe('/sign-in');
    expect(url.searchParams.get('next')).toBe('/settings/account');
    await page.getByRole('button', { name: /^Theme: / }).waitFor();

    // a wrong password: readable error beside the field, what was typed stays
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('That email and password do not match').waitFor({ timeout: 15_000 });
    expect(await page.getByLabel('Email').inputValue()).toBe(email);
    expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');

    await signInViaUI(page, email);
    await waitForPath(page, '/settings/account');
    await page.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await page.getByText(`You sign in with ${email}`).waitFor();
  });

  for (const hostile of ['//evil.example/x', '/\\evil.example', 'https://evil.example/', 'javascript:alert(1)', '%2F%2Fevil.example']) {
    test(`a hostile next (${hostile}) is ignored after sign-in`, async () => {
      const email = uniqueEmail('hostile');
      await createAccount(email);
      const page = await fixture.newPage();
      await gotoHydrated(page, `/sign-in?next=${encodeURIComponent(hostile)}`);
      await signInViaUI(page, email);
      await page.getByRole('button', { name: /^Account: / }).waitFor({ timeout: 20_000 });
      await waitForPath(page, '/');
      await page.waitForTimeout(500); // nothing navigates on afterwards
      const url = new URL(page.url());
      expect(url.origin).toBe(baseURL);
      expect(url.pathname).toBe('/');
    });
  }

  test('an already signed-in visit of /sign-in?next=//evil stays on this site', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    await signUpViaUI(page, uniqueEmail('signed-in-hostile'));
    const response = await page.request.get(`${baseURL}/sign-in?next=${encodeURIComponent('//evil.example')}`, { maxRedirects: 0 });
    expect(response.status()).toBe(307);
    expect(response.headers().location).toBe('/');
  });

  test('signed in, no page ever flashes signed-out content (the "Sign in" link or form), not even a static page', async () => {
    const context = await fixture.newContext();
    const setup = await context.newPage();
    await signUpViaUI(setup, uniqueEmail('flash'));
    await setup.close();
    // record, from the first byte on, whether a "Sign in" link or the sign-in password field is ever in the document
    await context.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { __signedOutSeen: string[] }).__signedOutSeen = seen;
      const check = (): void => {
        for (const a of Array.from(document.querySelectorAll('a[href^="/sign-in"]'))) if (a.textContent?.trim() === 'Sign in') seen.push('sign-in link');
        if (document.querySelector('input[autocomplete="current-password"]')) seen.push('sign-in password field');
      };
      new MutationObserver(check).observe(document, { childList: true, subtree: true });
      document.addEventListener('DOMContentLoaded', check);
    });
    const page = await context.newPage();
    for (const path of ['/settings/account', '/', '/no-such-page']) {
      await page.goto(path);
      await page.getByRole('button', { name: /^Account: / }).waitFor({ timeout: 20_000 });
      await page.waitForTimeout(300);
      expect(await page.evaluate(() => (window as unknown as { __signedOutSeen: string[] }).__signedOutSeen), path).toEqual([]);
    }
  });

  test('the header turns signed-in together with the page: never while the sign-up or the sign-in form is shown', async () => {
    const context = await fixture.newContext();
    // From the first byte on, at every change of the document: the address and whether the header is signed in
    // (the account menu or "New" in it). Consecutive duplicates are dropped.
    await context.addInitScript(() => {
      const log: Array<[string, boolean]> = [];
      Object.assign(window, { __headerLog: log });
      const record = (): void => {
        const header = document.querySelector('header');
        if (!header) return;
        const signedIn = header.querySelector('[aria-label^="Account:"], [aria-keyshortcuts="N"]') !== null;
        const last = log[log.length - 1];
        if (!last || last[0] !== location.pathname || last[1] !== signedIn) log.push([location.pathname, signedIn]);
      };
      new MutationObserver(record).observe(document, { childList: true, subtree: true, attributes: true, characterData: true });
    });
    const headerLog = (page: Page) => page.evaluate(() => (window as unknown as { __headerLog: Array<[string, boolean]> }).__headerLog);
    const page = await context.newPage();
    const email = uniqueEmail('header-flash');
    await signUpViaUI(page, email);
    await waitForPath(page, '/');
    await page.getByRole('heading', { name: 'Notes', level: 1 }).waitFor();
    let log = await headerLog(page);
    expect(log, 'the sign-up form was shown signed out').toContainEqual(['/sign-up', false]);
    expect(log.filter(([path, signedIn]) => path === '/sign-up' && signedIn), JSON.stringify(log)).toEqual([]);
    expect(log[log.length - 1]).toEqual(['/', true]);

    await page.getByRole('button', { name: /^Account: / }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await waitForPath(page, '/sign-in');
    await gotoHydrated(page, '/sign-in');
    await signInViaUI(page, email);
    await waitForPath(page, '/');
    await page.getByRole('button', { name: /^Account: / }).waitFor({ timeout: 20_000 });
    log = await headerLog(page);
    expect(log, 'the sign-in form was shown signed out').toContainEqual(['/sign-in', false]);
    expect(log.filter(([path, signedIn]) => path === '/sign-in' && signedIn), JSON.stringify(log)).toEqual([]);
    expect(log[log.length - 1]).toEqual(['/', true]);
  });

  test('signing in in one tab moves another tab off its sign-in form, header and page together', async () => {
    const email = uniqueEmail('tabs-in');
    await createAccount(email);
    const context = await fixture.newContext();
    await context.addInitScript(() => {
      const log: Array<[string, boolean]> = [];
      Object.assign(window, { __headerLog: log });
      new MutationObserver(() => {
        const header = document.querySelector('header');
        if (!header) return;
        const signedIn = header.querySelector('[aria-label^="Account:"]') !== null;
        const last = log[log.length - 1];
        if (!last || last[0] !== location.pathname || last[1] !== signedIn) log.push([location.pathname, signedIn]);
      }).observe(document, { childList: true, subtree: true, attributes: true });
    });
    const other = await context.newPage();
    await gotoHydrated(other, '/sign-in');
    const first = await context.newPage();
    await gotoHydrated(first, '/sign-in');
    await signInViaUI(first, email);
    await waitForPath(first, '/');

    await waitForPath(other, '/');
    await other.getByRole('heading', { name: 'Notes', level: 1 }).waitFor({ timeout: 20_000 });
    await other.getByRole('button', { name: /^Account: / }).waitFor();
    const log = await other.evaluate(() => (window as unknown as { __headerLog: Array<[string, boolean]> }).__headerLog);
    expect(log.filter(([path, signedIn]) => path === '/sign-in' && signedIn), JSON.stringify(log)).toEqual([]);
  });

  test('signing out in one tab sends the other tab to /sign-in', async () => {
    const context = await fixture.newContext();
    const first = await context.newPage();
    await signUpViaUI(first, uniqueEmail('tabs'));
    const second = await context.newPage();
    await gotoHydrated(second, '/settings/account');
    await second.getByRole('heading', { name: 'Account', level: 1 }).waitFor();

    await first.bringToFront();
    await first.getByRole('button', { name: /^Account: / }).click();
    await first.getByRole('button', { name: 'Sign out', exact: true }).click();
    await waitForPath(first, '/sign-in');
    await waitForPath(second, '/sign-in');
    await second.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  });

  test('Sign out in the menu ends this browser\'s session only; "Sign out other devices" ends the others\' and keeps this one', async () => {
    const email = uniqueEmail('devices');
    await createAccount(email);
    const signedInDevice = async () => {
      const page = await (await fixture.newContext()).newPage();
      await gotoHydrated(page, '/sign-in?next=/settings/security');
      await signInViaUI(page, email);
      await waitForPath(page, '/settings/security');
      await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
      return page;
    };
    // /settings/security asks the auth server about the session on every visit (ADR 031), so a reload tells.
    const stillSignedIn = async (page: Page) => {
      await gotoHydrated(page, '/settings/security');
      return new URL(page.url()).pathname === '/settings/security';
    };
    const laptop = await signedInDevice();
    const phone = await signedInDevice();
    const tablet = await signedInDevice();

    await laptop.getByRole('button', { name: /^Account: / }).click();
    await laptop.getByRole('button', { name: 'Sign out', exact: true }).click();
    await waitForPath(laptop, '/sign-in');
    expect(await stillSignedIn(phone)).toBe(true);
    expect(await stillSignedIn(tablet)).toBe(true);

    await phone.getByRole('button', { name: 'Sign out other devices' }).click();
    const yes = phone.getByRole('button', { name: 'Yes, sign them out' });
    await expect.poll(() => yes.evaluate((el) => el === document.activeElement)).toBe(true);
    await yes.click();
    await phone.getByText('Other devices signed out').waitFor();
    await expect.poll(() => phone.getByRole('button', { name: 'Sign out other devices' }).evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await stillSignedIn(phone)).toBe(true);
    expect(await stillSignedIn(tablet)).toBe(false);
    expect(new URL(tablet.url()).pathname).toBe('/sign-in');
  });

  test('"Sign out other devices" on a device whose own session was ended from another one says so, never "Other devices signed out"', async () => {
    const email = uniqueEmail('devices-ended');
    await createAccount(email);
    const devices: Page[] = [];
    for (let i = 0; i < 2; i++) {
      const page = await (await fixture.newContext()).newPage();
      await gotoHydrated(page, '/sign-in?next=/settings/security');
      await signInViaUI(page, email);
      await waitForPath(page, '/settings/security');
      await page.getByRole('heading', { name: 'Security', level: 1 }).waitFor();
      devices.push(page);
    }
    const [phone, tablet] = devices as [Page, Page];
    await phone.getByRole('button', { name: 'Sign out other devices' }).click();
    await phone.getByRole('button', { name: 'Yes, sign them out' }).click();
    await phone.getByText('Other devices signed out').waitFor();
    // the tablet's page is still open: its session was ended on the server, which the page does not know yet
    await tablet.bringToFront();
    await tablet.getByRole('button', { name: 'Sign out other devices' }).click();
    await tablet.getByRole('button', { name: 'Yes, sign them out' }).click();
    await tablet.getByRole('alert').filter({ hasText: 'Your session has ended' }).first().waitFor({ timeout: 15_000 });
    expect(await tablet.getByText('Other devices signed out').count()).toBe(0);
    // nothing was signed out by it
    await gotoHydrated(phone, '/settings/security');
    expect(new URL(phone.url()).pathname).toBe('/settings/security');
  });

  test('a page that says "Your session has ended" shows the signed-out header at once, and keeps the page with what was typed; a reload is signed out', async () => {
    const email = uniqueEmail('ended-here');
    await createAccount(email);
    const devices: Page[] = [];
    for (const next of ['/settings/account', '/settings/security']) {
      const page = await (await fixture.newContext()).newPage();
      await gotoHydrated(page, `/sign-in?next=${encodeURIComponent(next)}`);
      await signInViaUI(page, email);
      await waitForPath(page, next);
      devices.push(page);
    }
    const [laptop, phone] = devices as [Page, Page];
    await laptop.getByRole('heading', { name: 'Account', level: 1 }).waitFor();
    await laptop.getByRole('form', { name: 'Display name' }).getByLabel('Display name').fill('Typed before the end');
    // another device ends this one's session on the server
    await phone.getByRole('button', { name: 'Sign out other devices' }).click();
    await phone.getByRole('button', { name: 'Yes, sign them out' }).click();
    await phone.getByTestId('toast').filter({ hasText: 'Other devices signed out' }).waitFor({ timeout: 15_000 });

    await laptop.bringToFront();
    await laptop.getByRole('button', { name: 'Save name' }).click();
    await laptop.getByText('Your session has ended. Sign in again.').first().waitFor({ timeout: 15_000 });
    // the header says so too, without a reload: no account menu, a way to sign in
    await laptop.getByRole('link', { name: 'Sign in', exact: true }).waitFor({ timeout: 5_000 });
    expect(await laptop.getByRole('button', { name: /^Account: / }).count()).toBe(0);
    // the page stays, with the message and the text typed
    expect(new URL(laptop.url()).pathname).toBe('/settings/account');
    expect(await laptop.getByRole('form', { name: 'Display name' }).getByLabel('Display name').inputValue()).toBe('Typed before the end');
    expect(await laptop.getByText('Your session has ended. Sign in again.').count()).toBeGreaterThan(0);
    // this browser no longer holds the session: the next page is signed out
    await laptop.reload();
    await waitForPath(laptop, '/sign-in');
    expect(await sessionCookies(laptop.context())).toEqual([]);
  });

  test('Sign out without a connection to the auth server still signs this browser out, and says no "Sign-out failed"', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    await signUpViaUI(page, uniqueEmail('offline-out'));
    await page.route('**/auth/v1/logout*', (route) => route.abort('internetdisconnected'));
    await page.getByRole('button', { name: /^Account: / }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await waitForPath(page, '/sign-in');
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await page.waitForTimeout(1_000); // the failed request's answer comes after the page changed
    expect(await page.getByTestId('toast').filter({ hasText: /fail|could not/i }).allInnerTexts()).toEqual([]);
    expect(await sessionCookies(context)).toEqual([]);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    expect((await callMe(page)).status).toBe(401);
  });

  test('auth.me is UNAUTHORIZED signed out and returns the user signed in', async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    await gotoHydrated(page, '/');
    const refused = await callMe(page);
    expect(refused.status).toBe(401);
    expect(JSON.stringify(refused.body)).toContain('"code":"UNAUTHORIZED"');

    const email = uniqueEmail('me');
    await signUpViaUI(page, email, PASSWORD, 'Grace');
    const allowed = await callMe(page);
    expect(allowed.status).toBe(200);
    const data = (allowed.body as { result: { data: { json: { id: string; email: string; displayName: string } } } }).result.data.json;
    expect(data.email).toBe(email);
    expect(data.displayName).toBe('Grace');
    expect(data.id).toMatch(/^[0-9a-f-]{36}$/);

    // a forged cookie (valid shape, made-up token) is not trusted: the server asks the auth server
    await context.clearCookies();
    await context.addCookies([
      {
        name: 'sb-127-auth-token',
        value: `base64-${Buffer.from(JSON.stringify({ access_token: 'forged.token.value', refresh_token: 'nope', expires_at: 4102444800, token_type: 'bearer', user: { id: data.id, email } })).toString('base64url')}`,
        url: baseURL,
      },
    ]);
    const forged = await callMe(page);
    expect(forged.status).toBe(401);
  });
});
