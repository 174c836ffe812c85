// Live notes (issue 15, docs/decisions/044-live-notes.md), in Chromium against the production build and localbase's
// Realtime: two browser contexts signed in as one user see each other's creates, edits and deletes without a
// reload; an open note with unsaved edits says when it changed or went away elsewhere and loses nothing typed; a
// second user receives nothing of the first. Delivery time is the realtime bench's business (bench/), not a test's:
// the waits here only bound it generously for a loaded CI machine.
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { describeViolations, seriousViolations, signInViaUI, supabaseURL } from './auth-helpers.ts';
import { backendControllable, DEFAULT_SERVICE_ROLE_KEY, startBackend, stopBackend } from './backend-control.ts';
import { gotoHydrated, sleep, useBrowser } from './browser.ts';
import { listedTitles, listSettled, seedNotes, signedInUser } from './notes-helpers.ts';

const fixture = useBrowser();
const LIVE = { timeout: 8_000 };

const dialog = (page: Page) => page.getByRole('dialog', { name: 'New note' });
const newButton = (page: Page) => page.getByRole('banner').getByRole('button', { name: 'New', exact: true });
const toastWith = (page: Page, text: string) => page.getByTestId('toast').filter({ hasText: text });
const markDocument = (page: Page) => page.evaluate(() => Object.assign(window, { __noReload: true }));
const stillSameDocument = (page: Page) => page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload === true);

/** A second browser (own context, own cookies) signed in as the same user, on `/`. */
async function secondDevice(email: string): Promise<Page> {
  const page = await fixture.newPage();
  await gotoHydrated(page, '/sign-in');
  await signInViaUI(page, email);
  await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
  await listSettled(page);
  return page;
}

/** Changes a note as another device would, straight through the REST API (service key: no browser involved). */
async function changeNote(id: string, change: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${supabaseURL}/rest/v1/notes?id=eq.${id}`, {
    method: change.delete ? 'DELETE' : 'PATCH',
    headers: {
      apikey: DEFAULT_SERVICE_ROLE_KEY,
      authorization: `Bearer ${DEFAULT_SERVICE_ROLE_KEY}`,
      'content-type': 'application/json',
    },
    body: change.delete ? undefined : JSON.stringify({ ...change, updated_at: new Date().toISOString() }),
  });
  if (!response.ok) throw new Error(`changing note ${id} failed: HTTP ${response.status} ${await response.text()}`);
}

/** Patches a note's row as given (no new `updated_at`: a pin elsewhere leaves the edit time as it was). */
async function patchRow(id: string, patch: Record<string, unknown>): Promise<void> {
  const response = await fetch(`${supabaseURL}/rest/v1/notes?id=eq.${id}`, {
    method: 'PATCH',
    headers: { apikey: DEFAULT_SERVICE_ROLE_KEY, authorization: `Bearer ${DEFAULT_SERVICE_ROLE_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(patch),
  });
  if (!response.ok) throw new Error(`patching note ${id} failed: HTTP ${response.status} ${await response.text()}`);
}

/** Waits until the page's note subscription is joined (the realtime socket is open and the channel subscribed). */
async function liveOn(page: Page): Promise<void> {
  await page.locator('[data-testid="live-status"][data-live="on"]').waitFor({ state: 'attached', ...LIVE });
}

