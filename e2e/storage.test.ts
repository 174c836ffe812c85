// Files (issue 14, ADR 037), end to end in Chromium against the production build and localbase: the profile
// picture on the account page (upload with progress, replace, remove, shown in the header's user menu, checks
// before upload and the server's own refusal), note attachments (two at once with progress, cancel, download with
// equal bytes, delete, the note's delete taking them along), a second user who cannot reach the first one's files
// by the API or a guessed URL, and axe on both screens. Uploads are slowed down with the DevTools protocol so the
// progress is there to see.
import { deflateSync } from 'node:zlib';
import { readFile } from 'node:fs/promises';
import type { CDPSession, Locator, Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { ANON_KEY, describeViolations, PASSWORD, seriousViolations, signInViaUI, supabaseURL, uniqueEmail } from './auth-helpers.ts';
import { DEFAULT_SERVICE_ROLE_KEY } from './backend-control.ts';
import { gotoHydrated, recordConsoleProblems, recordRenders, rendersOf, sleep, useBrowser } from './browser.ts';
import { createUser, seedNotes, signedInUser } from './notes-helpers.ts';

const fixture = useBrowser();

const toastWith = (page: Page, text: string) => page.getByTestId('toast').filter({ hasText: text });
const accountButton = (page: Page) => page.getByRole('banner').getByRole('button', { name: /^Account: / });
const service = { apikey: DEFAULT_SERVICE_ROLE_KEY, authorization: `Bearer ${DEFAULT_SERVICE_ROLE_KEY}` };

/** A real PNG of `size` × `size` pixels of one colour (so the <img> decodes), padded after IEND to `padTo` bytes. */
function png(size: number, rgb: [number, number, number], padTo = 0): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: size }, () => row));
  const image = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return padTo > image.length ? Buffer.concat([image, Buffer.alloc(padTo - image.length)]) : image;
}

/** A PNG that says it is `width` × `height` pixels (a real header, one pixel of data): absurd sizes for a picture. */
function pngClaiming(width: number, height: number): Buffer {
  const out = Buffer.from(png(1, [1, 2, 3]));
  out.writeUInt32BE(width, 16);
  out.writeUInt32BE(height, 20);
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  let c = 0xffffffff;
  for (const b of out.subarray(12, 29)) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
  out.writeUInt32BE((c ^ 0xffffffff) >>> 0, 29);
  return out;
}

/** A real 1 × 1 GIF (white), which a browser decodes. */
const GIF_1PX = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

