// Toasts: position (top, 10 px inset), 6 s auto-close, pause on hover, Escape, close button, F8 focus,
// swipe up to dismiss (past 20 px) and snap back (below). The timer keeps working after a toast was closed from
// inside (its close button, Undo) and focus goes back where it was; Escape closes the newest toast from anywhere,
// unless an open dialog, menu or the search box uses it.
import type { Locator, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { gotoHydrated, openConnectedToast, sleep, useBrowser, visibleViewportWidth } from './browser.ts';
import { listSettled, seedNotes, signedInUser } from './notes-helpers.ts';

const fixture = useBrowser();

const toasts = (page: Page): Locator => page.getByTestId('toast');
const connectedToast = (page: Page): Locator => toasts(page).filter({ hasText: 'Connected' });
const viewportRegion = (page: Page): Locator => page.getByRole('region', { name: /^Notifications/ });

async function homeWithToast(width = 1280): Promise<Page> {
  const page = await fixture.newPage({ viewport: { width, height: 800 } });
  await gotoHydrated(page);
  await openConnectedToast(page);
  await sleep(250); // let the 100 ms enter animation finish before measuring
  return page;
}

/** Parks the pointer away from the toast viewport so hovering cannot pause the timer by accident. */
/** A second, different toast: the next connection check gets a malformed answer and reports an error. */
async function openErrorToast(page: Page): Promise<Locator> {
  await page.route('**/api/trpc/system.clockSkew**', (route) =>
    route.fulfill({ status: 200, contentType: 'application/json', body: '{"not":"trpc"}' }),
  );
  await page.getByRole('button', { name: 'Check connection' }).click();
  const errorToast = toasts(page).filter({ hasText: 'The server is not answering properly just now' });
  await errorToast.waitFor({ state: 'visible', timeout: 10_000 });
  return errorToast;
}

async function parkPointer(page: Page): Promise<void> {
  const size = page.viewportSize() ?? { width: 1280, height: 800 };
  await page.mouse.move(size.width / 2, size.height - 5);
}

async function expectClosed(toast: Locator, timeout = 1500): Promise<void> {
  await toast.waitFor({ state: 'hidden', timeout });
}

/**
 * Starts recording, in the page, when the next toast containing `text` appears and when it leaves the document.
 * Returns a function that waits for it to close and gives its lifetime in ms (measured by the browser, so a slow
 * test runner does not blur it).
 */
async function recordToastLifetime(page: Page, text: string): Promise<() => Promise<number>> {
  const key = `${text}-${Date.now()}`;
  await page.evaluate(
    ({ text: wanted, key: id }) => {
      const records = ((window as unknown as { __toastLife?: Record<string, { shown?: number; closed?: number }> }).__toastLife ??= {});
      const entry: { shown?: number; closed?: number } = {};
      records[id] = entry;
      let toast: Element | undefined;
      const observer = new MutationObserver(() => {
        toast ??= Array.from(document.querySelectorAll('[data-testid="toast"]')).find((el) => el.textContent?.includes(wanted));
        if (toast && entry.shown === undefined) entry.shown = performance.now();
        if (toast && !toast.isConnected) {
          entry.closed = performance.now();
          observer.disconnect();
        }
      });
      observer.observe(document.body, { childList: true, subtree: true });
    },
    { text, key },
  );
  return async () => {
    const life = () =>
      page.evaluate((id) => {
        const entry = (window as unknown as { __toastLife: Record<string, { shown?: number; closed?: number }> }).__toastLife[id];
        return entry?.shown !== undefined && entry.closed !== undefined ? entry.closed - entry.shown : null;
      }, key);
    try {
      await page.waitForFunction(
        (id) => (window as unknown as { __toastLife: Record<string, { closed?: number }> }).__toastLife[id]?.closed !== undefined,
        key,
        { timeout: 12_000 },
      );
    } catch {
      // Why not: the region's pause state and where focus is.
      const state = await page.evaluate(() => ({
        paused: document.querySelector('[aria-label="Notifications (F8)"]')?.getAttribute('data-paused'),
        focus: document.activeElement?.outerHTML.slice(0, 120),
      }));
      throw new Error(`"${text}" did not close by itself within 12 s: ${JSON.stringify(state)}`);
    }
    return (await life()) ?? Number.NaN;
  };
}

/** The toast closed by itself after its 6 s (plus the 100 ms exit), not before and not much after. */
function expectSixSeconds(lifetime: number): void {
  expect(lifetime, `open for ${Math.round(lifetime)} ms`).toBeGreaterThanOrEqual(5900);
  expect(lifetime, `open for ${Math.round(lifetime)} ms`).toBeLessThanOrEqual(7500);
}

const isFocused = (locator: Locator): Promise<boolean> => locator.evaluate((el) => el === document.activeElement);

function translateY(transform: string): number {
  if (transform === 'none' || transform === '') return 0;
  const values = transform.match(/-?[\d.]+(e-?\d+)?/g)?.map(Number) ?? [];
  if (transform.startsWith('matrix3d')) return values[13] ?? 0;
  if (transform.startsWith('matrix')) return values[5] ?? 0;
  return Number.NaN;
}

describe('toast', () => {
  test('"Check connection" shows a "Connected" toast with the measured skew', async () => {
    const page = await homeWithToast();
    const toast = connectedToast(page);
    expect(await toasts(page).count()).toBe(1);
    const role = await toast.getAttribute('role');
    const insideStatus = await toast.evaluate((el) => el.closest('[role="status"]') !== null || el.querySelector('[role="status"]') !== null);
    expect(role === 'status' || insideStatus, 'a success toast is announced as a status').toBe(true);
    const text = (await toast.innerText()).trim();
    expect(text).toMatch(/^Connected/);
    expect(text, 'the description reports the measured skew').toMatch(/\d/);
    await toast.getByRole('button', { name: 'Close notification' }).waitFor();
    // Enter/exit animation: 100 ms.
    const durations = await toast.evaluate((el) => getComputedStyle(el).transitionDuration.split(',').map((d) => d.trim()));
    expect(durations.length).toBeGreaterThan(0);
    for (const duration of durations) expect(duration).toBe('0.1s');
  });

  for (const width of [390, 1280]) {
    test(`sits at the top, inset 10 px from the edges (${width} px wide)`, async () => {
      const page = await homeWithToast(width);
      const region = await viewportRegion(page).boundingBox();
      const toast = await connectedToast(page).boundingBox();
      // The width fixed-position elements see (the window minus a classic scrollbar or its reserved gutter).
      const visibleWidth = await visibleViewportWidth(page);
      expect(visibleWidth).toBeGreaterThan(width - 20);
      expect(region, 'the notifications region is on screen').not.toBeNull();
      expect(toast).not.toBeNull();
      if (!region || !toast) return;
      // The viewport: fixed at the top, 10 px from the top, left and right edges.
      expect(region.y).toBeCloseTo(10, 0);
      expect(region.x).toBeCloseTo(10, 0);
      expect(visibleWidth - (region.x + region.width)).toBeCloseTo(10, 0);
      // The toast inside it: at the top, never closer than 10 px to an edge.
      expect(toast.y).toBeGreaterThanOrEqual(9.5);
      expect(toast.y).toBeLessThanOrEqual(12);
      expect(toast.x).toBeGreaterThanOrEqual(9.5);
      expect(toast.x + toast.width).toBeLessThanOrEqual(visibleWidth - 9.5);
      // Still at the top after scrolling (fixed).
      await page.mouse.wheel(0, 400);
      await sleep(100);
      const afterScroll = await connectedToast(page).boundingBox();
      expect(afterScroll?.y).toBeCloseTo(toast.y, 0);
    });
  }

  test('closes by itself after about 6 seconds', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page);
    await page.getByRole('button', { name: 'Check connection' }).click();
    const toast = connectedToast(page);
    await toast.waitFor({ state: 'visible', timeout: 15_000 });
    const shownAt = Date.now();
    await parkPointer(page);

    await sleep(5000 - (Date.now() - shownAt));
    expect(await toast.isVisible(), 'still open at 5 s').toBe(true);
    await expectClosed(toast, 7500 - (Date.now() - shownAt));
    const closedAfter = Date.now() - shownAt;
    expect(closedAfter).toBeGreaterThanOrEqual(5000);
    expect(closedAfter).toBeLessThanOrEqual(7500);
  });

  test('hovering the toast pauses the timer; leaving resumes it', async () => {
    const page = await homeWithToast();
    const toast = connectedToast(page);
    await toast.hover();
    await sleep(7500);
    expect(await toast.isVisible(), 'still open after 7.5 s of hover').toBe(true);
    await parkPointer(page);
    await expectClosed(toast, 7000);
  });

  test('Escape closes it (focus in the notifications viewport)', async () => {
    const page = await homeWithToast();
    await page.keyboard.press('F8');
    await page.keyboard.press('Escape');
    await expectClosed(connectedToast(page));
  });

  test('with two toasts open, Escape closes the newest first', async () => {
    const page = await homeWithToast();
    const errorToast = await openErrorToast(page);
    expect(await toasts(page).count()).toBe(2);
    await page.keyboard.press('F8');
    await page.keyboard.press('Escape');
    await expectClosed(errorToast);
    expect(await connectedToast(page).isVisible(), 'the older toast stays').toBe(true);
  });

  test('the "Close notification" button closes it', async () => {
    const page = await homeWithToast();
    await connectedToast(page).getByRole('button', { name: 'Close notification' }).click();
    await expectClosed(connectedToast(page));
  });

  test('F8 moves focus to the notifications viewport', async () => {
    const page = await homeWithToast();
    const region = viewportRegion(page);
    expect(await region.evaluate((el) => el === document.activeElement || el.contains(document.activeElement))).toBe(false);
    await page.keyboard.press('F8');
    await expect
      .poll(() => region.evaluate((el) => el === document.activeElement || el.contains(document.activeElement)), { timeout: 2000 })
      .toBe(true);
    // Focus within the viewport pauses the timer too.
    await sleep(7000);
    expect(await connectedToast(page).isVisible(), 'still open after 7 s with focus in the viewport').toBe(true);
  });

  test('a swipe up past 20 px dismisses it', async () => {
    const page = await homeWithToast();
    const toast = connectedToast(page);
    const box = await toast.boundingBox();
    if (!box) throw new Error('toast has no box');
    const x = box.x + Math.min(24, box.width / 4);
    const y = box.y + box.height / 2;
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x, y - 30, { steps: 10 });
    await page.mouse.up();
    await expectClosed(toast);
  });

  test('a swipe up of 15 px snaps back and the toast stays', async () => {
    const page = await homeWithToast();
    const toast = connectedToast(page);
    const box = await toast.boundingBox();
    if (!box) throw new Error('toast has no box');
    const x = box.x + Math.min(24, box.width / 4);
    const y = box.y + box.height / 2;
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x, y - 15, { steps: 6 });
    const during = await toast.boundingBox();
    expect(during?.y ?? box.y, 'the toast follows the pointer once the swipe started (>10 px)').toBeLessThan(box.y - 1);
    await page.mouse.up();
    await sleep(400);
    expect(await toast.isVisible(), 'the toast stays after a short swipe').toBe(true);
    const transform = await toast.evaluate((el) => getComputedStyle(el).transform);
    expect(translateY(transform), `snapped back (transform ${transform})`).toBeCloseTo(0, 0);
    const after = await toast.boundingBox();
    expect(after?.y).toBeCloseTo(box.y, 0);
  });

  test('a touch swipe up on a phone dismisses it', async () => {
    const context = await fixture.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
    const page = await context.newPage();
    await gotoHydrated(page);
    await openConnectedToast(page);
    await sleep(250);
    const toast = connectedToast(page);
    const box = await toast.boundingBox();
    if (!box) throw new Error('toast has no box');
    const x = box.x + Math.min(24, box.width / 4);
    const y = box.y + box.height / 2;
    const cdp = await context.newCDPSession(page);
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x, y }] });
    for (let dy = 4; dy <= 40; dy += 4) {
      await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x, y: y - dy }] });
    }
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
    await expectClosed(toast);
  });

  test('a small 5 px drag does not move the toast (swipe starts after 10 px)', async () => {
    const page = await homeWithToast();
    const toast = connectedToast(page);
    const box = await toast.boundingBox();
    if (!box) throw new Error('toast has no box');
    const x = box.x + Math.min(24, box.width / 4);
    const y = box.y + box.height / 2;
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x, y - 5, { steps: 3 });
    const during = await toast.boundingBox();
    expect(during?.y).toBeCloseTo(box.y, 0);
    await page.mouse.up();
    expect(await toast.isVisible()).toBe(true);
  });
});

