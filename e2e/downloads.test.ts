// What the browser downloads (issue 13, ADR 038): a signed-out visitor gets neither the create modal nor the
// API client code after `load`, the auth client is auth-js alone (no PostgREST, Storage, Realtime or Functions
// client), and what follows `load` stays within 40 kB gz; a signed-in user gets the create modal ahead of use.
// Every script starts with V8's compile hint (ADR 055), put there after minification, and Next's client entry hydrates
// the page in a transition (ADR 057).
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { sleep, useBrowser } from './browser.ts';
import { signedInUser } from './notes-helpers.ts';

const fixture = useBrowser();

interface Script {
  url: string;
  afterLoad: boolean;
  body: string;
}

/** Records every script the page fetches, and whether its request started after the page's `load` event. */
function recordScripts(page: Page): Script[] {
  const scripts: Script[] = [];
  let loaded = false;
  page.on('load', () => {
    loaded = true;
  });
  page.on('request', (request) => {
    if (request.resourceType() !== 'script') return;
    const entry: Script = { url: request.url(), afterLoad: loaded, body: '' };
    scripts.push(entry);
    void request
      .response()
      .then((response) => response?.text())
      .then((text) => {
        entry.body = text ?? '';
      })
      .catch(() => undefined);
  });
  return scripts;
}

const gz = (scripts: Script[]): number => scripts.reduce((sum, s) => sum + gzipSync(s.body, { level: 6 }).length, 0);
/** The create modal's chunk: the only code with its dialog title. */
const isCreateModal = (s: Script): boolean => s.body.includes('New note');
/**
 * supabase-js's full client: it builds the Edge Functions URL, which neither auth-js, realtime-js nor the app's own
 * code does (the app names `realtime/v1` for its live notes and `storage/v1` for pictures' public URLs).
 */
const isSupabaseDataClient = (s: Script): boolean => /functions\/v1/.test(s.body);
/** realtime-js (Phoenix channels: its join event), loaded after `load` by the pages with live notes (ADR 044). */
const isRealtimeClient = (s: Script): boolean => s.body.includes('phx_join');
/** tRPC's client (httpBatchLink sends `?batch=1`). */
const isApiClient = (s: Script): boolean => s.body.includes('batch=1');

/** V8's explicit compile hint (apps/web/src/lib/compile-hints.ts): a chunk's first line. */
const COMPILE_HINT = '//# allFunctionsCalledOnLoad\n';
/** The scripts that lack the compile hint (their URLs). */
const withoutHint = (scripts: Script[]): string[] => scripts.filter((s) => !s.body.startsWith(COMPILE_HINT)).map((s) => s.url);

/**
 * Next's client entry (the `main` chunk) with the app's react-dom/client, whose hydrateRoot runs in a transition so
 * React hydrates in time slices (apps/web/src/lib/hydrate-in-transition.ts, ADR 057): its error message is in it.
 */
const hydratesInTransition = (s: Script): boolean => s.body.includes('hydrateRoot did not return a root');

/** Waits past `load` and the idle prefetches (requestIdleCallback timeouts are at most 3 s). */
async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('load');
  await sleep(4000);
  await page.waitForLoadState('networkidle');
}

describe('downloads', () => {
  for (const path of ['/sign-in', '/sign-up', '/forgot-password']) {
    test(`signed out, ${path} fetches after load only the auth client (auth-js alone) and the toasts: ≤ 40 kB gz`, async () => {
      const page = await fixture.newPage();
      const scripts = recordScripts(page);
      await page.goto(path);
      await settle(page);
      const after = scripts.filter((s) => s.afterLoad);
      expect(scripts.filter(isCreateModal).map((s) => s.url), 'the create modal is not for signed-out visitors').toEqual([]);
      expect(scripts.filter(isSupabaseDataClient).map((s) => s.url), 'only auth-js, not supabase-js').toEqual([]);
      expect(scripts.filter(isRealtimeClient).map((s) => s.url), 'no live updates signed out').toEqual([]);
      // No page here calls the API, and `/` (which does) is not prefetched for signed-out visitors.
      expect(scripts.filter(isApiClient).map((s) => s.url), 'no API client').toEqual([]);
      // The auth client is there (the form and the session need it) …
      expect(after.some((s) => s.body.includes('grant_type=password'))).toBe(true);
      // … and everything after load fits the budget.
      console.info(`${path} signed out: ${gz(after)} B gz of script after load (${after.length} files)`);
      expect(gz(after), after.map((s) => `${s.url} ${gz([s])} B gz`).join('\n')).toBeLessThanOrEqual(40_000);
      expect(withoutHint(scripts), 'compiled while they download').toEqual([]);
      const main = scripts.filter((s) => /\/_next\/static\/chunks\/main-[^/]+\.js$/.test(new URL(s.url).pathname));
      expect(main.length, "Next's client entry").toBe(1);
      expect(main.every(hydratesInTransition), 'the page hydrates in a transition (time-sliced)').toBe(true);
    });
  }

  test('signed in, the create modal code arrives before it is opened, realtime-js after load, and still no supabase-js data client', async () => {
    const { page: first } = await signedInUser(fixture);
    // A new tab of the signed-in browser: every script it fetches is recorded from the start.
    const page = await first.context().newPage();
    const scripts = recordScripts(page);
    await page.goto('/');
    await settle(page);
    expect(scripts.filter(isCreateModal).length, 'prefetched while idle').toBeGreaterThan(0);
    expect(scripts.filter(isSupabaseDataClient).map((s) => s.url)).toEqual([]);
    // Live notes: realtime-js alone, and only after the page is up.
    const realtime = scripts.filter(isRealtimeClient);
    expect(realtime.length, 'the live list loads realtime-js').toBeGreaterThan(0);
    expect(realtime.filter((s) => !s.afterLoad).map((s) => s.url), 'not in first-load JS').toEqual([]);
    expect(scripts.length).toBeGreaterThan(5);
    expect(withoutHint(scripts), 'compiled while they download').toEqual([]);
  });
});