/** Where keyboard focus is: the element's id, or its accessible label / text. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return 'body';
    return el.id ? `#${el.id}` : (el.getAttribute('aria-label') ?? el.textContent ?? el.tagName).trim();
  });

/** Uploads a file into a user's storage with their token (as the app's signed URLs would). */
async function storeAs(token: string, bucket: string, key: string, body: string, type: string): Promise<void> {
  const res = await fetch(`${supabaseURL}/storage/v1/object/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`, {
    method: 'POST',
    headers: { apikey: ANON_KEY, authorization: `Bearer ${token}`, 'content-type': type },
    body,
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

const cdpSessions = new WeakMap<Page, CDPSession>();

/**
 * Uploads leave the browser at `bytesPerSecond` (DevTools network emulation), so progress can be watched; null
 * lifts the limit. One DevTools session per page, and "no limit" is 100 MB/s: Chromium reports
 * `navigator.onLine === false` once both throughputs are -1, which would pause the app's mutations.
 */
async function slowUploads(page: Page, bytesPerSecond: number | null): Promise<void> {
  let cdp = cdpSessions.get(page);
  if (!cdp) {
    cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    cdpSessions.set(page, cdp);
  }
  const upload = bytesPerSecond ?? 100_000_000;
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: upload });
  expect(await page.evaluate(() => navigator.onLine)).toBe(true);
}

/**
 * The race behind Cancel: uploads to `bucket` reach storage whole (the object is stored), but their answer is held
 * back, so the browser still shows the upload as under way. Resolves with each stored key as it lands.
 */
async function holdAnswers(page: Page, bucket: string): Promise<{ next: () => Promise<string> }> {
  const landed: string[] = [];
  const waiting: ((key: string) => void)[] = [];
  await page.route(`${supabaseURL}/storage/v1/object/upload/sign/${bucket}/**`, async (route) => {
    const response = await route.fetch();
    expect(response.status()).toBe(200);
    const key = decodeURIComponent(new URL(route.request().url()).pathname.split(`/sign/${bucket}/`)[1]!);
    const waiter = waiting.shift();
    if (waiter) waiter(key);
    else landed.push(key);
    // The answer never comes: Cancel aborts the request first.
  });
  return {
    next: () => {
      const key = landed.shift();
      return key !== undefined ? Promise.resolve(key) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

/** The keys in a bucket under a prefix, read with the service key (what is really stored). */
async function storedNames(bucket: string, prefix: string): Promise<string[]> {
  const res = await fetch(`${supabaseURL}/storage/v1/object/list/${bucket}`, {
    method: 'POST',
    headers: { ...service, 'content-type': 'application/json' },
    body: JSON.stringify({ prefix, limit: 100, offset: 0, sortBy: { column: 'name', order: 'asc' } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { name: string }[]).map((f) => f.name);
}

async function accessToken(email: string): Promise<string> {
  const res = await fetch(`${supabaseURL}/auth/v1/token?grant_type=password`, {
    method: 'POST',
    headers: { apikey: ANON_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function openAccount(page: Page): Promise<void> {
  await gotoHydrated(page, '/settings/account');
  await page.locator('label[for="avatar-file"]').waitFor({ timeout: 20_000 });
}

/** The header's picture: its URL once it has loaded (decoded), or null when the menu shows the initial. */
async function headerPicture(page: Page): Promise<string | null> {
  const img = accountButton(page).locator('img');
  if ((await img.count()) === 0) return null;
  await expect.poll(() => img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth > 0), { timeout: 10_000 }).toBe(true);
  return img.getAttribute('src');
}

/**
 * Drags a file across a drop zone in the order Chromium reports it: into the zone; onto one of the zone's own children
 * (the child's `dragenter`, then the zone's `dragleave`); over the child; back onto the zone (the zone's `dragenter`,
 * then the child's `dragleave`); out of the zone. Returns the zone's `data-over` (its highlight) after each step, each
 * read once a frame has been drawn.
 */
async function highlightAcrossZone(zone: Locator): Promise<string[]> {
  return zone.evaluate(async (el) => {
    const child = el.firstElementChild!;
    const data = new DataTransfer();
    data.items.add(new File(['x'], 'me.png', { type: 'image/png' }));
    const frame = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    const seen: string[] = [];
    const step = async (...events: [Element, string, Element | null][]) => {
      for (const [target, type, relatedTarget] of events) {
        target.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true, relatedTarget }));
      }
      await frame();
      seen.push(el.getAttribute('data-over') ?? '');
    };
    await step([el, 'dragenter', null], [el, 'dragover', null]);
    await step([child, 'dragenter', el], [el, 'dragleave', child]);
    await step([child, 'dragover', null]);
    await step([el, 'dragenter', child], [child, 'dragleave', el]);
    await step([el, 'dragleave', null]);
    return seen;
  });
}

test('a file dragged across the picture zone or the attachments zone keeps the highlight over their pictures and text, and loses it on leaving', async () => {
  const { page, id } = await signedInUser(fixture);
  await openAccount(page);
  expect(await highlightAcrossZone(page.getByTestId('avatar-drop'))).toEqual(['true', 'true', 'true', 'true', 'false']);
  const [note] = await seedNotes(id, [{ title: 'Dragged over' }]);
  await gotoHydrated(page, `/notes/${note!.id}`);
  await page.getByText('No files yet.').waitFor({ timeout: 20_000 });
  expect(await highlightAcrossZone(page.getByTestId('attachments-drop'))).toEqual(['true', 'true', 'true', 'true', 'false']);
});

describe('profile picture', () => {
  test('upload with progress, shown in the user menu (also after a reload); replace; remove', async () => {
    const { page, id } = await signedInUser(fixture);
    await openAccount(page);
    expect(await headerPicture(page)).toBeNull();

    // 1.2 MB at 400 kB/s: three seconds of progress.
    await slowUploads(page, 400_000);
    await page.locator('#avatar-file').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: png(64, [200, 40, 40], 1_200_000) });
    await page.getByAltText('Preview of the new picture').waitFor();
    const progress = page.getByRole('progressbar', { name: 'Picture upload' });
    await progress.waitFor();
    await expect.poll(async () => Number(await progress.getAttribute('value')), { timeout: 10_000 }).toBeGreaterThan(0);
    const midway = Number(await progress.getAttribute('value'));
    expect(midway).toBeLessThan(100);
    await toastWith(page, 'Picture saved').waitFor({ timeout: 20_000 });
    await expect.poll(() => headerPicture(page), { timeout: 10_000 }).toMatch(new RegExp(`/storage/v1/object/public/avatars/${id}/[0-9a-z-]+\\.png$`));
    const first = (await headerPicture(page))!;
    // Built without NEXT_PUBLIC_SUPABASE_IMAGE_TRANSFORMATION (the default, ADR 046): no rendered sizes asked for.
    expect(await accountButton(page).locator('img').getAttribute('srcset')).toBeNull();
    expect(await page.getByAltText('Your profile picture').getAttribute('src')).toBe(first);
    // The menu's panel shows it beside the name too.
    await accountButton(page).click();
    await expect.poll(() => page.locator('[data-testid="user-menu-name"]').locator('xpath=../..').locator('img').getAttribute('src')).toBe(first);
    await page.keyboard.press('Escape');
    await page.reload();
    await accountButton(page).waitFor();
    await expect.poll(() => headerPicture(page), { timeout: 20_000 }).toBe(first);

    // Replace: a new URL, the old file gone.
    await slowUploads(page, null);
    await page.locator('label[for="avatar-file"]', { hasText: 'Replace picture' }).waitFor();
    await page.locator('#avatar-file').setInputFiles({ name: 'me2.png', mimeType: 'image/png', buffer: png(32, [40, 40, 200]) });
    await toastWith(page, 'Picture saved').last().waitFor({ timeout: 20_000 });
    await expect.poll(() => headerPicture(page), { timeout: 10_000 }).not.toBe(first);
    const second = (await headerPicture(page))!;
    expect(second).toMatch(new RegExp(`/avatars/${id}/`));
    await expect.poll(async () => (await fetch(first)).status).not.toBe(200);
    expect(await storedNames('avatars', id)).toEqual([second.split('/').pop()]);

    // Remove.
    await page.getByRole('button', { name: 'Remove picture' }).click();
    await toastWith(page, 'Picture removed').waitFor({ timeout: 20_000 });
    await expect.poll(() => headerPicture(page)).toBeNull();
    expect((await fetch(second)).status).not.toBe(200);
    expect(await storedNames('avatars', id)).toEqual([]);
  });

  test('a wrong type or a picture over 2 MB gets a clear message and nothing is sent; a refusal by the server is readable too', async () => {
    const { page } = await signedInUser(fixture);
    await openAccount(page);
    const storageRequests: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/storage/v1/')) storageRequests.push(request.url());
    });
    await page.locator('#avatar-file').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
    await page.getByRole('alert').filter({ hasText: '“notes.txt” is not a PNG, JPEG, WebP or GIF picture. Choose one of those.' }).waitFor();
    await page.locator('#avatar-file').setInputFiles({ name: 'huge.png', mimeType: 'image/png', buffer: png(8, [0, 0, 0], 2_500_000) });
    await page.getByRole('alert').filter({ hasText: '“huge.png” is 2.5 MB: a picture can be at most 2 MB.' }).waitFor();
    // One byte over: both figures exact, so the refusal does not read "2 MB … at most 2 MB".
    await page.locator('#avatar-file').setInputFiles({ name: 'big.png', mimeType: 'image/png', buffer: png(8, [0, 0, 0], 2_000_001) });
    await page.getByRole('alert').filter({ hasText: '“big.png” is 2,000,001 bytes: a picture can be at most 2,000,000 bytes (2 MB).' }).waitFor();
    expect(storageRequests).toEqual([]);

    // The server has the last word: with the bucket narrowed to PNG for a moment, a GIF passes the page's check
    // and storage refuses it (415); the page says so in words.
    const narrow = (types: string[]) =>
      fetch(`${supabaseURL}/storage/v1/bucket/avatars`, {
        method: 'PUT',
        headers: { ...service, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'avatars', name: 'avatars', public: true, allowed_mime_types: types }),
      });
    expect((await narrow(['image/png'])).status).toBe(200);
    try {
      await page.locator('#avatar-file').setInputFiles({ name: 'anim.gif', mimeType: 'image/gif', buffer: GIF_1PX });
      await page.getByRole('alert').filter({ hasText: 'The server refused “anim.gif”: files of this type are not accepted here.' }).waitFor({ timeout: 20_000 });
    } finally {
      expect((await narrow(['image/png', 'image/jpeg', 'image/webp', 'image/gif'])).status).toBe(200);
    }
    expect(await headerPicture(page)).toBeNull();
  });

  test('an empty file, a file that is not a picture, and a picture of absurd dimensions are refused in words before any request', async () => {
    const { page } = await signedInUser(fixture);
    await openAccount(page);
    const problems = recordConsoleProblems(page);
    const requests: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/storage/v1/') || request.url().includes('/api/trpc/avatar')) requests.push(request.url());
    });
    const alert = page.getByRole('alert');
    await page.locator('#avatar-file').setInputFiles({ name: 'empty.png', mimeType: 'image/png', buffer: Buffer.alloc(0) });
    await alert.filter({ hasText: '“empty.png” is an empty file. Choose a picture.' }).waitFor();
    await page.locator('#avatar-file').setInputFiles({ name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('this is plain text, not a png') });
    await alert.filter({ hasText: '“fake.png” is not an image this browser can show. Choose another picture.' }).waitFor();
    // A size Chromium itself refuses to decode, and one it would decode but no picture needs.
    await page.locator('#avatar-file').setInputFiles({ name: 'huge.png', mimeType: 'image/png', buffer: pngClaiming(100_000, 100_000) });
    await alert.filter({ hasText: '“huge.png” is not an image this browser can show. Choose another picture.' }).waitFor();
    await page.locator('#avatar-file').setInputFiles({ name: 'wide.png', mimeType: 'image/png', buffer: pngClaiming(9000, 9000) });
    await alert.filter({ hasText: '“wide.png” is 9000 × 9000 pixels: a picture can be at most 8000 × 8000 pixels.' }).waitFor();
    expect(requests).toEqual([]);
    expect(await toastWith(page, 'Picture saved').count()).toBe(0);
    // A real picture right after still goes through.
    await page.locator('#avatar-file').setInputFiles({ name: 'ok.png', mimeType: 'image/png', buffer: png(16, [10, 120, 10]) });
    await toastWith(page, 'Picture saved').waitFor({ timeout: 20_000 });
    expect(await alert.filter({ hasText: 'Choose' }).count()).toBe(0);
    expect(problems).toEqual([]);
  });

  test("the server's refusal of a picture's input reads as words, never as raw validation data", async () => {
    const { page } = await signedInUser(fixture);
    await openAccount(page);
    // The page's own check would stop an empty file; make the server see one (size 0) to read its answer.
    await page.route('**/api/trpc/avatar.createUploadUrl**', (route) =>
      route.continue({ postData: route.request().postData()!.replace(/"size":\d+/, '"size":0') }),
    );
    await page.locator('#avatar-file').setInputFiles({ name: 'ok.png', mimeType: 'image/png', buffer: png(16, [10, 120, 10]) });
    const alert = page.getByRole('alert').filter({ hasText: 'A picture cannot be empty.' });
    await alert.waitFor({ timeout: 20_000 });
    expect(await alert.innerText()).not.toMatch(/[[{]|too_small|"code"/);
  });

  test('a picture chosen while the app gets no answer (connection lost) says so in words, never "Failed to fetch"; it goes through once the connection is back', async () => {
    const { page } = await signedInUser(fixture);
    await openAccount(page);
    await page.route('**/api/trpc/avatar.createUploadUrl**', (route) => route.abort('internetdisconnected'));
    await page.locator('#avatar-file').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: png(16, [10, 120, 10]) });
    const alert = page.getByRole('alert').filter({ hasText: /\S/ });
    await alert.waitFor({ timeout: 20_000 });
    expect(await alert.innerText()).toContain("Can't reach the server. Check your connection and try again.");
    expect(await alert.innerText()).not.toMatch(/fetch/i);

    await page.unroute('**/api/trpc/avatar.createUploadUrl**');
    await page.locator('#avatar-file').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: png(16, [10, 120, 10]) });
    await page.getByAltText('Your profile picture').waitFor({ timeout: 20_000 });
  });

  test('a stored picture the browser cannot show falls back to the initial in the header, its menu and the account page', async () => {
    const email = uniqueEmail('broken-picture');
    const id = await createUser(email);
    const token = await accessToken(email);
    const key = `${id}/broken-0.png`;
    await storeAs(token, 'avatars', key, 'this is plain text, not a png', 'image/png');
    const saved = await fetch(`${supabaseURL}/auth/v1/user`, {
      method: 'PUT',
      headers: { apikey: ANON_KEY, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { avatar_path: key } }),
    });
    expect(saved.status).toBe(200);
    const page = await fixture.newPage();
    await gotoHydrated(page, '/sign-in');
    await signInViaUI(page, email);
    await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
    const initial = email.slice(0, 1).toUpperCase();
    // The header (rendered on the server, the picture failing before or after hydration): the initial, no <img>.
    await expect.poll(() => accountButton(page).locator('img').count(), { timeout: 10_000 }).toBe(0);
    // The initial shows once the header has the signed-in user (just after the redirect it may not have it yet).
    await expect.poll(async () => (await accountButton(page).innerText()).trim(), { timeout: 10_000 }).toBe(initial);
    expect(await accountButton(page).locator('img').count()).toBe(0);
    await accountButton(page).click();
    await page.locator('[data-testid="user-menu-name"]').waitFor();
    expect(await page.locator('[data-testid="user-menu-name"]').locator('xpath=../..').locator('img').count()).toBe(0);
    await page.keyboard.press('Escape');
    // The account page: the initial in the circle, no broken image nor its alt text.
    await openAccount(page);
    await expect.poll(() => page.getByAltText('Your profile picture').count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(async () => (await page.getByTestId('avatar-drop').locator('span[aria-hidden]').first().innerText()).trim(), { timeout: 10_000 }).toBe(initial);
    // After a reload as well (the picture fails before the page is interactive).
    await page.reload();
    await page.locator('label[for="avatar-file"]').waitFor({ timeout: 20_000 });
    await expect.poll(() => page.getByAltText('Your profile picture').count(), { timeout: 10_000 }).toBe(0);
    await expect.poll(() => accountButton(page).locator('img').count(), { timeout: 10_000 }).toBe(0);
  });

  test('by keyboard, focus stays on the picture control after an upload and after "Remove picture"', async () => {
    const { page } = await signedInUser(fixture);
    await openAccount(page);
    await page.locator('#avatar-file').focus();
    await expect.poll(() => focused(page)).toBe('#avatar-file');
    // The file goes to the focused control as the browser's file dialog would hand it over (Space opens that
    // dialog; whether a headless browser shows it is not what this test is about, and on one CI machine it
    // did not). The upload then disables the control, which drops focus: it must come back.
    await page.locator('#avatar-file').setInputFiles({ name: 'k.png', mimeType: 'image/png', buffer: png(32, [10, 200, 10]) });
    await toastWith(page, 'Picture saved').waitFor({ timeout: 20_000 });
    await expect.poll(() => focused(page)).toBe('#avatar-file');
    await page.getByRole('button', { name: 'Remove picture' }).focus();
    await page.keyboard.press('Enter');
    await toastWith(page, 'Picture removed').waitFor({ timeout: 20_000 });
    await expect.poll(() => focused(page)).toBe('#avatar-file');
  });

  test('"Remove picture" says "Removing…" while it runs and keeps keyboard focus (a second Enter sends nothing); a failure leaves the picture, focus on the button', async () => {
    const { page } = await signedInUser(fixture);
    await openAccount(page);
    await page.locator('#avatar-file').setInputFiles({ name: 'r.png', mimeType: 'image/png', buffer: png(32, [200, 200, 10]) });
    await toastWith(page, 'Picture saved').waitFor({ timeout: 20_000 });
    // The removal is saved on the user (PUT /auth/v1/user): held, then it gets no answer.
    let saves = 0;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/auth/v1/user', async (route) => {
      if (route.request().method() !== 'PUT') return route.continue();
      saves += 1;
      await held;
      return route.abort('internetdisconnected');
    });
    await page.getByRole('button', { name: 'Remove picture' }).focus();
    await page.keyboard.press('Enter');
    const removing = page.getByRole('button', { name: 'Removing…' });
    await removing.waitFor();
    expect(await removing.getAttribute('aria-disabled')).toBe('true');
    expect(await focused(page)).toBe('Removing…');
    await page.keyboard.press('Enter');
    release();
    await page.getByRole('alert').filter({ hasText: 'Could not reach' }).waitFor({ timeout: 20_000 });
    expect(saves).toBe(1);
    expect(await page.getByAltText('Your profile picture').count()).toBe(1);
    await expect.poll(() => focused(page)).toBe('Remove picture');
  });
});