describe('toast timer after closing one from inside, and focus', () => {
  test('after a toast is closed with its "Close notification" button, the next one still closes by itself after about 6 s', async () => {
    const page = await homeWithToast();
    await connectedToast(page).getByRole('button', { name: 'Close notification' }).click();
    await expectClosed(connectedToast(page));
    await parkPointer(page);
    const lifetime = await recordToastLifetime(page, 'Connected');
    await page.getByRole('button', { name: 'Check connection' }).click();
    await connectedToast(page).waitFor({ state: 'visible', timeout: 15_000 });
    await parkPointer(page);
    expectSixSeconds(await lifetime());
  });

  test('closed from the keyboard (F8, Tab, Enter), focus goes back where it was and the next toast closes by itself', async () => {
    const page = await homeWithToast();
    await parkPointer(page);
    const signUpLink = page.getByRole('link', { name: 'Create an account' });
    await signUpLink.focus();
    await page.keyboard.press('F8');
    await page.keyboard.press('Tab');
    const close = connectedToast(page).getByRole('button', { name: 'Close notification' });
    expect(await isFocused(close), 'Tab from the region reaches the toast').toBe(true);
    await page.keyboard.press('Enter');
    await expectClosed(connectedToast(page));
    await expect.poll(() => isFocused(signUpLink), { timeout: 2000 }).toBe(true);

    const lifetime = await recordToastLifetime(page, 'Connected');
    await page.getByRole('button', { name: 'Check connection' }).click();
    await connectedToast(page).waitFor({ state: 'visible', timeout: 15_000 });
    await parkPointer(page);
    expectSixSeconds(await lifetime());
  });

  test('with two toasts, closing the focused one from the keyboard keeps focus in the region; the last one gives it back', async () => {
    const page = await homeWithToast();
    const errorToast = await openErrorToast(page);
    await parkPointer(page);
    const signUpLink = page.getByRole('link', { name: 'Create an account' });
    await signUpLink.focus();
    await page.keyboard.press('F8');
    await page.keyboard.press('Tab'); // the older toast's close button…
    await page.keyboard.press('Tab'); // …then the newer one's
    const close = errorToast.getByRole('button', { name: 'Close notification' });
    expect(await isFocused(close)).toBe(true);
    await page.keyboard.press('Enter');
    await expectClosed(errorToast);
    await expect.poll(() => isFocused(viewportRegion(page)), { timeout: 2000 }).toBe(true);
    await page.keyboard.press('Escape');
    await expectClosed(connectedToast(page));
    await expect.poll(() => isFocused(signUpLink), { timeout: 2000 }).toBe(true);
  });

  test('a toast that closes under the resting mouse: once the mouse moves away, the other toasts close by themselves', async () => {
    const page = await homeWithToast();
    const errorToast = await openErrorToast(page);
    // The mouse rests on the newer toast (its text, no button); Escape closes it, so it leaves from under the mouse.
    await page.getByRole('heading', { name: 'Welcome to Foyer', level: 1 }).click();
    await errorToast.getByText('The server is not answering properly just now').hover();
    await page.keyboard.press('Escape');
    await expectClosed(errorToast);
    const leftAt = Date.now();
    await parkPointer(page);
    await expectClosed(connectedToast(page), 7500);
    expect(Date.now() - leftAt, 'its timer ran again once the mouse had left').toBeLessThanOrEqual(7500);
  });

  test('after Undo on "Note deleted", "Note restored" closes by itself after about 6 s', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Throw away' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog', { name: 'Delete this note?' }).getByRole('button', { name: 'Delete note' }).click();
    await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
    const deleted = toasts(page).filter({ hasText: 'Note deleted' });
    const lifetime = await recordToastLifetime(page, 'Note restored');
    await deleted.getByRole('button', { name: 'Undo' }).click();
    await toasts(page).filter({ hasText: 'Note restored' }).waitFor({ state: 'visible', timeout: 15_000 });
    await parkPointer(page);
    expectSixSeconds(await lifetime());
  });
});

