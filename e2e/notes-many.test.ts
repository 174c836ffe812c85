// The notes list as a heavy user on a phone sees it: thousands of notes (three-digit page numbers) and long searches
// at 340 px (the spec's 2xs breakpoint) with touch, and search links the server refuses.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { useBrowser } from './browser.ts';
import { listSettled, numberedNotes, seedNotes, signedInUser } from './notes-helpers.ts';

const fixture = useBrowser();

/** A phone at the spec's smallest breakpoint (2xs, 340 px), with touch. */
const PHONE = { viewport: { width: 340, height: 740 }, isMobile: true, hasTouch: true };

/** How far the page is wider than the screen (a phone then scrolls sideways or zooms out), in px. */
const sidewaysOverflow = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** Seeds many notes in batches of 1,000 (one request each). */
async function seedMany(userId: string, count: number): Promise<void> {
  const notes = numberedNotes(count);
  for (let at = 0; at < notes.length; at += 1000) await seedNotes(userId, notes.slice(at, at + 1000));
}

describe('thousands of notes on a phone', () => {
  test('at 340 px with 150 pages, the page buttons of a middle page fit the screen: Next is on screen and works', async () => {
    const { page, id } = await signedInUser(fixture, PHONE);
    await seedMany(id, 3000);
    await page.goto('/?page=75');
    await listSettled(page);
    await page.getByRole('navigation', { name: 'Pages' }).scrollIntoViewIfNeeded();
    const next = page.getByRole('button', { name: 'Next page' });
    const box = await next.boundingBox();
    const width = await page.evaluate(() => document.documentElement.clientWidth);
    expect(box, 'Next page has a box').not.toBeNull();
    expect(box!.x + box!.width, 'Next page ends inside the 340 px screen').toBeLessThanOrEqual(width);
    expect(await sidewaysOverflow(page), 'no sideways scroll').toBeLessThanOrEqual(0);
    await next.tap();
    await page.waitForURL((url) => url.searchParams.get('page') === '76');
    await listSettled(page);
    expect(await page.getByTestId('page-range').innerText()).toBe('1,501–1,520 of 3,000');
  });
});

describe('long searches', () => {
  test('at 340 px the search box has room for a search: "groceries list" fits without scrolling inside the box', async () => {
    const { page } = await signedInUser(fixture, PHONE);
    const box = page.getByRole('searchbox', { name: 'Search notes by title' });
    await box.tap();
    await page.keyboard.type('groceries list');
    const fits = await box.evaluate((input) => input.scrollWidth <= input.clientWidth);
    expect(fits, 'the typed search is all visible').toBe(true);
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
  });


  test('a long search without spaces wraps: the count line and the empty state stay inside a 340 px screen', async () => {
    const long = 'x'.repeat(120);
    const { page, id } = await signedInUser(fixture, PHONE);
    await seedNotes(id, [{ title: long }, { title: 'Other' }]);

    await page.goto(`/?q=${long}`);
    await listSettled(page);
    await expect.poll(() => page.getByTestId('note-row').count()).toBe(1);
    expect(await sidewaysOverflow(page), 'count line inside the screen').toBeLessThanOrEqual(0);

    const none = 'y'.repeat(200);
    await page.goto(`/?q=${none}`);
    await page.getByRole('heading', { name: `No notes match “${none}”` }).waitFor();
    expect(await sidewaysOverflow(page), 'empty state inside the screen').toBeLessThanOrEqual(0);
  });

  test('a search link the server refuses says why in words, never the raw validation issues', async () => {
    const { page } = await signedInUser(fixture);
    // A NUL no database stores, and a link longer than the 200 characters a search keeps, cut inside an emoji.
    for (const q of ['%00', `${'a'.repeat(199)}${encodeURIComponent('🎉 and more')}`]) {
      await page.goto(`/?q=${q}`);
      const alert = page.getByRole('alert').filter({ hasText: 'Your notes could not be loaded' });
      await alert.waitFor({ timeout: 30_000 });
      const text = await alert.innerText();
      expect(text).toContain('The text contains a character that cannot be stored');
      expect(text, 'no JSON of validation issues').not.toMatch(/[[{]\s*"|"code"|"path"/);
    }
  });
});