describe('note attachments', () => {
  test('two files at once with progress; cancel one; download with equal bytes; delete with confirmation; the note takes its files along', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Trip plans', body: 'Tickets attached' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByText('No files yet.').waitFor({ timeout: 20_000 });

    const plan = Buffer.from('Day 1: museum\n'.repeat(50_000)); // 700 kB
    const photo = Buffer.from(Array.from({ length: 500_000 }, (_, i) => (i * 31) % 256));
    await slowUploads(page, 500_000);
    await page.locator('#attachments-file').setInputFiles([
      { name: 'plan.txt', mimeType: 'text/plain', buffer: plan },
      { name: 'photo.bin', mimeType: 'application/octet-stream', buffer: photo },
    ]);
    const planBar = page.getByRole('progressbar', { name: 'Upload of plan.txt' });
    const photoBar = page.getByRole('progressbar', { name: 'Upload of photo.bin' });
    await planBar.waitFor();
    await photoBar.waitFor();
    await expect.poll(async () => Number(await planBar.getAttribute('value')), { timeout: 10_000 }).toBeGreaterThan(0);
    await toastWith(page, '2 files attached').waitFor({ timeout: 30_000 });
    const list = page.getByRole('list', { name: 'Attached files' });
    // Oldest first: the smaller file finishes first, so the order is the order they arrived in.
    await expect.poll(async () => (await list.getByRole('listitem').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ')).sort()).toEqual([
      'photo.bin 500 kB · application/octet-stream Download Delete',
      'plan.txt 700 kB · text/plain Download Delete',
    ]);

    // Cancel: the row goes, nothing is stored, and the clean-up of the file that never arrived is no error.
    const problems = recordConsoleProblems(page);
    const cleanups: number[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/api/trpc/attachments.delete')) cleanups.push(response.status());
    });
    await page.locator('#attachments-file').setInputFiles({ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(3_000_000, 7) });
    await page.getByRole('progressbar', { name: 'Upload of big.bin' }).waitFor();
    await page.getByRole('button', { name: 'Cancel upload of big.bin' }).click();
    await page.getByRole('progressbar', { name: 'Upload of big.bin' }).waitFor({ state: 'detached' });
    await slowUploads(page, null);
    await expect.poll(() => storedNames('attachments', `${id}/${note!.id}`), { timeout: 10_000 }).toEqual(['photo.bin', 'plan.txt']);
    expect(await list.getByRole('listitem').count()).toBe(2);
    await expect.poll(() => cleanups).toEqual([200]);
    expect(problems).toEqual([]);

    // Download: the browser saves the file, bytes equal.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download plan.txt' }).click()]);
    expect(download.suggestedFilename()).toBe('plan.txt');
    expect((await readFile((await download.path())!)).equals(plan)).toBe(true);
    expect(new URL(page.url()).pathname).toBe(`/notes/${note!.id}`);

    // Delete one, after a confirmation.
    await page.getByRole('button', { name: 'Delete photo.bin' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this file?' });
    await confirm.waitFor();
    await confirm.getByRole('button', { name: 'Delete file' }).click();
    await toastWith(page, 'File deleted').waitFor();
    await expect.poll(() => list.getByRole('listitem').count()).toBe(1);
    expect(await storedNames('attachments', `${id}/${note!.id}`)).toEqual(['plan.txt']);

    // Deleting the note says the file goes for good, and it does; Undo brings the note back without it.
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const noteDialog = page.getByRole('dialog', { name: 'Delete this note?' });
    await noteDialog.getByText('“Trip plans” and its attached file will be deleted.', { exact: false }).waitFor();
    await noteDialog.getByRole('button', { name: 'Delete note' }).click();
    await toastWith(page, 'its file was deleted for good').waitFor({ timeout: 20_000 });
    expect(await storedNames('attachments', `${id}/${note!.id}`)).toEqual([]);
    await toastWith(page, 'its file was deleted for good').getByRole('button', { name: 'Undo' }).click();
    await toastWith(page, 'Trip plans (without its files)').waitFor({ timeout: 20_000 });
  });

  test('Cancel pressed after the file reached storage (its answer still on the way): the file is not kept, the list stays as it was', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Late cancel' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByText('No files yet.').waitFor({ timeout: 20_000 });
    const held = await holdAnswers(page, 'attachments');
    await page.locator('#attachments-file').setInputFiles({ name: 'late.txt', mimeType: 'text/plain', buffer: Buffer.from('arrived whole') });
    expect(await held.next()).toBe(`${id}/${note!.id}/late.txt`);
    expect(await storedNames('attachments', `${id}/${note!.id}`)).toEqual(['late.txt']);
    await page.getByRole('button', { name: 'Cancel upload of late.txt' }).click();
    await page.getByRole('progressbar', { name: 'Upload of late.txt' }).waitFor({ state: 'detached' });
    await expect.poll(() => storedNames('attachments', `${id}/${note!.id}`), { timeout: 10_000 }).toEqual([]);
    await page.getByText('No files yet.').waitFor();
    expect(await page.getByText('late.txt').count()).toBe(0); // no row, no message
    expect(await toastWith(page, 'attached').count()).toBe(0);

    // When that clean-up cannot get through, the page says so and reads the list again: the file shows, to delete.
    await page.route('**/api/trpc/attachments.delete**', (route) => route.abort());
    await page.locator('#attachments-file').setInputFiles({ name: 'late2.txt', mimeType: 'text/plain', buffer: Buffer.from('also whole') });
    expect(await held.next()).toBe(`${id}/${note!.id}/late2.txt`);
    await page.getByRole('button', { name: 'Cancel upload of late2.txt' }).click();
    await page.getByText('“late2.txt” may have been stored just before Cancel: if it is in the list below, delete it there.').waitFor();
    await page.getByRole('list', { name: 'Attached files' }).getByRole('button', { name: 'Delete late2.txt' }).waitFor();
    await page.unroute('**/api/trpc/attachments.delete**');

    // The same on the account page: a cancelled picture is not left behind in the bucket, and none shows.
    await openAccount(page);
    const heldPicture = await holdAnswers(page, 'avatars');
    await page.locator('#avatar-file').setInputFiles({ name: 'late.png', mimeType: 'image/png', buffer: png(16, [10, 120, 10]) });
    const key = await heldPicture.next();
    expect(key).toMatch(new RegExp(`^${id}/[0-9a-z-]+\\.png$`));
    expect(await storedNames('avatars', id)).toEqual([key.split('/')[1]]);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.getByRole('progressbar', { name: 'Picture upload' }).waitFor({ state: 'detached' });
    await expect.poll(() => storedNames('avatars', id), { timeout: 10_000 }).toEqual([]);
    expect(await headerPicture(page)).toBeNull();
  });

  test('a file attached while another of the same name is still uploading gets a name of its own: both are kept, no error', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Two drops' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByText('No files yet.').waitFor({ timeout: 20_000 });
    await slowUploads(page, 300_000);
    await page.locator('#attachments-file').setInputFiles({ name: 'scan.pdf', mimeType: 'application/pdf', buffer: Buffer.alloc(1_500_000, 1) });
    await page.getByRole('progressbar', { name: 'Upload of scan.pdf' }).waitFor();
    // A second scan of the same name, while the first is on its way.
    await page.locator('#attachments-file').setInputFiles({ name: 'scan.pdf', mimeType: 'application/pdf', buffer: Buffer.alloc(1_000, 2) });
    await toastWith(page, 'saved as “scan (2).pdf”').waitFor({ timeout: 20_000 });
    await slowUploads(page, null);
    await expect.poll(() => storedNames('attachments', `${id}/${note!.id}`), { timeout: 20_000 }).toEqual(['scan (2).pdf', 'scan.pdf']);
    await expect.poll(() => page.getByRole('list', { name: 'Attached files' }).getByRole('listitem').count()).toBe(2);
    expect(await page.getByText('exists already').count()).toBe(0);
  });

  test('files dropped on the panel are attached', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Dropped' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByText('No files yet.').waitFor({ timeout: 20_000 });
    // What the browser hands the page when files are dragged from the desktop: dragover, then drop with the files.
    await page.getByTestId('attachments-drop').evaluate((zone) => {
      const data = new DataTransfer();
      data.items.add(new File(['first'], 'one.txt', { type: 'text/plain' }));
      data.items.add(new File(['second!'], 'two.csv', { type: 'text/csv' }));
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    });
    await toastWith(page, '2 files attached').waitFor({ timeout: 20_000 });
    expect(await storedNames('attachments', `${id}/${note!.id}`)).toEqual(['one.txt', 'two.csv']);
    await expect.poll(() => page.getByRole('list', { name: 'Attached files' }).getByRole('listitem').count()).toBe(2);
  });

  test("downloads are saved under the file's name exactly: spaces, parentheses, apostrophes", async () => {
    const { page, id, email } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Names' }]);
    const token = await accessToken(email);
    const names = ['dup (2).txt', "Mum's list (final).txt", 'a+b, c!.txt', 'plain.txt'];
    for (const name of names) await storeAs(token, 'attachments', `${id}/${note!.id}/${name}`, `bytes of ${name}`, 'text/plain');
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByRole('list', { name: 'Attached files' }).waitFor({ timeout: 20_000 });
    for (const name of names) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${name}`, exact: true }).click()]);
      expect(download.suggestedFilename()).toBe(name);
      expect((await readFile((await download.path())!)).toString()).toBe(`bytes of ${name}`);
    }
    expect(new URL(page.url()).pathname).toBe(`/notes/${note!.id}`);
  });

  test('Download says it is working while its link is fetched: a second press does nothing, focus stays on it, a failure is said in words', async () => {
    const { page, id, email } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Download pending' }]);
    const token = await accessToken(email);
    await storeAs(token, 'attachments', `${id}/${note!.id}/a.txt`, 'bytes of a', 'text/plain');
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByRole('list', { name: 'Attached files' }).waitFor({ timeout: 20_000 });
    let asked = 0;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route(/\/api\/trpc\/attachments\.downloadUrl/, async (route) => {
      asked += 1;
      await held;
      await route.continue();
    });
    const downloads: string[] = [];
    page.on('download', (download) => downloads.push(download.suggestedFilename()));
    const button = page.getByRole('listitem').filter({ hasText: 'a.txt' }).getByRole('button').first();

    await button.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => button.getAttribute('aria-disabled')).toBe('true');
    expect(await button.innerText()).toBe('Preparing…');
    await page.keyboard.press('Enter');
    await button.click({ force: true }); // aria-disabled: Playwright would wait for it to be enabled
    await button.dblclick({ force: true });
    expect(await focused(page)).toBe('Preparing download of a.txt');
    await page.waitForTimeout(300);
    expect(asked).toBe(1);
    release();
    await expect.poll(() => downloads, { timeout: 10_000 }).toEqual(['a.txt']);
    await expect.poll(() => button.innerText()).toBe('Download');
    expect(await button.getAttribute('aria-disabled')).not.toBe('true');
    expect(await focused(page)).toBe('Download a.txt');
    await page.waitForTimeout(500);
    expect(downloads).toEqual(['a.txt']);
    expect(asked).toBe(1);

    // No answer: the toast says why in words, the button is ready again with focus on it.
    await page.unroute(/\/api\/trpc\/attachments\.downloadUrl/);
    await page.route(/\/api\/trpc\/attachments\.downloadUrl/, (route) => route.abort('connectionreset'));
    await page.keyboard.press('Enter');
    const failed = toastWith(page, 'The file could not be downloaded');
    await failed.waitFor();
    expect(await failed.innerText()).toContain("Can't reach the server");
    await expect.poll(() => button.innerText()).toBe('Download');
    expect(await focused(page)).toBe('Download a.txt');
    expect(downloads).toEqual(['a.txt']);
  });

  test('a file deleted elsewhere: Download and Delete say it is gone, the list drops it, and focus goes to the next file', async () => {
    const { page, id, email } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Gone elsewhere' }]);
    const token = await accessToken(email);
    for (const name of ['a.txt', 'b.txt', 'c.txt']) await storeAs(token, 'attachments', `${id}/${note!.id}/${name}`, name, 'text/plain');
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByRole('list', { name: 'Attached files' }).waitFor({ timeout: 20_000 });
    const removeElsewhere = async (name: string) => {
      const res = await fetch(`${supabaseURL}/storage/v1/object/attachments/${id}/${note!.id}/${name}`, { method: 'DELETE', headers: service });
      expect(res.status).toBe(200);
    };
    const listed = () => page.getByRole('list', { name: 'Attached files' }).getByRole('listitem').allInnerTexts();

    await removeElsewhere('a.txt');
    await page.getByRole('button', { name: 'Download a.txt', exact: true }).focus();
    await page.keyboard.press('Enter');
    const gone = toastWith(page, 'The file could not be downloaded');
    await gone.waitFor();
    expect(await gone.innerText()).toContain('This file does not exist any more.');
    await expect.poll(async () => (await listed()).some((text) => text.includes('a.txt')), { timeout: 5000 }).toBe(false);
    await expect.poll(() => focused(page)).toBe('Download b.txt');

    await removeElsewhere('b.txt');
    await page.getByRole('button', { name: 'Delete b.txt', exact: true }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Delete this file?' });
    await dialog.getByRole('button', { name: 'Delete file' }).focus();
    await page.keyboard.press('Enter');
    // (the Download's toast, saying the same of a.txt, may still be open)
    const notDeleted = toastWith(page, 'The file was not deleted');
    await notDeleted.waitFor();
    expect(await notDeleted.innerText()).toContain('This file does not exist any more.');
    await expect.poll(async () => (await listed()).some((text) => text.includes('b.txt')), { timeout: 5000 }).toBe(false);
    await expect.poll(() => focused(page)).toBe('Download c.txt');
  });

  test('a name storage cannot keep is changed, and the page says what it was saved as; a long name wraps inside the toast', async () => {
    const { page, id } = await signedInUser(fixture, { viewport: { width: 390, height: 844 } });
    const [note] = await seedNotes(id, [{ title: 'Renamed' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByText('No files yet.').waitFor({ timeout: 20_000 });
    const long = `${'x'.repeat(296)}.txt`;
    await page.locator('#attachments-file').setInputFiles([
      { name: 'Résumé 報告.txt', mimeType: 'text/plain', buffer: Buffer.from('cv') },
      { name: 'plain.txt', mimeType: 'text/plain', buffer: Buffer.from('p') },
      { name: long, mimeType: 'text/plain', buffer: Buffer.from('l') },
    ]);
    const toast = toastWith(page, '3 files attached');
    await toast.waitFor({ timeout: 20_000 });
    const shortened = `${'x'.repeat(196)}.txt`;
    const text = (await toast.innerText()).replace(/\s+/g, ' ');
    expect(text).toContain('Résumé 報告.txt (saved as “Resume __.txt”)');
    expect(text).toContain(`${long} (saved as “${shortened}”)`);
    expect(text).toContain('plain.txt');
    expect(text).not.toContain('plain.txt (saved as');
    expect((await storedNames('attachments', `${id}/${note!.id}`)).sort()).toEqual(['Resume __.txt', 'plain.txt', shortened].sort());
    // The long name wraps inside the toast: nothing past the card or the viewport.
    const overflow = await toast.evaluate((el) => {
      const card = el.firstElementChild!.getBoundingClientRect();
      const widest = Math.max(...Array.from(el.querySelectorAll('span')).map((s) => s.getBoundingClientRect().right));
      return { card: card.right, widest, viewport: window.innerWidth, scroll: document.documentElement.scrollWidth };
    });
    expect(overflow.widest).toBeLessThanOrEqual(overflow.card);
    expect(overflow.card).toBeLessThanOrEqual(overflow.viewport);
    expect(overflow.scroll).toBeLessThanOrEqual(overflow.viewport);
  });

  test('by keyboard, deleting a file puts focus on the next file, then the last one, then "Attach files"', async () => {
    const { page, id, email } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Focus' }]);
    const token = await accessToken(email);
    for (const name of ['a.txt', 'b.txt', 'c.txt']) await storeAs(token, 'attachments', `${id}/${note!.id}/${name}`, name, 'text/plain');
    await gotoHydrated(page, `/notes/${note!.id}`);
    const list = page.getByRole('list', { name: 'Attached files' });
    await list.waitFor({ timeout: 20_000 });
    const deleteByKeyboard = async (name: string) => {
      await page.getByRole('button', { name: `Delete ${name}`, exact: true }).focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Delete this file?' });
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Delete file' }).focus();
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(() => page.getByRole('button', { name: `Delete ${name}`, exact: true }).count()).toBe(0);
    };
    await deleteByKeyboard('a.txt');
    await expect.poll(() => focused(page)).toBe('Download b.txt');
    await deleteByKeyboard('c.txt');
    await expect.poll(() => focused(page)).toBe('Download b.txt');
    await deleteByKeyboard('b.txt');
    await page.getByText('No files yet.').waitFor();
    await expect.poll(() => focused(page)).toBe('#attachments-file');
  });

  test('by keyboard, a file delete that failed leaves focus on the file\'s Delete button, so Enter tries again', async () => {
    const { page, id, email } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Delete fails' }]);
    const token = await accessToken(email);
    await storeAs(token, 'attachments', `${id}/${note!.id}/a.txt`, 'a', 'text/plain');
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByRole('list', { name: 'Attached files' }).waitFor({ timeout: 20_000 });
    let deletes = 0;
    await page.route(/\/api\/trpc\/attachments\.delete/, (route) => {
      deletes += 1;
      return deletes === 1 ? route.abort('connectionreset') : route.continue();
    });
    await page.getByRole('button', { name: 'Delete a.txt', exact: true }).focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Delete this file?' });
    await dialog.getByRole('button', { name: 'Delete file' }).focus();
    await page.keyboard.press('Enter');
    await toastWith(page, 'The file was not deleted').waitFor();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toBe('Delete a.txt');
    await page.keyboard.press('Enter');
    await dialog.getByRole('button', { name: 'Delete file' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('No files yet.').waitFor();
    await expect.poll(() => focused(page)).toBe('#attachments-file');
  });

  test('by keyboard, cancelling an upload puts focus on the next upload\'s Cancel, then on "Attach files"', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Cancel by keyboard' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByText('No files yet.').waitFor({ timeout: 20_000 });
    await slowUploads(page, 50_000);
    await page.locator('#attachments-file').setInputFiles([
      { name: 'one.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(2_000_000, 1) },
      { name: 'two.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(2_000_000, 2) },
    ]);
    await page.getByRole('progressbar', { name: 'Upload of two.bin' }).waitFor();
    await page.getByRole('button', { name: 'Cancel upload of one.bin' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('progressbar', { name: 'Upload of one.bin' }).waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toBe('Cancel upload of two.bin');
    await page.keyboard.press('Enter');
    await page.getByRole('progressbar', { name: 'Upload of two.bin' }).waitFor({ state: 'detached' });
    await expect.poll(() => focused(page)).toBe('#attachments-file');
    await slowUploads(page, null);
    await page.getByText('No files yet.').waitFor();
  });

  test('by keyboard, an upload finishing while its Cancel has focus puts focus on the next upload\'s Cancel, then on "Attach files"', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Finish with focus on Cancel' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByText('No files yet.').waitFor({ timeout: 20_000 });
    await slowUploads(page, 100_000);
    await page.locator('#attachments-file').setInputFiles([
      { name: 'small.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(150_000, 1) },
      { name: 'large.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(3_000_000, 2) },
    ]);
    await page.getByRole('progressbar', { name: 'Upload of large.bin' }).waitFor();
    await page.getByRole('button', { name: 'Cancel upload of small.bin' }).focus();
    // small.bin arrives by itself: its row (and the focused Cancel) goes.
    await page.getByRole('progressbar', { name: 'Upload of small.bin' }).waitFor({ state: 'detached', timeout: 20_000 });
    await expect.poll(() => focused(page)).toBe('Cancel upload of large.bin');
    await slowUploads(page, null);
    await page.getByRole('progressbar', { name: 'Upload of large.bin' }).waitFor({ state: 'detached', timeout: 20_000 });
    await expect.poll(() => focused(page)).toBe('#attachments-file');
    await toastWith(page, '2 files attached').waitFor();
    await page.getByRole('button', { name: 'Download large.bin', exact: true }).waitFor();
  });

  test('a file over 20 MB gets a clear message before any upload', async () => {
    const { page, id } = await signedInUser(fixture);
    const [note] = await seedNotes(id, [{ title: 'Big' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByText('No files yet.').waitFor({ timeout: 20_000 });
    await page.locator('#attachments-file').setInputFiles([
      { name: 'movie.mp4', mimeType: 'video/mp4', buffer: Buffer.alloc(20_000_001) },
      { name: 'ok.txt', mimeType: 'text/plain', buffer: Buffer.from('fine') },
    ]);
    // One byte over: both figures exact, so the refusal does not read "20 MB … at most 20 MB".
    await page.getByRole('alert').filter({ hasText: '“movie.mp4” is 20,000,001 bytes: files can be at most 20,000,000 bytes (20 MB).' }).waitFor();
    await toastWith(page, 'File attached').waitFor({ timeout: 20_000 });
    expect(await storedNames('attachments', `${id}/${note!.id}`)).toEqual(['ok.txt']);
  });

  /**
   * A signed-in user's note with `files` attached files, open, its file rows' renders recorded from the start;
   * `shown` rows listed (all of them, or the first page of a long list).
   */
  async function noteWithFilesOpen(files: number, note: { title: string; body?: string }, shown = files, beforeOpen?: (page: Page) => void) {
    const { page, id, email } = await signedInUser(fixture);
    const [seeded] = await seedNotes(id, [note]);
    const token = await accessToken(email);
    for (let i = 0; i < files; i += 20)
      await Promise.all(
        Array.from({ length: Math.min(20, files - i) }, (_, j) =>
          storeAs(token, 'attachments', `${id}/${seeded!.id}/file-${i + j}.txt`, `file ${i + j}`, 'text/plain'),
        ),
      );
    await recordRenders(page, 'ul[aria-label="Attached files"] > li');
    beforeOpen?.(page);
    await gotoHydrated(page, `/notes/${seeded!.id}`);
    const rows = page.getByRole('list', { name: 'Attached files' }).getByRole('listitem');
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(shown);
    return { page, rows, email, id, noteId: seeded!.id, before: await rendersOf(page) };
  }

  test('a note with 3,000 files lists the newest 100 (200 buttons, not 6,000) from answers of at most 101 files, not all 3,000 (the delete dialog still says 3,000), the next 100 by "Show more" (by keyboard: focus on the first of them)', { timeout: 180_000 }, async () => {
    const FILES = 3000;
    // The files each of the page's API answers named: the first view asks for those it shows, not all 3,000 (ADR 157).
    const listedPerAnswer: number[] = [];
    const { page, rows } = await noteWithFilesOpen(FILES, { title: 'Three thousand files' }, 100, (page) =>
      page.on('response', async (response) => {
        if (/\/api\/trpc\/[^?]*attachments\./.test(response.url())) listedPerAnswer.push(((await response.text().catch(() => '')).match(/"name":"file-/g) ?? []).length);
      }),
    );
    const section = page.getByRole('region', { name: 'Attachments' });
    await section.getByText('The newest 100 of 3,000 files').waitFor({ timeout: 20_000 });
    expect(listedPerAnswer.length).toBeGreaterThan(0);
    expect(Math.max(...listedPerAnswer)).toBeLessThanOrEqual(101);
    // The note's delete dialog says how many files go with it: all of them, not the 100 shown.
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const noteDialog = page.getByRole('dialog', { name: 'Delete this note?' });
    await noteDialog.getByText('“Three thousand files” and its 3,000 attached files will be deleted.', { exact: false }).waitFor();
    await page.keyboard.press('Escape');
    await noteDialog.waitFor({ state: 'hidden' });
    // Newest first: a file just attached is at the top, not after thousands of rows (the last 20 were stored last).
    expect(await rows.first().locator('span').first().innerText()).toMatch(/^file-29[89]\d\.txt$/);
    expect(await page.locator('ul[aria-label="Attached files"] button').count()).toBe(200);

    // By keyboard: "Show 100 more" lists the next ones and puts focus on the first of them (not on <body>).
    const more = section.getByRole('button', { name: 'Show 100 more files' });
    await more.focus();
    await page.keyboard.press('Enter');
    // Storage is asked for the newest 200 now (ADR 157): the rows shown stay, the button says so meanwhile.
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(200);
    await section.getByText('The newest 200 of 3,000 files').waitFor();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(`Download ${await rows.nth(100).locator('span').first().innerText()}`);
    // Tab from there walks the new rows in order.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toMatch(/^Delete file-\d+\.txt$/);
  });

  test('a "Show more" that gets no answer keeps the rows shown and focus on its button, says so in a toast, and works when pressed again', async () => {
    const { page, rows } = await noteWithFilesOpen(120, { title: 'More fails' }, 100);
    const section = page.getByRole('region', { name: 'Attachments' });
    await section.getByText('The newest 100 of 120 files').waitFor({ timeout: 20_000 });
    await page.route(/\/api\/trpc\/[^?]*attachments\.newest/, (route) => route.abort('connectionreset'));
    await section.getByRole('button', { name: 'Show 20 more files' }).focus();
    await page.keyboard.press('Enter');
    await toastWith(page, 'More files could not be shown').waitFor({ timeout: 30_000 });
    expect(await rows.count()).toBe(100);
    expect(await focused(page)).toBe('Show 20 more files');
    await page.unrouteAll({ behavior: 'wait' });
    await page.keyboard.press('Enter');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(120);
    await expect.poll(() => focused(page)).toBe(`Download ${await rows.nth(100).locator('span').first().innerText()}`);
  });

  test('a deleted file leaves the list at once (focus on the next file), not when the list has been read again (seconds with thousands of files)', async () => {
    const { page, rows } = await noteWithFilesOpen(3, { title: 'Quick delete' });
    // Reading the list again takes 3 s, as it does for a note with a few thousand files on a busy server.
    await page.route(/\/api\/trpc\/[^?]*attachments\.(list|newest)/, async (route) => {
      const response = await route.fetch();
      await sleep(3_000);
      await route.fulfill({ response });
    });
    const names = await Promise.all([0, 1, 2].map((i) => rows.nth(i).locator('span').first().innerText()));
    await page.getByRole('button', { name: `Delete ${names[1]}`, exact: true }).click();
    await page.getByRole('dialog', { name: 'Delete this file?' }).getByRole('button', { name: 'Delete file' }).click();
    await toastWith(page, 'File deleted').waitFor();
    await expect.poll(() => rows.count(), { timeout: 1_000 }).toBe(2);
    await expect.poll(() => focused(page), { timeout: 1_000 }).toBe(`Download ${names[2]}`);
    expect(await page.getByRole('dialog', { name: 'Delete this file?' }).count()).toBe(0);
    await page.unrouteAll({ behavior: 'wait' }); // the held list answer arrives before the page closes
    expect(await rows.count()).toBe(2);
  });

  test('a file just attached is at the top of the list at once, not when the list has been read again (seconds with thousands of files); one added elsewhere shows up with that read', async () => {
    const { page, rows, email, id, noteId } = await noteWithFilesOpen(3, { title: 'Quick attach' });
    // Reading the list again takes 3 s, as it does for a note with a few thousand files on a busy server.
    await page.route(/\/api\/trpc\/[^?]*attachments\.(list|newest)/, async (route) => {
      const response = await route.fetch();
      await sleep(3_000);
      await route.fulfill({ response });
    });
    // Another device attaches a file meanwhile: this page learns of it when it reads the list again.
    await storeAs(await accessToken(email), 'attachments', `${id}/${noteId}/elsewhere.txt`, 'from elsewhere', 'text/plain');
    await page.locator('#attachments-file').setInputFiles({ name: 'new.txt', mimeType: 'text/plain', buffer: Buffer.from('new') });
    await toastWith(page, 'File attached').waitFor({ timeout: 20_000 });
    await expect.poll(() => rows.count(), { timeout: 1_000 }).toBe(4);
    expect(await rows.first().locator('span').first().innerText()).toBe('new.txt');
    expect(await rows.first().locator('span').nth(1).innerText()).toBe('3 bytes · text/plain');
    await page.unrouteAll({ behavior: 'wait' }); // the held list answer arrives
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(5);
    expect(await rows.first().locator('span').first().innerText()).toBe('new.txt');
    expect(await rows.nth(1).locator('span').first().innerText()).toBe('elsewhere.txt');
  });

  test('typing in a note with many files renders none of its file rows again (a keystroke costs the same with 60 files as with none)', async () => {
    const FILES = 60;
    const { page, before } = await noteWithFilesOpen(FILES, { title: 'Many files', body: 'Start' });
    expect(before.seen).toBe(FILES); // the recorder sees the rows

    const text = page.getByLabel('Note', { exact: true });
    await text.click();
    await page.keyboard.press('End');
    await page.keyboard.type(' typed fast, twenty');
    expect(await text.inputValue()).toBe('Start typed fast, twenty');
    expect((await rendersOf(page)).rendered - before.rendered).toBe(0);
  });

  test("an upload's progress renders none of the file rows again, nor does its arrival in the list", async () => {
    const FILES = 40;
    const { page, rows, before } = await noteWithFilesOpen(FILES, { title: 'Many files, one more' });

    await slowUploads(page, 400_000);
    await page.locator('#attachments-file').setInputFiles({ name: 'more.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(1_200_000, 3) });
    const bar = page.getByRole('progressbar', { name: 'Upload of more.bin' });
    await bar.waitFor();
    await expect.poll(async () => Number(await bar.getAttribute('value')), { timeout: 10_000 }).toBeGreaterThan(0);
    await toastWith(page, 'File attached').waitFor({ timeout: 30_000 });
    await slowUploads(page, null);
    await expect.poll(() => rows.count()).toBe(FILES + 1);
    const after = await rendersOf(page);
    expect(after.seen - before.seen).toBe(1); // the new file's row
    expect(after.rendered - before.rendered).toBe(0);
  });

  test("a second user cannot fetch the first one's attachment through the API or a guessed URL", async () => {
    const aliceEmail = uniqueEmail('alice-files');
    const aliceId = await createUser(aliceEmail);
    const [note] = await seedNotes(aliceId, [{ title: 'Alice only' }]);
    const aliceToken = await accessToken(aliceEmail);
    const key = `${aliceId}/${note!.id}/secret.txt`;
    const up = await fetch(`${supabaseURL}/storage/v1/object/attachments/${key}`, {
      method: 'POST',
      headers: { apikey: ANON_KEY, authorization: `Bearer ${aliceToken}`, 'content-type': 'text/plain' },
      body: 'the secret',
    });
    expect(up.status).toBe(200);

    const { page: bobPage, email: bobEmail } = await signedInUser(fixture);
    const bobToken = await accessToken(bobEmail);
    const asBob = { apikey: ANON_KEY, authorization: `Bearer ${bobToken}` };
    // Storage directly, with Bob's token: download, sign, list.
    expect((await fetch(`${supabaseURL}/storage/v1/object/attachments/${key}`, { headers: asBob })).status).not.toBe(200);
    const sign = await fetch(`${supabaseURL}/storage/v1/object/sign/attachments/${key}`, {
      method: 'POST',
      headers: { ...asBob, 'content-type': 'application/json' },
      body: JSON.stringify({ expiresIn: 60 }),
    });
    expect(sign.status).not.toBe(200);
    const listed = await fetch(`${supabaseURL}/storage/v1/object/list/attachments`, {
      method: 'POST',
      headers: { ...asBob, 'content-type': 'application/json' },
      body: JSON.stringify({ prefix: `${aliceId}/${note!.id}`, limit: 100, offset: 0, sortBy: { column: 'name', order: 'asc' } }),
    });
    expect(await listed.json()).toEqual([]);
    // Guessed URLs: the public route of the private bucket, a signed route without a valid token.
    expect((await fetch(`${supabaseURL}/storage/v1/object/public/attachments/${key}`)).status).not.toBe(200);
    expect((await fetch(`${supabaseURL}/storage/v1/object/sign/attachments/${key}?token=${bobToken}`)).status).not.toBe(200);
    // The app's API as Bob in his browser: NOT_FOUND, and the note page is a 404.
    const viaApp = await bobPage.evaluate(async ({ noteId }) => {
      const res = await fetch('/api/trpc/attachments.downloadUrl', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ json: { noteId, name: 'secret.txt' } }),
      });
      return { status: res.status, body: await res.text() };
    }, { noteId: note!.id });
    expect(viaApp.status).toBe(404);
    expect(viaApp.body).not.toContain('token=');
    const listViaApp = await bobPage.evaluate(async ({ noteId }) => {
      const res = await fetch(`/api/trpc/attachments.list?input=${encodeURIComponent(JSON.stringify({ json: { noteId } }))}`);
      return (await res.json()) as { result?: { data: { json: unknown } } };
    }, { noteId: note!.id });
    expect(listViaApp.result?.data.json).toEqual([]);
    expect((await bobPage.goto(`/notes/${note!.id}`))?.status()).toBe(404);
    // Alice herself still gets it.
    expect(await (await fetch(`${supabaseURL}/storage/v1/object/attachments/${key}`, { headers: { apikey: ANON_KEY, authorization: `Bearer ${aliceToken}` } })).text()).toBe(
      'the secret',
    );
  });
});

describe('axe: no serious or critical violations', () => {
  test('the account page with a picture, and a note page with attachments and its delete confirmation', async () => {
    const { page, id } = await signedInUser(fixture);
    await openAccount(page);
    await page.locator('#avatar-file').setInputFiles({ name: 'me.png', mimeType: 'image/png', buffer: png(16, [10, 120, 10]) });
    await toastWith(page, 'Picture saved').waitFor({ timeout: 20_000 });
    await page.locator('#avatar-file').setInputFiles({ name: 'x.txt', mimeType: 'text/plain', buffer: Buffer.from('x') });
    await page.getByRole('alert').filter({ hasText: 'not a PNG' }).waitFor();
    const account = await seriousViolations(page);
    expect(account, describeViolations(account)).toEqual([]);

    const [note] = await seedNotes(id, [{ title: 'Axe' }]);
    await gotoHydrated(page, `/notes/${note!.id}`);
    await page.getByText('No files yet.').waitFor({ timeout: 20_000 });
    await page.locator('#attachments-file').setInputFiles([
      { name: 'a.txt', mimeType: 'text/plain', buffer: Buffer.from('a') },
      { name: 'b.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4') },
    ]);
    await toastWith(page, '2 files attached').waitFor({ timeout: 20_000 });
    await page.getByRole('list', { name: 'Attached files' }).waitFor();
    const notePage = await seriousViolations(page);
    expect(notePage, describeViolations(notePage)).toEqual([]);
    await page.getByRole('button', { name: 'Delete a.txt' }).click();
    await page.getByRole('dialog', { name: 'Delete this file?' }).waitFor();
    const dialog = await seriousViolations(page);
    expect(dialog, describeViolations(dialog)).toEqual([]);
  });
});
