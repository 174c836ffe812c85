// Create modal: opened by the "New" button or the `n` key (signed in), closed by Escape or "Close", focus moves in
// and returns to the opener. Signed out there is nothing to create: no "New", and `n` does nothing. The note form
// itself is tested in notes.test.ts.
import type { Locator, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { gotoHydrated, sleep, useBrowser } from './browser.ts';
import { signInViaUI, uniqueEmail } from './auth-helpers.ts';
import { createUser, listedTitles, seedNotes, signedInUser } from './notes-helpers.ts';

const fixture = useBrowser();

const dialog = (page: Page): Locator => page.getByRole('dialog', { name: 'New note' });
const newButton = (page: Page): Locator => page.getByRole('banner').getByRole('button', { name: 'New', exact: true });

const focusInside = (locator: Locator): Promise<boolean> =>
  locator.evaluate((el) => document.activeElement !== null && document.activeElement !== document.body && el.contains(document.activeElement));
const isFocused = (locator: Locator): Promise<boolean> => locator.evaluate((el) => el === document.activeElement);

describe('create modal', () => {
  test('"New" opens a dialog named "Create" with focus inside; Escape closes it and focus returns to "New"', async () => {
    const { page } = await signedInUser(fixture);
    expect(await dialog(page).count()).toBe(0);
    expect(await newButton(page).getAttribute('aria-keyshortcuts')).toBe('N');

    await newButton(page).click();
    await dialog(page).waitFor({ state: 'visible', timeout: 5000 });
    await expect.poll(() => focusInside(dialog(page)), { timeout: 2000 }).toBe(true);
    expect(await dialog(page).getByLabel('Title', { exact: true }).evaluate((el) => el === document.activeElement)).toBe(true);

    await page.keyboard.press('Escape');
    await dialog(page).waitFor({ state: 'hidden', timeout: 3000 });
    await expect.poll(() => isFocused(newButton(page)), { timeout: 2000 }).toBe(true);
  });

  test('a draft is its writer\'s: after a sign-out, the next user signing in in the same tab finds an empty form', async () => {
    const { page } = await signedInUser(fixture);
    await page.keyboard.press('n');
    await dialog(page).waitFor({ state: 'visible', timeout: 5000 });
    await dialog(page).getByLabel('Title', { exact: true }).fill('My private draft');
    await dialog(page).getByLabel('Note', { exact: true }).fill('Not for anyone else');
    await page.keyboard.press('Escape');
    await dialog(page).waitFor({ state: 'hidden', timeout: 3000 });
    // still the writer's while signed in: closing keeps it
    await newButton(page).click();
    expect(await dialog(page).getByLabel('Title', { exact: true }).inputValue()).toBe('My private draft');
    await page.keyboard.press('Escape');
    await dialog(page).waitFor({ state: 'hidden', timeout: 3000 });

    await page.getByRole('button', { name: /^Account: / }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
    const next = uniqueEmail('next-user');
    await createUser(next);
    await signInViaUI(page, next);
    await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
    await newButton(page).click();
    await dialog(page).waitFor({ state: 'visible', timeout: 5000 });
    expect(await dialog(page).getByLabel('Title', { exact: true }).inputValue()).toBe('');
    expect(await dialog(page).getByLabel('Note', { exact: true }).inputValue()).toBe('');
  });

  test('the key n opens it and the "Close" button closes it', async () => {
    const { page } = await signedInUser(fixture);
    await page.keyboard.press('n');
    await dialog(page).waitFor({ state: 'visible', timeout: 5000 });
    await expect.poll(() => focusInside(dialog(page)), { timeout: 2000 }).toBe(true);

    await dialog(page).getByRole('button', { name: 'Close', exact: true }).click();
    await dialog(page).waitFor({ state: 'hidden', timeout: 3000 });

    // The same key opens it again after closing (a toggle, not a one-shot).
    await page.keyboard.press('n');
    await dialog(page).waitFor({ state: 'visible', timeout: 5000 });
  });

  test('opened with the keyboard from the "New" button, it returns focus there on close', async () => {
    const { page } = await signedInUser(fixture);
    await newButton(page).focus();
    await page.keyboard.press('Enter');
    await dialog(page).waitFor({ state: 'visible', timeout: 5000 });
    await dialog(page).getByRole('button', { name: 'Close', exact: true }).click();
    await dialog(page).waitFor({ state: 'hidden', timeout: 3000 });
    await expect.poll(() => isFocused(newButton(page)), { timeout: 2000 }).toBe(true);
  });

  test('a create the server never answered, sent with Enter: focus is back in the title field, and Enter again creates', async () => {
    const { page } = await signedInUser(fixture);
    // The first create fails as a dropped connection does (after a moment: the fields are disabled meanwhile).
    let creates = 0;
    await page.route(/\/api\/trpc\/notes\.create/, async (route) => {
      creates += 1;
      if (creates > 1) return route.continue();
      await sleep(300);
      return route.abort('connectionreset');
    });
    await page.keyboard.press('n');
    await dialog(page).waitFor({ state: 'visible', timeout: 5000 });
    const title = dialog(page).getByLabel('Title', { exact: true });
    await expect.poll(() => isFocused(title), { timeout: 2000 }).toBe(true);
    await page.keyboard.type('Typed, then Enter');
    await page.keyboard.press('Enter');
    await page.getByTestId('toast').filter({ hasText: 'The note was not saved' }).waitFor({ timeout: 10_000 });
    // Not dropped to <body> (the fields were disabled while the create ran): the keyboard user is where they were.
    await expect.poll(() => isFocused(title), { timeout: 2000 }).toBe(true);

    await page.keyboard.press('Enter');
    await dialog(page).waitFor({ state: 'hidden', timeout: 10_000 });
    expect(creates).toBe(2);
    await expect.poll(() => listedTitles(page), { timeout: 10_000 }).toEqual(['Typed, then Enter']);
  });

  test('closed with Escape while its create is on the way, then opened again: the form says "Creating…" and cannot send the note twice', async () => {
    const { page } = await signedInUser(fixture);
    let creates = 0;
    // The create is held until the checks below are done (a fixed delay raced them on a slow machine).
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/api\/trpc\/notes\.create/, async (route) => {
      creates += 1;
      await held;
      return route.continue();
    });
    await page.keyboard.press('n');
    await dialog(page).waitFor({ state: 'visible', timeout: 5000 });
    await page.keyboard.type('Sent once');
    await page.keyboard.press('Enter');
    await dialog(page).getByRole('button', { name: 'Creating…' }).waitFor();
    // Escape still closes the modal: the note goes on its way, and its toast says when it is created.
    await page.keyboard.press('Escape');
    await dialog(page).waitFor({ state: 'hidden', timeout: 3000 });
    await newButton(page).click();
    await dialog(page).waitFor({ state: 'visible', timeout: 5000 });
    expect(await dialog(page).getByLabel('Title', { exact: true }).inputValue()).toBe('Sent once');
    expect(await dialog(page).getByRole('button', { name: 'Creating…' }).isDisabled()).toBe(true);
    expect(await dialog(page).getByLabel('Title', { exact: true }).isDisabled()).toBe(true);
    await page.keyboard.press('Enter');
    await sleep(300);
    release();
    await page.getByTestId('toast').filter({ hasText: 'Note created' }).waitFor({ timeout: 10_000 });
    await dialog(page).waitFor({ state: 'hidden', timeout: 3000 });
    await sleep(1000);
    expect(creates).toBe(1);
    await expect.poll(() => listedTitles(page), { timeout: 10_000 }).toEqual(['Sent once']);
  });

  test('Ctrl+S with the modal open over an edited note creates the modal\'s note and leaves the note behind unsaved', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Behind the modal', body: 'stored body' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByLabel('Note', { exact: true }).fill('edited, not to be saved by the modal');
    await newButton(page).click();
    await dialog(page).waitFor({ state: 'visible', timeout: 5000 });
    await page.keyboard.type('Made with Ctrl+S');
    const requests: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/trpc/')) requests.push(new URL(request.url()).pathname);
    });
    await page.keyboard.press('Control+s');
    await page.getByTestId('toast').filter({ hasText: 'Note created' }).waitFor({ timeout: 10_000 });
    await dialog(page).waitFor({ state: 'hidden', timeout: 3000 });
    await sleep(500);
    // What the user saw (the modal) got the keys; the note behind was not saved under it.
    expect(requests.filter((path) => path.includes('notes.update'))).toEqual([]);
    expect(await page.getByTestId('toast').filter({ hasText: 'Saved' }).count()).toBe(0);
    expect(await page.getByText('Unsaved changes').isVisible()).toBe(true);
    expect(await page.getByRole('textbox', { name: 'Note', exact: true }).inputValue()).toBe('edited, not to be saved by the modal');
  });

  test('Ctrl+S while the note page\'s delete confirmation is open saves nothing behind it', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Under a confirmation', body: 'stored body' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByLabel('Note', { exact: true }).fill('edited');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this note?' });
    await confirm.waitFor();
    let updates = 0;
    page.on('request', (request) => {
      if (request.url().includes('notes.update')) updates += 1;
    });
    await page.keyboard.press('Control+s');
    await sleep(800);
    expect(updates).toBe(0);
    expect(await page.getByTestId('toast').filter({ hasText: 'Saved' }).count()).toBe(0);
    expect(await confirm.isVisible()).toBe(true);
  });

  test('typing n in a text field (the notes search) or with a modifier does not open it', async () => {
    const { page } = await signedInUser(fixture);
    const search = page.getByRole('searchbox', { name: 'Search notes by title' });
    await search.focus();
    await page.keyboard.type('notes n');
    expect(await search.inputValue()).toBe('notes n');
    await search.evaluate((el) => (el as HTMLInputElement).blur());
    await page.keyboard.press('Alt+n');
    await sleep(300);
    expect(await dialog(page).count()).toBe(0);
  });

  test('signed out there is no "New" button and n does nothing', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page);
    expect(await newButton(page).count()).toBe(0);
    await page.keyboard.press('n');
    await sleep(300);
    expect(await page.getByRole('dialog').count()).toBe(0);
  });
});