describe('the list follows changes made elsewhere', () => {
  test('create, edit, pin and delete in one browser appear in the other without a reload, once, with the total', async () => {
    const a = await signedInUser(fixture);
    const b = await secondDevice(a.email);
    await liveOn(a.page);
    await liveOn(b);
    await markDocument(b);

    // Create in A's modal: B lists it; A lists it once (its own change comes back too).
    await newButton(a.page).click();
    await dialog(a.page).waitFor();
    await dialog(a.page).getByLabel('Title', { exact: true }).fill('Made on the laptop');
    await dialog(a.page).getByRole('button', { name: 'Create note' }).click();
    await dialog(a.page).waitFor({ state: 'hidden' });
    await expect.poll(() => listedTitles(b), LIVE).toEqual(['Made on the laptop']);
    expect(await b.getByText('1 note', { exact: true }).isVisible()).toBe(true);
    await sleep(500);
    expect(await listedTitles(a.page)).toEqual(['Made on the laptop']);

    // Two more from "another device", last edited before it: they go below it, the total follows.
    const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    const [first, second] = await seedNotes(a.id, [
      { title: 'Older', created_at: ago(2), updated_at: ago(2) },
      { title: 'Newer', created_at: ago(1), updated_at: ago(1) },
    ]);
    await expect.poll(() => b.getByText('3 notes', { exact: true }).isVisible(), LIVE).toBe(true);
    await expect.poll(() => listedTitles(b), LIVE).toEqual(['Made on the laptop', 'Newer', 'Older']);

    // An edit moves a note to the top of "last edited"; a pin puts it first.
    await changeNote(first!.id, { title: 'Older, edited' });
    await expect.poll(() => listedTitles(b), LIVE).toEqual(['Older, edited', 'Made on the laptop', 'Newer']);
    await changeNote(second!.id, { pinned: true });
    await expect.poll(() => listedTitles(b), LIVE).toEqual(['Newer', 'Older, edited', 'Made on the laptop']);

    // A delete in A (note page, confirm) leaves B's list.
    await a.page.reload();
    await a.page.getByRole('link', { name: 'Made on the laptop' }).click();
    await a.page.getByRole('heading', { name: 'Made on the laptop', level: 1 }).waitFor();
    await a.page.getByRole('button', { name: 'Delete', exact: true }).click();
    await a.page.getByRole('dialog', { name: 'Delete this note?' }).getByRole('button', { name: 'Delete note' }).click();
    await expect.poll(() => listedTitles(b), LIVE).toEqual(['Newer', 'Older, edited']);
    expect(await b.getByText('2 notes', { exact: true }).isVisible()).toBe(true);
    expect(await stillSameDocument(b)).toBe(true);
  });

  test("a second user's list receives nothing of the first user's changes", async () => {
    const alice = await signedInUser(fixture);
    const aliceElsewhere = await secondDevice(alice.email);
    const bob = await signedInUser(fixture);
    await liveOn(aliceElsewhere);
    await liveOn(bob.page);
    const bobLists: string[] = [];
    bob.page.on('request', (request) => {
      if (request.url().includes('notes.list')) bobLists.push(request.url());
    });

    await seedNotes(alice.id, [{ title: 'Alice only' }]);
    await expect.poll(() => listedTitles(aliceElsewhere), LIVE).toEqual(['Alice only']);
    await sleep(1_000);
    expect(await listedTitles(bob.page)).toEqual([]);
    expect(bobLists).toEqual([]); // not even a refetch: no event reached Bob
  });
});

