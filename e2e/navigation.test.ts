// Route changes and failures a user meets: the 404 page, the progress bar during a slow client-side route
// change, the status card's error state with a working retry, each page's document title, where focus goes
// after a client-side route change, and the pages a signed-in user opens while the backend is out of reach.
import type { Page, Route } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { backendControllable, replaceBackendWith, startBackend, stopBackend } from './backend-control.ts';
import { baseURL, gotoHydrated, MOUNTED_TOGGLE_NAME, useBrowser } from './browser.ts';
import { describeViolations, seriousViolations, sessionCookies } from './auth-helpers.ts';
import { seedNotes, signedInUser } from './notes-helpers.ts';

const fixture = useBrowser();

/** Answers the status card's batched GET (system.health, system.config) with a 500 for each of its calls. */
function failStatusBatch(route: Route): Promise<void> {
  const paths = decodeURIComponent(new URL(route.request().url()).pathname.slice('/api/trpc/'.length)).split(',');
  const error = {
    error: {
      json: {
        message: 'The status service is unavailable',
        code: -32603,
        data: { code: 'INTERNAL_SERVER_ERROR', httpStatus: 500, path: 'system.health' },
      },
    },
  };
  return route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify(paths.map(() => error)) });
}

/** What has keyboard focus: `<h1> text` for a heading, else the tag and its text. */
const focusedElement = (page: Page) =>
  page.evaluate(() => {
    const element = document.activeElement;
    return element ? `<${element.tagName.toLowerCase()}> ${(element as HTMLElement).innerText?.trim() ?? ''}` : 'none';
  });