describe('many toasts on a narrow screen (ADR 151)', () => {
  /** Four "Connected" toasts in a row (the button pressed as soon as it is ready again, wherever the toasts are). */
  async function fourToasts(width: number): Promise<Page> {
    const page = await fixture.newPage({ viewport: { width, height: 844 }, hasTouch: width < 640 });
    await gotoHydrated(page);
    await parkPointer(page);
    const check = page.getByRole('button', { name: 'Check connection' });
    for (let n = 1; n <= 4; n++) {
      await expect.poll(() => check.isEnabled(), { timeout: 10_000 }).toBe(true);
      await check.evaluate((button: HTMLButtonElement) => button.click());
      await expect.poll(() => toasts(page).count(), { timeout: 10_000 }).toBe(n);
    }
    await sleep(250);
    return page;
  }
  const shownBottoms = (page: Page) =>
    page.evaluate(() =>
      Array.from(document.querySelectorAll('[role="region"][aria-label^="Notifications"] *'))
        .filter((el) => el.checkVisibility() && el.getBoundingClientRect().height > 0)
        .map((el) => Math.round(el.getBoundingClientRect().bottom)),
    );

  test('at 390 px four toasts show as the newest one and "3 more notifications": the page below stays uncovered; a tap shows them all', async () => {
    const page = await fourToasts(390);
    const visible = async () => (await toasts(page).evaluateAll((els) => els.filter((el) => el.checkVisibility()).length));
    expect(await visible()).toBe(1);
    const more = page.getByRole('button', { name: '3 more notifications' });
    await more.waitFor();
    // The newest toast and the line under it: about one toast high, not four.
    const newest = (await toasts(page).last().boundingBox())!;
    expect(newest.y).toBeLessThanOrEqual(12);
    expect(Math.max(...(await shownBottoms(page)))).toBeLessThanOrEqual(newest.y + newest.height + 50);
    await page.screenshot({ path: 'test-results/screenshots/toasts-folded-390.png' });
    await sleep(1000); // the hidden toasts' timers run as the visible one's does
    await more.tap();
    await expect.poll(visible, { timeout: 2000 }).toBe(4);
    expect(await more.isVisible()).toBe(false);
    await sleep(6500); // shown, the region holds focus: every timer paused
    expect(await visible()).toBe(4);
    // A tap on the page: the region lets focus go, the stack folds again and the toasts close by themselves.
    await page.touchscreen.tap(195, 830);
    await expect.poll(visible, { timeout: 2000 }).toBe(1);
    await expect.poll(() => toasts(page).count(), { timeout: 8000 }).toBe(0);
  });

  test('at 390 px the stack holds no time: four toasts all close about 6 s after the last one came', async () => {
    const page = await fourToasts(390);
    const lastAt = Date.now();
    await expect.poll(() => toasts(page).count(), { timeout: 8000 }).toBe(0);
    expect(Date.now() - lastAt).toBeLessThanOrEqual(7500);
  });

  test('at 390 px F8 shows every toast, so the keyboard reaches each one', async () => {
    const page = await fourToasts(390);
    await page.keyboard.press('F8');
    await expect.poll(() => toasts(page).evaluateAll((els) => els.filter((el) => el.checkVisibility()).length), { timeout: 2000 }).toBe(4);
    await page.keyboard.press('Tab');
    expect(await isFocused(toasts(page).first().getByRole('button', { name: 'Close notification' }))).toBe(true);
  });

  test('at 1280 px four toasts are all shown', async () => {
    const page = await fourToasts(1280);
    expect(await toasts(page).evaluateAll((els) => els.filter((el) => el.checkVisibility()).length)).toBe(4);
    expect(await page.getByRole('button', { name: /more notifications/ }).count()).toBe(0);
  });
});