describe('an open note changed or deleted elsewhere', () => {
  test('without unsaved edits the page shows the new version; with them it says so and keeps every character', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Shopping', body: 'milk' }]);
    await page.goto(`/notes/${note!.id}`);
    await page.getByRole('heading', { name: 'Shopping', level: 1 }).waitFor();
    await liveOn(page);

    // Clean page: it simply follows.
    await changeNote(note!.id, { title: 'Shopping list', body: 'milk, eggs' });
    await page.getByRole('heading', { name: 'Shopping list', level: 1 }).waitFor(LIVE);
    expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('milk, eggs');
    expect(await page.getByTestId('note-elsewhere').count()).toBe(0);

    // Unsaved edits, then a change elsewhere: the notice, the typed text untouched.
    await page.getByLabel('Note', { exact: true }).fill('milk, eggs, bread — typed here');
    await changeNote(note!.id, { body: 'milk, eggs, butter — from the phone' });
    const notice = page.getByTestId('note-elsewhere');
    await notice.getByText('This note was changed in another tab or device').waitFor(LIVE);
    expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('milk, eggs, bread — typed here');
    const violations = await seriousViolations(page);
    expect(violations, describeViolations(violations)).toEqual([]);

    // Look at the other version; bring mine back from the toast.
    await notice.getByRole('button', { name: 'Show the other version' }).click();
    expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('milk, eggs, butter — from the phone');
    await toastWith(page, 'Showing the other version').getByRole('button', { name: 'Bring mine back' }).click();
    expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('milk, eggs, bread — typed here');

    // Another change elsewhere; keep mine and save: mine is stored.
    await changeNote(note!.id, { body: 'from the phone again' });
    await notice.getByText('This note was changed in another tab or device').waitFor(LIVE);
    await notice.getByRole('button', { name: 'Keep my changes' }).click();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await toastWith(page, 'Saved').waitFor();
    await page.reload();
    expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('milk, eggs, bread — typed here');
  });

  test('by keyboard, "Keep my changes" and "Show the other version" put focus in the note\'s text (the notice goes), not <body>', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Keys', body: 'one' }]);
    await page.goto(`/notes/${note!.id}`);
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    await liveOn(page);
    const notice = page.getByTestId('note-elsewhere');
    const focusedField = () => page.evaluate(() => (document.activeElement as HTMLTextAreaElement | null)?.name ?? document.activeElement?.tagName ?? null);
    for (const [answer, body] of [['Keep my changes', 'two'], ['Show the other version', 'three']] as const) {
      await page.getByLabel('Note', { exact: true }).fill(`typed before ${body}`);
      await changeNote(note!.id, { body });
      await notice.getByText('This note was changed in another tab or device').waitFor(LIVE);
      await notice.getByRole('button', { name: answer }).focus();
      await page.keyboard.press('Enter');
      await notice.waitFor({ state: 'detached' });
      await expect.poll(focusedField, { timeout: 3000 }).toBe('body');
    }
    expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('three');
  });

  test('the notice going by itself (the other version settles, or the note is deleted) while one of its buttons has focus puts focus in the note\'s text, not <body>', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Settles', body: 'one' }]);
    await page.goto(`/notes/${note!.id}`);
    await page.getByRole('heading', { name: 'Settles', level: 1 }).waitFor();
    await liveOn(page);
    const notice = page.getByTestId('note-elsewhere');
    const focusedField = () => page.evaluate(() => (document.activeElement as HTMLTextAreaElement | null)?.name ?? document.activeElement?.tagName ?? null);
    const field = page.getByLabel('Note', { exact: true });

    // The other device stores the very text typed here: nothing left to decide, the notice goes.
    await field.fill('the same words');
    await changeNote(note!.id, { body: 'two' });
    await notice.getByText('This note was changed in another tab or device').waitFor(LIVE);
    await notice.getByRole('button', { name: 'Keep my changes' }).focus();
    await changeNote(note!.id, { body: 'the same words' });
    await notice.waitFor({ state: 'detached', ...LIVE });
    await expect.poll(focusedField, { timeout: 3000 }).toBe('body');

    // Changed, then deleted elsewhere: the notice stays, but the button that had focus is gone.
    await field.fill('typed again');
    await changeNote(note!.id, { body: 'three' });
    await notice.getByText('This note was changed in another tab or device').waitFor(LIVE);
    await notice.getByRole('button', { name: 'Show the other version' }).focus();
    await changeNote(note!.id, { delete: true });
    await notice.getByText('This note was deleted in another tab or device').waitFor(LIVE);
    await expect.poll(focusedField, { timeout: 3000 }).toBe('body');
    expect(await field.inputValue()).toBe('typed again');
  });

  test('deleted elsewhere with unsaved edits: the page says so, saving is refused, and the text becomes a new note', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Doomed', body: 'draft' }]);
    await page.goto(`/notes/${note!.id}`);
    await page.getByRole('heading', { name: 'Doomed', level: 1 }).waitFor();
    await liveOn(page);
    await page.getByLabel('Title', { exact: true }).fill('Rescued');
    await page.getByLabel('Note', { exact: true }).fill('words worth keeping');

    await changeNote(note!.id, { delete: true });
    const notice = page.getByTestId('note-elsewhere');
    await notice.getByText('This note was deleted in another tab or device').waitFor(LIVE);
    await page.keyboard.press('Control+s');
    await toastWith(page, 'This note was deleted elsewhere').waitFor();

    await notice.getByRole('button', { name: 'Save as a new note' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/notes/') && !url.pathname.endsWith(note!.id), { timeout: 20_000 });
    await page.getByRole('heading', { name: 'Rescued', level: 1 }).waitFor();
    expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('words worth keeping');
  });

  test('by keyboard, "Save as a new note" keeps focus while it saves ("Saving…") and after a failure, so Enter tries again', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Gone', body: 'draft' }]);
    await page.goto(`/notes/${note!.id}`);
    await page.getByRole('heading', { name: 'Gone', level: 1 }).waitFor();
    await liveOn(page);
    await page.getByLabel('Note', { exact: true }).fill('keep these words');
    await changeNote(note!.id, { delete: true });
    const notice = page.getByTestId('note-elsewhere');
    await notice.getByText('This note was deleted in another tab or device').waitFor(LIVE);
    const focusedText = () => page.evaluate(() => (document.activeElement === document.body ? 'body' : (document.activeElement?.textContent ?? '')));

    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/api\/trpc\/notes\.create/, async (route) => {
      await held;
      await route.abort('connectionreset');
    });
    await notice.getByRole('button', { name: 'Save as a new note' }).focus();
    await page.keyboard.press('Enter');
    const saving = notice.getByRole('button', { name: 'Saving…' });
    await saving.waitFor();
    expect(await saving.getAttribute('aria-disabled')).toBe('true');
    expect(await focusedText()).toBe('Saving…');
    release();
    await toastWith(page, 'The note was not saved').waitFor();
    await notice.getByRole('button', { name: 'Save as a new note' }).waitFor();
    expect(await focusedText()).toBe('Save as a new note');

    await page.unroute(/\/api\/trpc\/notes\.create/);
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname.startsWith('/notes/') && !url.pathname.endsWith(note!.id), { timeout: 20_000 });
    expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('keep these words');
  });

  test('by keyboard, a note deleted elsewhere while Pin or Delete has focus leaves focus there (aria-disabled), not on <body>', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Pinned away', body: 'x' }]);
    await page.goto(`/notes/${note!.id}`);
    await page.getByRole('heading', { name: 'Pinned away', level: 1 }).waitFor();
    await liveOn(page);
    const focusedText = () => page.evaluate(() => (document.activeElement === document.body ? 'body' : (document.activeElement?.textContent ?? '')));
    const pin = page.getByRole('button', { name: 'Pin', exact: true });
    await pin.focus();
    await changeNote(note!.id, { delete: true });
    await page.getByTestId('note-elsewhere').getByText('This note was deleted in another tab or device').waitFor(LIVE);
    await sleep(300);
    expect(await focusedText()).toBe('Pin');
    expect(await pin.getAttribute('aria-disabled')).toBe('true');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await focusedText()).toBe('Delete');
    await page.keyboard.press('Enter');
    await sleep(300);
    expect(await page.getByRole('dialog', { name: 'Delete this note?' }).isVisible()).toBe(false);
    expect(await page.getByTestId('toast').count()).toBe(0);
  });
});