describe('navigation and failure states', () => {
  test('an unknown address answers 404 with the app frame and a way back home', async () => {
    const page = await fixture.newPage();
    const response = await page.goto('/no/such/page');
    expect(response?.status()).toBe(404);
    await page.getByRole('button', { name: /^Theme: / }).waitFor({ timeout: 30_000 });
    await page.getByRole('banner').waitFor();
    expect(await page.getByRole('heading', { level: 1 }).count()).toBe(1);
    const back = page.getByRole('main').getByRole('link');
    expect(await back.count()).toBeGreaterThan(0);
    await back.first().click();
    await page.getByRole('heading', { level: 1, name: 'Welcome to Foyer' }).waitFor({ timeout: 15_000 });
    expect(new URL(page.url()).pathname).toBe('/');
  });

  test('addresses that are not pages answer 404, never a server error', async () => {
    // Framework internals, a test module beside the pages, unknown API and tRPC paths.
    const paths = ['/_app', '/_document', '/_error', '/_app.test', '/index', '/api/nope', '/api/trpc/nope.nope'];
    const statuses: Record<string, number> = {};
    for (const path of paths) {
      const response = await fetch(`${baseURL}${path}`, { redirect: 'manual' });
      statuses[path] = response.status;
    }
    expect(statuses).toEqual(Object.fromEntries(paths.map((path) => [path, 404])));
  });

  test('a mangled address (not valid percent-encoding) answers 400 with a page that says so and the headers every page has', async () => {
    const page = await fixture.newPage();
    const response = await page.goto('/notes/%E0%A4%A');
    expect(response?.status()).toBe(400);
    const headers = response?.headers() ?? {};
    expect(headers['x-frame-options']).toBe('DENY');
    expect(headers['referrer-policy']).toBe('strict-origin-when-cross-origin');
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
    await page.getByRole('heading', { level: 1, name: 'This address is not valid' }).waitFor();
    await page.getByRole('link', { name: 'Go to the start page' }).click();
    await page.getByRole('heading', { level: 1, name: 'Welcome to Foyer' }).waitFor({ timeout: 15_000 });
  });

  test('a slow client-side route change shows the top progress bar until the page is there', async () => {
    const page = await fixture.newPage();
    // Hold back the home page's code (its prefetch too) until the bar has been seen, so the route change
    // is pending for as long as the test needs.
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/_next/static/chunks/pages/index-*.js', async (route) => {
      await released;
      await route.continue();
    });
    await gotoHydrated(page, '/no/such/page');
    const bar = page.getByRole('progressbar', { name: 'Loading' });
    expect(await bar.isVisible()).toBe(false);
    await page.getByRole('main').getByRole('link').first().click();
    await bar.waitFor({ state: 'visible', timeout: 3000 });
    expect(new URL(page.url()).pathname, 'still on the old page while the route change is pending').not.toBe('/');
    release();
    await page.getByRole('heading', { level: 1, name: 'Welcome to Foyer' }).waitFor({ timeout: 15_000 });
    await bar.waitFor({ state: 'hidden', timeout: 3000 });
  });

  test('when the status queries fail the card says so and "retry" loads it', async () => {
    const page = await fixture.newPage();
    let failing = true;
    let failedCalls = 0;
    await page.route(
      (url) => url.pathname.startsWith('/api/trpc/') && url.pathname.includes('system.health'),
      async (route) => {
        if (!failing || route.request().method() !== 'GET') return route.continue();
        failedCalls += 1;
        return failStatusBatch(route);
      },
    );
    await gotoHydrated(page);
    // TanStack Query retries 3 times (1 s, 2 s, 4 s) before it reports the error.
    const retry = page.getByRole('main').getByRole('button', { name: /retry|try again/i });
    await retry.waitFor({ state: 'visible', timeout: 30_000 });
    expect(failedCalls).toBeGreaterThanOrEqual(1);
    expect(await page.getByTestId('server-time').count()).toBe(0);
    const cardText = await page.getByRole('main').innerText();
    expect(cardText, 'a readable message, not a stack trace').not.toMatch(/TRPCClientError|at .*\.js:\d+/);

    failing = false;
    await retry.click();
    await page.getByTestId('server-time').waitFor({ state: 'visible', timeout: 15_000 });
  });
  test('"Check connection" pressed by keyboard keeps focus while it checks, and a second press sends nothing', async () => {
    const page = await fixture.newPage();
    let checks = 0;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/api/trpc/system.clockSkew**', async (route) => {
      checks += 1;
      await held;
      return route.continue();
    });
    await gotoHydrated(page);
    const check = page.getByRole('button', { name: 'Check connection' });
    await check.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => check.getAttribute('aria-disabled')).toBe('true');
    // While it checks the button waits, yet keeps focus (disabled, focus would drop to <body>, and Enter be lost).
    expect(await check.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await page.keyboard.press('Space');
    release();
    await page.getByTestId('toast').filter({ hasText: 'Connected' }).waitFor({ timeout: 10_000 });
    expect(checks).toBe(1);
    expect(await check.evaluate((el) => el === document.activeElement)).toBe(true);
    // Pressed again once the answer is there, it checks again.
    await page.keyboard.press('Enter');
    await expect.poll(() => checks).toBe(2);
  });
  test('"Retry" on the status card by keyboard: focus goes to the card\'s heading while the card loads again, not to <body>', async () => {
    const page = await fixture.newPage();
    let failing = true;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(
      (url) => url.pathname.startsWith('/api/trpc/') && url.pathname.includes('system.health'),
      async (route) => {
        if (route.request().method() !== 'GET') return route.continue();
        if (!failing) {
          await held;
          return route.continue();
        }
        return failStatusBatch(route);
      },
    );
    await gotoHydrated(page);
    const retry = page.getByRole('main').getByRole('button', { name: 'Retry' });
    await retry.waitFor({ state: 'visible', timeout: 30_000 });
    failing = false;
    await retry.focus();
    await page.keyboard.press('Enter');
    // The error (and its button) gives way to the card's loading rows at once.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('system-status-heading');
    release();
    await page.getByTestId('server-time').waitFor({ state: 'visible', timeout: 15_000 });
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('system-status-heading');
  });

  test('with no answer from the app (connection lost) the status card and "Check connection" say so in words, never "Failed to fetch"', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page);
    await page.getByTestId('server-time').waitFor({ timeout: 15_000 });
    await page.route('**/api/trpc/**', (route) => route.abort('internetdisconnected'));
    await page.getByRole('button', { name: 'Check connection' }).click();
    const failed = page.getByTestId('toast').filter({ hasText: 'Connection check failed' });
    await failed.waitFor({ timeout: 10_000 });
    expect(await failed.innerText()).toContain("Can't reach the server. Check your connection and try again.");
    expect(await failed.innerText()).not.toMatch(/fetch/i);

    // A fresh load of the page whose status queries get no answer (after TanStack Query's retries).
    await page.reload();
    const card = page.getByRole('alert').filter({ hasText: 'Could not reach the API' });
    await card.waitFor({ timeout: 30_000 });
    expect(await card.innerText()).toContain("Can't reach the server. Check your connection and try again.");
    expect(await card.innerText()).not.toMatch(/fetch/i);
  });
});