describe('long unbroken text', () => {
  test('at 390 px a long title without spaces wraps inside the "Saved" toast and the "Delete this note?" dialog', async () => {
    const { page, id } = await signedInUser(fixture, { viewport: { width: 390, height: 844 } });
    const title = 'W'.repeat(200);
    const [note] = await seedNotes(id, [{ title, body: 'short' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    /** How far the text of `box` reaches past it, and past the viewport (px; 0 = all inside). */
    const spill = (box: Locator) =>
      box.evaluate((el) => {
        const frame = el.getBoundingClientRect();
        const range = document.createRange();
        range.selectNodeContents(el);
        const rects = Array.from(range.getClientRects());
        const right = Math.max(...rects.map((r) => r.right));
        return { pastBox: Math.max(0, Math.round(right - frame.right)), pastViewport: Math.max(0, Math.round(right - window.innerWidth)) };
      });

    await page.getByLabel('Note', { exact: true }).fill('edited');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const saved = toasts(page).filter({ hasText: 'Saved' });
    await saved.waitFor();
    expect(await spill(saved)).toEqual({ pastBox: 0, pastViewport: 0 });

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this note?' });
    await dialog.waitFor();
    expect(await spill(dialog)).toEqual({ pastBox: 0, pastViewport: 0 });
    expect(await dialog.getByText(`“${title}”`, { exact: false }).isVisible()).toBe(true);
  });
});

describe('Escape', () => {
  test('with focus on the page, Escape closes the newest toast, and only that one', async () => {
    const page = await homeWithToast();
    const errorToast = await openErrorToast(page);
    // Focus on the page itself (a click on text), the pointer over the toasts so that no timer runs out meanwhile.
    await page.getByRole('heading', { name: 'Welcome to Foyer', level: 1 }).click();
    expect(await page.evaluate(() => document.activeElement === document.body)).toBe(true);
    await errorToast.hover();
    await page.keyboard.press('Escape');
    await expectClosed(errorToast);
    expect(await connectedToast(page).isVisible(), 'the older toast stays').toBe(true);
    await page.keyboard.press('Escape');
    await expectClosed(connectedToast(page));
  });

  test('signed in: Escape closes the create modal, the user menu, the delete confirmation or clears the search first; the toast stays', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Groceries' }]);
    await page.reload();
    await listSettled(page);
    const pinButton = page.getByRole('button', { name: /^(Pin|Unpin) “Groceries”$/ });
    const pinToast = async (): Promise<Locator> => {
      const before = await pinButton.getAttribute('aria-pressed');
      await pinButton.click();
      const toast = toasts(page).filter({ hasText: before === 'true' ? /^Unpinned/ : /^Pinned/ }).last();
      await toast.waitFor({ state: 'visible', timeout: 15_000 });
      return toast;
    };

    // The create modal: its Escape closes it; the next Escape (focus back on the page) closes the toast.
    let toast = await pinToast();
    await page.getByRole('heading', { name: 'Notes', level: 1 }).click();
    await page.keyboard.press('n');
    const modal = page.getByRole('dialog', { name: 'New note' });
    await modal.waitFor();
    await page.keyboard.press('Escape');
    await modal.waitFor({ state: 'hidden' });
    expect(await toast.isVisible(), 'the modal took the Escape, not the toast').toBe(true);
    await page.keyboard.press('Escape');
    await expectClosed(toast);

    // The user menu: its Escape closes it (focus back on its button); the next one closes the toast.
    toast = await pinToast();
    const account = page.getByRole('button', { name: /^Account: / });
    await account.click();
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => account.getAttribute('aria-expanded')).toBe('false');
    expect(await toast.isVisible(), 'the menu took the Escape, not the toast').toBe(true);
    await page.keyboard.press('Escape');
    await expectClosed(toast);

    // The search box with text: Escape clears it.
    toast = await pinToast();
    const search = page.getByRole('searchbox', { name: 'Search notes by title' });
    await search.fill('Gro');
    await page.keyboard.press('Escape');
    expect(await search.inputValue()).toBe('');
    expect(await toast.isVisible(), 'the search box took the Escape, not the toast').toBe(true);

    // The delete confirmation (a modal <dialog>) on the note page.
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByRole('button', { name: /^(Pin|Unpin)$/ }).click();
    toast = toasts(page).filter({ hasText: /^(Pinned|Unpinned)/ }).last();
    await toast.waitFor({ state: 'visible', timeout: 15_000 });
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this note?' });
    await confirm.waitFor();
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'hidden' });
    expect(await toast.isVisible(), 'the confirmation took the Escape, not the toast').toBe(true);
  });
});