/** The note as stored, read with the service key. */
async function storedNote(id: string): Promise<{ title: string; body: string | null }> {
  const response = await fetch(`${supabaseURL}/rest/v1/notes?id=eq.${id}&select=title,body`, {
    headers: { apikey: DEFAULT_SERVICE_ROLE_KEY, authorization: `Bearer ${DEFAULT_SERVICE_ROLE_KEY}` },
  });
  const rows = (await response.json()) as { title: string; body: string | null }[];
  return rows[0]!;
}

describe('a save that would overwrite a version this page never saw', () => {
  test('hearing nothing live, B saves after A: refused, the notice with B\'s text kept, A\'s text stored; then B brings it back and saves', async () => {
    const a = await signedInUser(fixture);
    const [note] = await seedNotes(a.id, [{ title: 'Shared', body: 'first draft' }]);
    const b = await secondDevice(a.email);
    // B's realtime socket goes nowhere (a dead connection, a long delay): it hears of no change made elsewhere.
    await b.routeWebSocket(/realtime/, () => {});
    await gotoHydrated(b, `/notes/${note!.id}`);
    await gotoHydrated(a.page, `/notes/${note!.id}`);
    await liveOn(a.page);

    // A edits and saves.
    await a.page.getByLabel('Note', { exact: true }).fill('written on the laptop');
    await a.page.keyboard.press('Control+s');
    await toastWith(a.page, 'Saved').waitFor();
    expect((await storedNote(note!.id)).body).toBe('written on the laptop');

    // B, still on the first draft, edits and saves: the save is refused and says why; nothing B typed is lost.
    const bBody = b.getByLabel('Note', { exact: true });
    await bBody.fill('written on the phone');
    await b.getByRole('button', { name: 'Save changes' }).click();
    const notice = b.getByTestId('note-elsewhere');
    await notice.getByText('This note was changed in another tab or device').waitFor(LIVE);
    expect(await bBody.inputValue()).toBe('written on the phone');
    expect(await b.getByText('Unsaved changes · Ctrl+S saves').isVisible()).toBe(true);
    expect(await toastWith(b, 'Saved').count()).toBe(0);
    expect((await storedNote(note!.id)).body).toBe('written on the laptop');

    // B looks at A's version, brings its own back and saves: now it replaces the version B has seen.
    await notice.getByRole('button', { name: 'Show the other version' }).click();
    expect(await bBody.inputValue()).toBe('written on the laptop');
    await toastWith(b, 'Showing the other version').getByRole('button', { name: 'Bring mine back' }).click();
    expect(await bBody.inputValue()).toBe('written on the phone');
    await b.keyboard.press('Control+s');
    await toastWith(b, 'Saved').waitFor();
    expect((await storedNote(note!.id)).body).toBe('written on the phone');
    expect(await b.getByText('All changes saved').isVisible()).toBe(true);
  });
  test('when the live part never loaded (a cold load, then offline), a refused save still says why and keeps the text', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Offline', body: 'first draft' }]);
    // The note page's live part (loaded after the page) never arrives: its chunk fails, as it would offline.
    await page.route(/\/_next\/static\/chunks\/.*\.js$/, async (route) => {
      const response = await route.fetch();
      const text = await response.text();
      if (text.includes('Keep my changes')) return route.abort('internetdisconnected');
      return route.fulfill({ response, body: text });
    });
    await gotoHydrated(page, `/notes/${note!.id}`);
    await changeNote(note!.id, { body: 'written elsewhere' });
    const body = page.getByLabel('Note', { exact: true });
    await body.fill('written here');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await toastWith(page, 'Your changes were not saved').getByText('changed in another tab or device').waitFor(LIVE);
    expect(await page.getByTestId('note-elsewhere').count()).toBe(0); // the notice could not show: the toast said it
    expect(await body.inputValue()).toBe('written here');
    expect(await page.getByText('Unsaved changes · Ctrl+S saves').isVisible()).toBe(true);
    expect((await storedNote(note!.id)).body).toBe('written elsewhere');
  });
});

