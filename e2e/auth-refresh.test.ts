// Automatic session refresh, watched in the browser with Playwright's clock: the auth client checks the access
// token every 30 s and refreshes it when 3 checks or fewer are left (a POST /auth/v1/token?grant_type=refresh_token
// from the page, new cookies). While the page is hidden the checks pause — no refresh even past expiry — and on
// becoming visible they resume at once. The browser's clock is moved instead of shortening the token lifetime:
// localbase issues 3600 s tokens, so the page is fast-forwarded to a few minutes before the expiry it holds.
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { sessionCookies, signUpViaUI, uniqueEmail } from './auth-helpers.ts';
import { gotoHydrated, sleep, useBrowser } from './browser.ts';

const fixture = useBrowser();

const TICK_MS = 30_000;

interface CookieSession {
  /** The cookie value(s) as the browser holds them (chunks joined in order). */
  raw: string;
  /** Access-token expiry, seconds since the epoch (as the auth server issued it). */
  expiresAt: number;
  accessToken: string;
}

/** The session in the `sb-127-auth-token` cookie (or its `.0`, `.1` … chunks), decoded as @supabase/ssr wrote it. */
async function cookieSession(context: BrowserContext): Promise<CookieSession> {
  const chunkIndex = (name: string): number => Number(/\.(\d+)$/.exec(name)?.[1] ?? -1);
  const cookies = (await sessionCookies(context)).sort((a, b) => chunkIndex(a.name) - chunkIndex(b.name));
  expect(cookies.length, 'session cookie present').toBeGreaterThan(0);
  const raw = cookies.map((c) => c.value).join('');
  expect(raw.startsWith('base64-')).toBe(true);
  const session = JSON.parse(Buffer.from(raw.slice('base64-'.length), 'base64url').toString('utf8')) as {
    expires_at: number;
    access_token: string;
  };
  return { raw, expiresAt: session.expires_at, accessToken: session.access_token };
}

interface RefreshLog {
  /** Refresh-token grants the page sent, as seen on the wire (CORS preflights not counted). */
  requests: string[];
  /** The page's own clock (fake `Date.now()`) when it sent each one, from the current document. */
  pageTimes(): Promise<number[]>;
}

/**
 * Watches the page's refresh-token grants: on the wire, and — to know *when* on the page's clock they were sent —
 * through a pass-through wrapper around `window.fetch` installed before any page script (the request itself is
 * untouched and goes to localbase).
 */
async function watchRefreshes(page: Page): Promise<RefreshLog> {
  const requests: string[] = [];
  const isRefresh = (raw: string): boolean => {
    const url = new URL(raw, 'http://x');
    return url.pathname === '/auth/v1/token' && url.searchParams.get('grant_type') === 'refresh_token';
  };
  page.on('request', (request) => {
    if (request.method() === 'POST' && isRefresh(request.url())) requests.push(request.url());
  });
  await page.addInitScript(() => {
    const times: number[] = [];
    (window as unknown as { __refreshTimes: number[] }).__refreshTimes = times;
    const original = window.fetch.bind(window);
    window.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const raw = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const url = new URL(raw, location.href);
      if (url.pathname === '/auth/v1/token' && url.searchParams.get('grant_type') === 'refresh_token') times.push(Date.now());
      return original(input, init);
    };
  });
  return {
    requests,
    pageTimes: () => page.evaluate(() => (window as unknown as { __refreshTimes: number[] }).__refreshTimes.slice()),
  };
}

/**
 * What the browser does when the user switches tabs or minimises the window: `document.visibilityState` changes
 * and a `visibilitychange` event (which bubbles from document to window, where the auth client listens) fires.
 */
async function setVisibility(page: Page, state: 'hidden' | 'visible'): Promise<void> {
  await page.evaluate((next) => {
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => next });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => next === 'hidden' });
    document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
  }, state);
}

/** Milliseconds from the page's (fake) now to the access token's expiry. */
async function msLeft(page: Page, session: CookieSession): Promise<number> {
  const now = await page.evaluate(() => Date.now());
  return session.expiresAt * 1000 - now;
}

/** Moves the page's clock so that `leftMs` remain before the session's access token expires. */
async function jumpToBeforeExpiry(page: Page, session: CookieSession, leftMs: number): Promise<void> {
  const left = await msLeft(page, session);
  expect(left, 'the token is not that close to expiry yet').toBeGreaterThan(leftMs);
  await page.clock.fastForward(Math.round(left - leftMs));
}

/** The account page with the user in it: the server verified the session in the cookie. */
async function expectSignedIn(page: Page, email: string): Promise<void> {
  await gotoHydrated(page, '/settings/account');
  expect(new URL(page.url()).pathname).toBe('/settings/account');
  await page.getByText(`You sign in with ${email}`).waitFor({ timeout: 15_000 });
  await page.getByRole('button', { name: /^Account: / }).waitFor();
  // The auth client is fetched after hydration, when the browser is idle; let it load and start its checks.
  await page.waitForLoadState('networkidle');
}