describe('each page says where the user is', () => {
  test('the document title names the page (auth pages, the account and security pages, a note by its title), also after a client-side route change', async () => {
    const page = await fixture.newPage();
    const titles: Record<string, string> = {};
    for (const path of ['/', '/sign-in', '/sign-up', '/forgot-password']) {
      await gotoHydrated(page, path);
      titles[path] = await page.title();
    }
    expect(titles).toEqual({
      '/': 'Foyer',
      '/sign-in': 'Sign in · Foyer',
      '/sign-up': 'Create your account · Foyer',
      '/forgot-password': 'Reset your password · Foyer',
    });

    const { page: signedIn, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Quarterly plan' }]);
    expect(await signedIn.title()).toBe('Notes · Foyer');
    await gotoHydrated(signedIn, `/notes/${note!.id}`);
    expect(await signedIn.title()).toBe('Quarterly plan · Foyer');
    await gotoHydrated(signedIn, '/settings/security');
    expect(await signedIn.title()).toBe('Security · Foyer');
    // Client-side: the security page's link to the account page.
    await signedIn.getByRole('main').getByRole('link', { name: 'Account settings' }).click();
    await signedIn.waitForURL((url) => url.pathname === '/settings/account');
    await expect.poll(() => signedIn.title()).toBe('Account · Foyer');
  });

  test('after a client-side route change by keyboard, focus is on the new page\'s heading, not on <body>', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Focus lands here' }]);
    await page.reload();
    await page.getByRole('link', { name: /Focus lands here/ }).first().waitFor({ timeout: 15_000 });

    // A note from the list.
    await page.getByRole('link', { name: /Focus lands here/ }).first().focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === `/notes/${note!.id}`);
    await expect.poll(() => focusedElement(page)).toBe('<h1> Focus lands here');

    // The user menu's "Account settings".
    await page.getByRole('button', { name: /^Account: / }).focus();
    await page.keyboard.press('Enter');
    const settings = page.getByRole('link', { name: 'Account settings' });
    await settings.waitFor();
    await settings.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/settings/account');
    await expect.poll(() => focusedElement(page)).toBe('<h1> Account');
    // Tab goes on from the heading into the page, not from the top of the document.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => Boolean(document.activeElement?.closest('main')))).toBe(true);

    // The 404 page's way back.
    await gotoHydrated(page, '/no/such/page');
    await page.getByRole('link', { name: 'Back to the start page' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/');
    await expect.poll(() => focusedElement(page)).toBe('<h1> Notes');
  });
});

describe('the backend out of reach', () => {
  test('signed in, a page that needs the backend says it cannot be reached (503) — never a redirect loop or "Internal Server Error" — and "Try again" opens it once it is back', async () => {
    if (!backendControllable()) throw new Error('this test needs the localbase started by the e2e global setup (not E2E_BASE_URL)');
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Out of reach' }]);
    await gotoHydrated(page, '/settings/account');
    await gotoHydrated(page, `/notes/${note!.id}`);
    await stopBackend();
    try {
      for (const path of ['/settings/account', '/settings/security', `/notes/${note!.id}`]) {
        const response = await page.goto(path);
        expect(response?.status(), path).toBe(503);
        expect(new URL(page.url()).pathname, path).toBe(path);
        await page.getByRole('heading', { level: 1, name: "Can't reach the server" }).waitFor();
        expect(await page.title()).toBe("Can't reach the server · Foyer");
        expect(await page.getByRole('main').innerText()).not.toMatch(/internal server error|500/i);
      }
    } finally {
      await startBackend();
    }
    await page.getByRole('button', { name: /^Theme: / }).waitFor();
    await page.getByRole('main').getByRole('link', { name: 'Try again' }).click();
    await page.getByRole('heading', { level: 1, name: 'Out of reach' }).waitFor({ timeout: 20_000 });
  });

  test('signed in with a token due for refresh, the 503 page comes at once (no 25 s of refresh retries) and its header still shows the account, never "Sign in"', async () => {
    if (!backendControllable()) throw new Error('this test needs the localbase started by the e2e global setup (not E2E_BASE_URL)');
    const { page, email } = await signedInUser(fixture);
    await gotoHydrated(page, '/settings/account');
    // The access token is at the end of its hour (a tab left open, a laptop woken up): the server must refresh it
    // through the auth server, which does not answer.
    const context = page.context();
    const cookies = (await sessionCookies(context)).sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
    const raw = cookies.map((c) => c.value).join('');
    const session = JSON.parse(Buffer.from(raw.slice('base64-'.length), 'base64url').toString('utf8')) as { expires_at: number };
    const value = `base64-${Buffer.from(JSON.stringify({ ...session, expires_at: Math.floor(Date.now() / 1000) + 30 })).toString('base64url')}`;
    await context.clearCookies({ name: /^sb-127-auth-token/ });
    await context.addCookies([{ ...cookies[0]!, name: 'sb-127-auth-token', value }]);
    await stopBackend();
    try {
      for (const path of ['/settings/account', '/settings/security']) {
        const started = Date.now();
        const response = await page.goto(path, { waitUntil: 'commit' });
        expect(Date.now() - started, `${path}: the answer took`).toBeLessThan(5_000);
        expect(response?.status(), path).toBe(503);
        await page.getByRole('heading', { level: 1, name: "Can't reach the server" }).waitFor();
        await page.getByRole('button', { name: MOUNTED_TOGGLE_NAME }).waitFor();
        await page.waitForTimeout(1500); // the auth client loads when the browser is idle
        const header = page.getByRole('banner');
        expect(await header.getByRole('link', { name: 'Sign in' }).count(), path).toBe(0);
        expect(await header.getByRole('button', { name: `Account: ${email}` }).count(), path).toBe(1);
      }
    } finally {
      await startBackend();
    }
  });

  test('a page whose data the backend fails to give (a database error) answers 500 in the app frame with "Try again" and the headers every page has', async () => {
    if (!backendControllable()) throw new Error('this test needs the localbase started by the e2e global setup (not E2E_BASE_URL)');
    const { page, id } = await signedInUser(fixture, { colorScheme: 'dark' });
    const [note] = await seedNotes(id, [{ title: 'After the failure' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    // PostgREST's answer when the database fails in the middle of a query
    const restore = await replaceBackendWith((_req, res) => {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ code: 'XX000', details: null, hint: null, message: 'could not read block 42 in file "base/5/16384"' }));
    });
    try {
      const response = await page.goto(`/notes/${note!.id}`);
      expect(response?.status()).toBe(500);
      const headers = response?.headers() ?? {};
      expect(headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
      expect(headers['x-frame-options']).toBe('DENY');
      expect(headers['x-content-type-options']).toBe('nosniff');
      await page.getByRole('button', { name: MOUNTED_TOGGLE_NAME }).waitFor({ timeout: 30_000 });
      await page.getByRole('banner').waitFor();
      await page.getByRole('heading', { level: 1, name: 'Something went wrong' }).waitFor();
      expect(await page.title()).toBe('Something went wrong · Foyer');
      expect(await page.locator('html').getAttribute('class')).toMatch(/\bt_dark\b/);
      expect(await page.getByRole('main').innerText()).not.toMatch(/internal server error|could not read block/i);
      // The page is static (rendered at build time, no session in it): its header shows the account the browser holds.
      const header = page.getByRole('banner');
      await header.getByRole('button', { name: /^Account: / }).waitFor({ timeout: 10_000 });
      expect(await header.getByRole('link', { name: 'Sign in' }).count()).toBe(0);
    } finally {
      await restore();
    }
    await page.getByRole('main').getByRole('link', { name: 'Try again' }).click();
    await page.getByRole('heading', { level: 1, name: 'After the failure' }).waitFor({ timeout: 20_000 });
  });
});

describe('a page that fails to render in the browser', () => {
  test('an answer the page cannot show (dates without their superjson types) gives the app frame, "Something went wrong" with focus on it, Try again and Reload, and the typed text back', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Crash course', body: 'stored' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByLabel('Note', { exact: true }).fill('stored + words typed before the failure');
    // A server of another version (a deployment under way) answers the pin without superjson's type annotations:
    // the note's dates arrive as strings, and the page throws while rendering them.
    const withoutTypes = async (route: Route) => {
      const response = await route.fetch();
      const answers = (await response.json()) as Array<{ result?: { data?: { meta?: unknown } } }>;
      for (const answer of answers) delete answer.result?.data?.meta;
      await route.fulfill({ response, body: JSON.stringify(answers) });
    };
    await page.route('**/api/trpc/notes.setPinned**', withoutTypes);
    await page.getByRole('button', { name: 'Pin', exact: true }).click();
    const main = page.getByRole('main');
    await main.getByRole('heading', { level: 1, name: 'Something went wrong' }).waitFor({ timeout: 10_000 });
    expect(await page.content()).not.toMatch(/Application error/);
    await page.getByRole('banner').getByRole('button', { name: /^Account: / }).waitFor();
    expect(await page.title()).toBe('Something went wrong · Foyer');
    await expect.poll(() => focusedElement(page)).toBe('<h1> Something went wrong');
    const violations = await seriousViolations(page);
    expect(violations, describeViolations(violations)).toEqual([]);
    await page.keyboard.press('Tab');
    await expect.poll(() => focusedElement(page)).toBe('<button> Try again');
    await page.keyboard.press('Tab');
    await expect.poll(() => focusedElement(page)).toBe('<button> Reload the page');
    await page.unroute('**/api/trpc/notes.setPinned**');

    // Try again renders the page anew, focus on its heading (the button went); the text typed before the failure is
    // offered back.
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => focusedElement(page)).toBe('<h1> Crash course');
    const offer = page.getByTestId('note-unsaved-kept');
    await offer.getByRole('button', { name: 'Restore my changes' }).click();
    expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('stored + words typed before the failure');

    // Failed again: a link in the header leads out of it, to a page that renders.
    await page.route('**/api/trpc/notes.setPinned**', withoutTypes);
    await page.getByRole('button', { name: 'Pin', exact: true }).click();
    await main.getByRole('heading', { level: 1, name: 'Something went wrong' }).waitFor({ timeout: 10_000 });
    await page.getByRole('banner').getByRole('link', { name: 'Foyer' }).click();
    await main.getByRole('heading', { level: 1, name: 'Notes' }).waitFor({ timeout: 10_000 });
    expect(await main.getByRole('heading', { name: 'Something went wrong' }).count()).toBe(0);
  });
});