describe('an open note and changes that cross its own actions', () => {
  test('a change elsewhere that lands while this tab is saving is shown once the save is done, not dropped', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Race', body: 'orig' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await liveOn(page);
    // The save is stored; before its answer arrives, another device saves too (and its change reaches this tab).
    await page.route('**/api/trpc/notes.update*', async (route) => {
      const response = await route.fetch();
      await changeNote(note!.id, { body: 'from the phone, after this save' });
      await sleep(1_500);
      await route.fulfill({ response });
    });
    await page.getByLabel('Note', { exact: true }).fill('from this tab');
    await page.keyboard.press('Control+s');
    await toastWith(page, 'Saved').waitFor();
    await expect.poll(() => page.getByLabel('Note', { exact: true }).inputValue(), LIVE).toBe('from the phone, after this save');
    expect(await page.getByText('All changes saved').isVisible()).toBe(true);
    await page.unroute('**/api/trpc/notes.update*');

    // With edits typed during the save, the later change is announced instead, and the edits are kept.
    await page.route('**/api/trpc/notes.update*', async (route) => {
      const response = await route.fetch();
      await changeNote(note!.id, { body: 'the phone again' });
      await sleep(1_500);
      await route.fulfill({ response });
    });
    const body = page.getByLabel('Note', { exact: true });
    await body.fill('mine');
    await page.keyboard.press('Control+s');
    await page.getByRole('button', { name: 'Saving…' }).waitFor();
    await body.press('End');
    await page.keyboard.type(', more');
    await page.getByTestId('note-elsewhere').getByText('This note was changed in another tab or device').waitFor(LIVE);
    expect(await body.inputValue()).toBe('mine, more');
  });

  test('typing that starts while the page fetches a version saved elsewhere is kept (the notice, not the other text over it)', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Fast typist', body: 'draft' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await liveOn(page);
    // The clean page hears a change and fetches the note; its answer is held while the user starts typing.
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let fetching = () => {};
    const fetched = new Promise<void>((resolve) => (fetching = resolve));
    await page.route('**/api/trpc/notes.get*', async (route) => {
      fetching();
      const response = await route.fetch();
      await released;
      await route.fulfill({ response });
    });
    await changeNote(note!.id, { body: 'draft, saved on the phone' });
    await fetched;
    const body = page.getByLabel('Note', { exact: true });
    await body.click();
    await body.press('End');
    await page.keyboard.type(' and typed here');
    release();
    await page.getByTestId('note-elsewhere').getByText('This note was changed in another tab or device').waitFor(LIVE);
    expect(await body.inputValue()).toBe('draft and typed here');
    await page.keyboard.type(', still');
    expect(await body.inputValue()).toBe('draft and typed here, still');
  });

  test('deleted and restored elsewhere (Undo): the note comes back here, unsaved edits kept, no "changed" notice', async () => {
    const { page, id } = await signedInUser(fixture);
    const [seeded] = await seedNotes(id, [{ title: 'Undoable', body: 'text', pinned: true }]);
    const stored = (await (
      await fetch(`${supabaseURL}/rest/v1/notes?id=eq.${seeded!.id}&select=id,title,body,pinned,created_at,updated_at`, {
        headers: { apikey: DEFAULT_SERVICE_ROLE_KEY, authorization: `Bearer ${DEFAULT_SERVICE_ROLE_KEY}` },
      })
    ).json()) as Record<string, unknown>[];
    await gotoHydrated(page, `/notes/${seeded!.id}`);
    await liveOn(page);
    await page.getByLabel('Note', { exact: true }).fill('text typed here');

    await changeNote(seeded!.id, { delete: true });
    const notice = page.getByTestId('note-elsewhere');
    await notice.getByText('This note was deleted in another tab or device').waitFor(LIVE);
    // Undo elsewhere puts the same row back (same id and times).
    await seedNotes(id, [stored[0] as never]);
    await notice.waitFor({ state: 'detached', ...LIVE });
    expect(await page.getByRole('button', { name: 'Delete', exact: true }).isEnabled()).toBe(true);
    expect(await page.getByRole('button', { name: /^(Pin|Unpin)$/ }).isEnabled()).toBe(true);
    expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('text typed here');
    await sleep(1_000);
    expect(await notice.count()).toBe(0);
    await page.keyboard.press('Control+s');
    await toastWith(page, 'Saved').waitFor();
  });

  test('a pin or unpin elsewhere reaches the open note, unsaved edits untouched', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Pin me', body: 'body' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await liveOn(page);
    const pin = page.getByRole('button', { name: /^(Pin|Unpin)$/ });
    expect(await pin.getAttribute('aria-pressed')).toBe('false');
    await page.getByLabel('Note', { exact: true }).fill('body, edited here');

    await patchRow(note!.id, { pinned: true });
    await expect.poll(() => pin.getAttribute('aria-pressed'), LIVE).toBe('true');
    expect(await pin.innerText()).toBe('Unpin');
    await patchRow(note!.id, { pinned: false });
    await expect.poll(() => pin.getAttribute('aria-pressed'), LIVE).toBe('false');
    expect(await page.getByLabel('Note', { exact: true }).inputValue()).toBe('body, edited here');
    expect(await page.getByText('Unsaved changes').isVisible()).toBe(true);
    expect(await page.getByTestId('note-elsewhere').count()).toBe(0);
  });
});