/**
 * Runs the page's timers one 30-second check at a time (each window holds exactly one check) until a refresh is
 * sent, at most `maxChecks` windows; then the page's clock is put back to real time (see below) and the time
 * left on the old token when the page sent the refresh is returned.
 */
async function checkUntilRefresh(page: Page, log: RefreshLog, token: CookieSession, maxChecks: number): Promise<number> {
  const before = log.requests.length;
  const timesBefore = (await log.pageTimes()).length;
  for (let i = 0; i < maxChecks && log.requests.length === before; i++) {
    await page.clock.runFor(TICK_MS);
    await sleep(800);
  }
  await expect.poll(() => log.requests.length, { timeout: 10_000 }).toBeGreaterThan(before);
  // The page's clock is now ~an hour ahead of the auth server's, so the token the server just issued looks
  // almost expired to the page and would be refreshed again at the next check; real time makes it look as fresh
  // as it is.
  await page.clock.setSystemTime(Date.now());
  const sentAt = (await log.pageTimes())[timesBefore];
  expect(sentAt, 'the page recorded when it sent the refresh').toBeDefined();
  return token.expiresAt * 1000 - (sentAt as number);
}

describe('automatic session refresh', () => {
  test('a check every 30 s refreshes at 3 checks left, the cookie changes and the session survives a reload; hidden pages do not refresh, visible again they do', { timeout: 150_000 }, async () => {
    const context = await fixture.newContext();
    const page = await context.newPage();
    await page.clock.install(); // fake timers and Date from the first document on; time still flows
    const log = await watchRefreshes(page);
    const email = uniqueEmail('refresh');
    await signUpViaUI(page, email);
    await expectSignedIn(page, email);
    const signInRefreshes = log.requests.length; // none expected: sign-up and page loads need no refresh
    expect(signInRefreshes).toBe(0);

    // (a) Near expiry. From 200 s left (6 checks) the page's timers run one check at a time: the checks with 4
    // or more left do nothing, the first with 3 or fewer (under 120 s, so between 90 and 120 s) refreshes.
    const first = await cookieSession(context);
    expect(await msLeft(page, first)).toBeGreaterThan(50 * 60_000); // localbase's default 3600 s tokens
    await jumpToBeforeExpiry(page, first, 200_000);
    const leftAtRefresh = await checkUntilRefresh(page, log, first, 6);
    expect(leftAtRefresh, 'refreshed at 3 checks left, not earlier').toBeLessThan(120_000);
    expect(leftAtRefresh, 'refreshed at the first check with 3 left, not later').toBeGreaterThanOrEqual(88_000);
    expect(log.requests).toHaveLength(1);
    await expect.poll(async () => (await cookieSession(context)).raw, { timeout: 10_000 }).not.toBe(first.raw);
    const second = await cookieSession(context);
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(second.expiresAt).toBeGreaterThan(first.expiresAt);
    // A reload: the server accepts the new cookie (the page renders signed in, tRPC answers as the user).
    await expectSignedIn(page, email);
    expect((await context.request.get('/api/trpc/auth.me')).status()).toBe(200);
    expect(log.requests).toHaveLength(1);

    // (b) Hidden: jump to 200 s before expiry and run 5 minutes of timers, well past the expiry — ten checks
    // would have been due. None runs: nothing is refreshed, the cookie stays as it was.
    const beforeHidden = await cookieSession(context);
    await setVisibility(page, 'hidden');
    await jumpToBeforeExpiry(page, beforeHidden, 200_000);
    await page.clock.runFor(10 * TICK_MS);
    expect(await msLeft(page, beforeHidden), 'the page clock is past the expiry').toBeLessThan(0);
    await sleep(1_500);
    expect(log.requests, 'no refresh while hidden').toHaveLength(1);
    expect((await cookieSession(context)).raw).toBe(beforeHidden.raw);

    // (c) Visible again: the expired token is refreshed at once, with no clock movement …
    await setVisibility(page, 'visible');
    await expect.poll(() => log.requests.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    await page.clock.setSystemTime(Date.now()); // page clock back to real time (as in checkUntilRefresh)
    await expect.poll(async () => (await cookieSession(context)).raw, { timeout: 10_000 }).not.toBe(beforeHidden.raw);
    await sleep(1_000);
    const afterVisible = await cookieSession(context);
    const settled = log.requests.length;
    // … after which checks with plenty of time left do nothing (no refresh loop) …
    await page.clock.runFor(4 * TICK_MS);
    await sleep(1_000);
    expect(log.requests, 'no refresh with an hour left').toHaveLength(settled);
    // … and near the new expiry the 30-second checks refresh again, without a reload.
    await jumpToBeforeExpiry(page, afterVisible, 200_000);
    const leftAgain = await checkUntilRefresh(page, log, afterVisible, 6);
    expect(leftAgain).toBeLessThan(120_000);
    expect(leftAgain).toBeGreaterThanOrEqual(88_000);
    expect(log.requests).toHaveLength(settled + 1);
    await expect.poll(async () => (await cookieSession(context)).raw, { timeout: 10_000 }).not.toBe(afterVisible.raw);

    await expectSignedIn(page, email);
  });
});
