// The notes list painted by the server (ADR 039): a cold `/` signed in (or as a guest) carries the first page of notes
// in its HTML, for the list state in the URL, and the browser hydrates it without asking for it again; the query cache
// still belongs to one user; the lab benchmark's floor page is not reachable without its server switch.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { baseURL, gotoHydrated, sleep, useBrowser } from './browser.ts';
import { signInViaUI } from './auth-helpers.ts';
import { listedTitles, listSettled, numberedNotes, pageRangeText, seedNotes, signedInUser } from './notes-helpers.ts';

const fixture = useBrowser();

/** Every notes.list call the page sends to the API from now on. */
function recordListRequests(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (request) => {
    if (request.url().includes('/api/trpc/') && request.url().includes('notes.list')) urls.push(request.url());
  });
  return urls;
}

describe('the notes list from the server', () => {
  test('a cold / signed in has the notes of the URL’s list state in its HTML and asks the API for nothing after load', async () => {
    const { page, id } = await signedInUser(fixture);
    await seedNotes(id, numberedNotes(25));
    const path = '/?sort=title&dir=desc&page=2';
    // Title descending: Note 25 … Note 06 on page 1, Note 05 … Note 01 on page 2.
    const expected = ['Note 05', 'Note 04', 'Note 03', 'Note 02', 'Note 01'];

    // The server's HTML (same cookies): the rows are there, no skeleton.
    const html = await (await page.request.get(`${baseURL}${path}`)).text();
    for (const title of expected) expect(html).toContain(title);
    expect(html).not.toContain('Note 06');
    expect(html).not.toContain('notes-skeleton');
    expect(html).toContain('21–25 of 25');

    // A cold load in a new page of a new context with the same session: no notes.list request, during or after load.
    const context = await fixture.newContext();
    await context.addCookies(await page.context().cookies());
    const cold = await context.newPage();
    const requests = recordListRequests(cold);
    await gotoHydrated(cold, path);
    await sleep(1500); // a refetch on mount or in an effect would have gone out by now
    expect(await listedTitles(cold)).toEqual(expected);
    expect(await pageRangeText(cold)).toBe('21–25 of 25');
    expect(await cold.getByTestId('notes-skeleton').count()).toBe(0);
    expect(requests).toEqual([]);

    // The list still follows the user: another page of it is one request.
    await cold.getByRole('button', { name: 'Page 1', exact: true }).click();
    await expect.poll(() => listedTitles(cold)).toEqual(['Note 25', 'Note 24', 'Note 23', 'Note 22', 'Note 21', 'Note 20', 'Note 19', 'Note 18', 'Note 17', 'Note 16', 'Note 15', 'Note 14', 'Note 13', 'Note 12', 'Note 11', 'Note 10', 'Note 09', 'Note 08', 'Note 07', 'Note 06']);
    expect(requests).toHaveLength(1);
  });

  test('a guest’s / comes from the server too', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page, '/');
    await page.getByRole('button', { name: 'Try it without an account' }).click();
    await page.getByRole('button', { name: 'Account: Guest' }).waitFor({ timeout: 20_000 });
    const me = await page.request.get(`${baseURL}/api/trpc/auth.me`);
    const { id } = ((await me.json()) as { result: { data: { json: { id: string } } } }).result.data.json;
    await seedNotes(id, numberedNotes(3));

    const html = await (await page.request.get(`${baseURL}/`)).text();
    for (const title of ['Note 03', 'Note 02', 'Note 01']) expect(html).toContain(title);
    const requests = recordListRequests(page);
    await gotoHydrated(page, '/');
    await sleep(1000);
    expect(await listedTitles(page)).toEqual(['Note 03', 'Note 02', 'Note 01']);
    expect(requests).toEqual([]);
  });

  test('signing out and in as another user in the same tab shows only the second user’s notes', async () => {
    const first = await signedInUser(fixture);
    await seedNotes(first.id, [{ title: 'First user’s secret' }]);
    const { page } = first;
    await gotoHydrated(page, '/');
    expect(await listedTitles(page)).toEqual(['First user’s secret']);

    const second = await signedInUser(fixture);
    await seedNotes(second.id, [{ title: 'Second user’s note' }]);
    await second.page.context().close();

    await page.getByRole('button', { name: /^Account: / }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    await signInViaUI(page, second.email);
    await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
    await listSettled(page);
    expect(await listedTitles(page)).toEqual(['Second user’s note']);
  });

  test('the lab benchmark’s floor page answers 404 on a server started without FOYER_LAB_FLOOR', async () => {
    const page = await fixture.newPage();
    const response = await page.goto('/lab-floor');
    expect(response?.status()).toBe(404);
    expect(await page.getByRole('heading', { name: 'Page not found' }).isVisible()).toBe(true);
  });
});