describe('the connection', () => {
  test('follows the session: "Reconnecting…" only after a few seconds down, live again after, closed on sign-out', async () => {
    if (!backendControllable()) throw new Error('this test needs the localbase started by the e2e global setup (not E2E_BASE_URL)');
    const { page, id } = await signedInUser(fixture);
    // The first load's socket opens after the list settles: let it, so only the reload's sockets are counted.
    await liveOn(page);
    const sockets: { url: () => string; isClosed: () => boolean }[] = [];
    page.on('websocket', (socket) => sockets.push(socket));
    await page.reload();
    await listSettled(page);
    await liveOn(page);
    expect(sockets.filter((s) => s.url().includes('/realtime/v1/websocket'))).toHaveLength(1);
    const status = page.getByTestId('live-status');
    expect(await status.innerText()).toBe('');

    // The page itself notes when the connection went off and when the notice appeared: stopping localbase may
    // take seconds after its sockets close (it flushes its database), so the test's own clock cannot tell.
    await page.evaluate(() => {
      const seen: { off?: number; notice?: number } = {};
      Object.assign(window, { __liveSeen: seen });
      const check = () => {
        const element = document.querySelector('[data-testid="live-status"]');
        if (!element) return;
        if (seen.off === undefined && element.getAttribute('data-live') === 'off') seen.off = performance.now();
        if (seen.notice === undefined && /Reconnecting/.test(element.textContent ?? '')) seen.notice = performance.now();
      };
      new MutationObserver(check).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await stopBackend();
    try {
      await expect.poll(() => status.innerText(), LIVE).toMatch(/^Reconnecting…/);
    } finally {
      await startBackend();
    }
    // A short loss says nothing: the notice came a few seconds (the app's 3 s) after the connection went off.
    const seen = await page.evaluate(() => (window as unknown as { __liveSeen: { off?: number; notice?: number } }).__liveSeen);
    expect(seen.off).toBeTypeOf('number');
    expect(seen.notice! - seen.off!).toBeGreaterThanOrEqual(2_500);
    await expect.poll(() => status.innerText(), { timeout: 30_000 }).toBe('');
    await liveOn(page);
    await seedNotes(id, [{ title: 'After the outage' }]);
    await expect.poll(() => listedTitles(page), LIVE).toEqual(['After the outage']);

    // Signing out closes every realtime socket of the page.
    await page.getByRole('button', { name: /^Account: / }).click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/sign-in', { timeout: 20_000 });
    await expect.poll(() => sockets.filter((s) => s.url().includes('/realtime/v1/websocket')).every((s) => s.isClosed()), LIVE).toBe(true);
  });
});
