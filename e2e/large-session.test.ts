// A user whose session is large (kilobytes of user metadata, settable by anyone through the auth API) is never
// locked out: pages keep opening at 4 and 8 kB of metadata, and past what the server accepts the answer clears the
// session and says so, instead of an HTTP 431 on every page that only clearing cookies by hand would end.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, test } from 'vitest';
import { createAccount, sessionCookies, signInViaUI, uniqueEmail } from './auth-helpers.ts';
import { baseURL, gotoHydrated, useBrowser } from './browser.ts';
import { listSettled } from './notes-helpers.ts';

const fixture = useBrowser();

async function waitForPath(page: import('playwright-core').Page, pathname: string): Promise<void> {
  await page.waitForURL((url) => url.pathname === pathname, { timeout: 20_000 });
}

describe('large sessions', () => {
  for (const kilobytes of [4, 8]) {
    test(`with ${kilobytes} kB of user metadata every page opens, survives a reload, and sign-out clears it`, async () => {
      const email = uniqueEmail(`big${kilobytes}`);
      await createAccount(email, undefined, { display_name: 'Big', about: 'x'.repeat(kilobytes * 1024) });
      const context = await fixture.newContext();
      const page = await context.newPage();
      await gotoHydrated(page, '/sign-in');
      await signInViaUI(page, email);
      await waitForPath(page, '/');
      await page.getByRole('button', { name: 'Account: Big' }).waitFor({ timeout: 20_000 });
      await listSettled(page);

      const cookies = await sessionCookies(context);
      const cookieBytes = cookies.reduce((sum, c) => sum + c.name.length + c.value.length + 3, 0);
      // Past Node's default 16 KiB request-head limit at 8 kB of metadata: the case that used to answer 431.
      if (kilobytes === 8) expect(cookieBytes).toBeGreaterThan(16 * 1024);
      console.log(`[large-session] ${kilobytes} kB of metadata: ${cookies.length} cookie chunks, ${cookieBytes} bytes of Cookie header`);

      for (const path of ['/', '/settings/account', '/settings/security', '/sign-in']) {
        const response = await page.goto(path);
        expect(response?.status(), path).toBe(200);
      }
      await waitForPath(page, '/'); // /sign-in sends a signed-in user on
      await page.reload();
      await page.getByRole('button', { name: 'Account: Big' }).waitFor({ timeout: 20_000 });
      await listSettled(page);

      await page.getByRole('button', { name: 'Account: Big' }).click();
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await waitForPath(page, '/sign-in');
      expect(await sessionCookies(context)).toEqual([]);
    });
  }

  test('past the server\'s limit the answer signs the user out, says why and leads back to sign-in', async () => {
    const context = await fixture.newContext();
    // A session cookie far larger than any server accepts (25 chunks of 3,000 characters).
    await context.addCookies(
      Array.from({ length: 25 }, (_, i) => ({
        name: `sb-127-auth-token.${i}`,
        value: 'x'.repeat(3000),
        url: baseURL,
        sameSite: 'Lax' as const,
      })),
    );
    const page = await context.newPage();
    const response = await page.goto('/');
    expect(response?.status()).toBe(431);
    await page.getByRole('heading', { name: 'You have been signed out' }).waitFor();
    expect(await sessionCookies(context)).toEqual([]);

    const email = uniqueEmail('wayout');
    await createAccount(email);
    await page.getByRole('link', { name: 'Sign in again' }).click();
    await waitForPath(page, '/sign-in');
    await page.getByRole('button', { name: /^Theme: (system|light|dark)$/ }).waitFor({ timeout: 30_000 });
    await signInViaUI(page, email);
    await waitForPath(page, '/');
    await listSettled(page);
  });

  test('a link from another site with an address past the limit gets 414 and leaves the user signed in', async () => {
    const email = uniqueEmail('longurl');
    await createAccount(email, undefined, { display_name: 'Linked' });
    const context = await fixture.newContext();
    const page = await context.newPage();
    await gotoHydrated(page, '/sign-in');
    await signInViaUI(page, email);
    await waitForPath(page, '/');
    await page.getByRole('button', { name: 'Account: Linked' }).waitFor({ timeout: 20_000 });
    const before = await sessionCookies(context);
    expect(before.length).toBeGreaterThan(0);

    // "Another website": a page on http://localhost:<port> whose link is a 70 kB address of the app.
    const longURL = `${baseURL}/?x=${'a'.repeat(70_000)}`;
    const other = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>elsewhere</title><a href="${longURL}">a long link</a>`);
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      await page.goto(`http://localhost:${(other.address() as AddressInfo).port}/`);
      const answered = page.waitForResponse((response) => response.url().startsWith(`${baseURL}/?x=`));
      await page.getByRole('link', { name: 'a long link' }).click();
      expect((await answered).status()).toBe(414);
      await page.getByRole('heading', { name: 'This address is too long' }).waitFor();
      expect(await page.getByText(/signed out/i).count()).toBe(0);
      expect((await sessionCookies(context)).map((c) => [c.name, c.value])).toEqual(before.map((c) => [c.name, c.value]));

      await page.getByRole('link', { name: 'Go to the start page' }).click();
      await waitForPath(page, '/');
      await page.getByRole('button', { name: 'Account: Linked' }).waitFor({ timeout: 20_000 });
    } finally {
      other.close();
    }
  });
});
