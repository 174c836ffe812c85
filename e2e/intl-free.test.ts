// The pages a visitor opens first never start the browser's internationalisation library (issue 13, ADR 058).
// Chromium loads ICU's locale data on the page's first call of any `Intl` formatter or `toLocale…String`/
// `localeCompare`: 50–90 ms of main thread on this machine (≈ 4 × that at the lab's 4× CPU throttle), one task. The
// notes' dates and counts are therefore written out in English (features/notes/format.ts) instead of through `Intl`.
// This test wraps every ICU entry point before the page's first script and expects no call on the sign-in page,
// the notes list (with every kind of date it shows), a note's page and the create modal (prefetched, then opened).
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { gotoHydrated, sleep, useBrowser } from './browser.ts';
import { listSettled, seedNotes, signedInUser } from './notes-helpers.ts';

const fixture = useBrowser();

/** Runs in the page before its own scripts: records each call of an ICU-backed API with the caller's stack line. */
function watchIntl(): void {
  const calls: string[] = [];
  (window as unknown as { __intlCalls: string[] }).__intlCalls = calls;
  const note = (name: string) => calls.push(`${name} ${(new Error().stack ?? '').split('\n')[3]?.trim() ?? ''}`);
  const intl = Intl as unknown as Record<string, unknown>;
  for (const name of ['DateTimeFormat', 'NumberFormat', 'RelativeTimeFormat', 'Collator', 'PluralRules', 'ListFormat', 'Segmenter', 'DisplayNames']) {
    const original = intl[name];
    if (typeof original !== 'function') continue;
    intl[name] = new Proxy(original, {
      construct(target, args, newTarget) {
        note(`new Intl.${name}`);
        return Reflect.construct(target, args, newTarget) as object;
      },
      apply(target, self, args) {
        note(`Intl.${name}`);
        return Reflect.apply(target, self, args) as unknown;
      },
    });
  }
  const methods: [object, string, string[]][] = [
    [Number.prototype, 'Number', ['toLocaleString']],
    [BigInt.prototype, 'BigInt', ['toLocaleString']],
    [Array.prototype, 'Array', ['toLocaleString']],
    [Date.prototype, 'Date', ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']],
    [String.prototype, 'String', ['localeCompare']],
  ];
  for (const [prototype, label, names] of methods) {
    for (const name of names) {
      const original = (prototype as Record<string, (...args: unknown[]) => unknown>)[name];
      if (!original) continue;
      Object.defineProperty(prototype, name, {
        configurable: true,
        writable: true,
        value(this: unknown, ...args: unknown[]) {
          note(`${label}.prototype.${name}`);
          return original.apply(this, args);
        },
      });
    }
  }
}

const intlCalls = (page: Page): Promise<string[]> => page.evaluate(() => (window as unknown as { __intlCalls: string[] }).__intlCalls);

/** Past `load`, the idle prefetches (the create modal's chunk, realtime-js) and their evaluation. */
async function settle(page: Page): Promise<void> {
  await page.waitForLoadState('load');
  await sleep(4000);
  await page.waitForLoadState('networkidle');
}

describe('no Intl on the first pages', () => {
  test('the sign-in page', async () => {
    const page = await fixture.newPage();
    await page.addInitScript(watchIntl);
    await gotoHydrated(page, '/sign-in');
    await settle(page);
    expect(await intlCalls(page)).toEqual([]);
  });

  test('the notes list with every kind of date, a note, and the create modal', async () => {
    const { page: first, id } = await signedInUser(fixture);
    const now = Date.now();
    const ago = (ms: number) => new Date(now - ms).toISOString();
    const MINUTE = 60_000;
    const thisYear = new Date(now).getFullYear();
    // One note per way a date is shown (created when last edited: the row's two dates read the same).
    const at = (title: string, iso: string) => ({ title, created_at: iso, updated_at: iso });
    const [justNow] = await seedNotes(id, [
      at('Edited just now', ago(20_000)),
      at('Edited minutes ago', ago(5 * MINUTE + 10_000)),
      at('Edited hours ago', ago(3 * 60 * MINUTE + 10_000)),
      at('Edited yesterday', ago(25 * 60 * MINUTE)),
      at('Edited days ago', ago(3 * 24 * 60 * MINUTE)),
      at('Edited last year', `${thisYear - 1}-03-04T12:00:00Z`),
    ]);
    const page = await first.context().newPage();
    await page.addInitScript(watchIntl);
    await gotoHydrated(page, '/');
    await listSettled(page);
    const when = (title: string) => page.getByTestId('note-row').filter({ hasText: title }).locator('time').first().innerText();
    expect(await when('Edited just now')).toBe('just now');
    expect(await when('Edited minutes ago')).toBe('5 minutes ago');
    expect(await when('Edited hours ago')).toBe('3 hours ago');
    expect(await when('Edited yesterday')).toBe('yesterday');
    expect(await when('Edited days ago')).toBe('3 days ago');
    expect(await when('Edited last year')).toBe(`Mar 4, ${thisYear - 1}`);
    // The exact time, as a tooltip: "Mar 4, 2025, 12:00 PM" in the browser's zone (UTC here).
    const title = await page.getByTestId('note-row').filter({ hasText: 'Edited last year' }).locator('time').first().getAttribute('title');
    expect(title).toMatch(new RegExp(`^Mar 4, ${thisYear - 1}, \\d{1,2}:00 [AP]M$`));
    expect(await page.getByText('6 notes', { exact: true }).isVisible()).toBe(true);
    await settle(page);
    // The create modal (its chunk was prefetched while idle): the character count of its body field.
    await page.getByRole('banner').getByRole('button', { name: 'New', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'New note' });
    await dialog.getByLabel('Note', { exact: true }).fill('Twelve chars');
    await expect.poll(() => dialog.innerText()).toMatch(/12 \/ 20,000/);
    await page.keyboard.press('Escape');
    expect(await intlCalls(page), 'the list and the create modal').toEqual([]);
    // A note's page: its created and edited times.
    await gotoHydrated(page, `/notes/${justNow?.id ?? ''}`);
    await expect.poll(() => page.getByText(/^Created /).innerText()).toMatch(/^Created \w{3} \d{1,2}, \d{4}, \d{1,2}:\d{2} [AP]M · Last edited (just now|1 minute ago)$/);
    expect(await intlCalls(page), "a note's page").toEqual([]);
  });
});