describe('reduced motion', () => {
  test('with reduced motion asked for, toasts, the create modal and the delete confirmation appear and go without sliding or scaling', async () => {
    /** The animations and transitions running on the element now, with what each moves. */
    const moving = (locator: Locator) =>
      locator.evaluate((element) =>
        element
          .getAnimations()
          .filter((animation) => animation.playState === 'running')
          .flatMap((animation) => {
            const effect = animation.effect as KeyframeEffect | null;
            return (effect?.getKeyframes() ?? []).flatMap((frame) => Object.keys(frame).filter((key) => ['transform', 'translate', 'scale'].includes(key)));
          }),
      );
    const visitor = await fixture.newPage({ reducedMotion: 'reduce' });
    await gotoHydrated(visitor);
    await visitor.getByRole('button', { name: 'Check connection' }).click();
    const toast = connectedToast(visitor);
    await toast.waitFor({ state: 'visible', timeout: 15_000 });
    expect(await moving(toast), 'the toast coming in').toEqual([]);
    // what its exit (100 ms) and the snap back after a short swipe would animate
    expect(await toast.evaluate((element) => getComputedStyle(element).transitionProperty), 'the toast going').not.toMatch(/transform|all/);
    await toast.getByRole('button', { name: /close/i }).click();
    await toast.waitFor({ state: 'detached' });

    const { page, id } = await signedInUser(fixture, { reducedMotion: 'reduce' });
    const [note] = await seedNotes(id, [{ title: 'Still' }]);

    await page.keyboard.press('n');
    const modal = page.getByRole('dialog', { name: 'New note' });
    await modal.waitFor();
    expect(await moving(modal), 'the create modal').toEqual([]);
    await page.keyboard.press('Escape');
    await modal.waitFor({ state: 'hidden' });

    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this note?' });
    await confirm.waitFor();
    expect(await moving(confirm), 'the delete confirmation').toEqual([]);
  });
});
