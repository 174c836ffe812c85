// The realtime socket follows the session (issue 15, docs/decisions/044-live-notes.md): when the access token is
// refreshed while a page with live notes is open, the socket sends the new token to Realtime, changes keep arriving
// after the old token's expiry (localbase shuts a channel down when its token expires), and none is lost around
// the refresh. Real time, no fake clock: localbase is restarted with 130 s tokens for this file, so auth-js
// refreshes (at its first 30-second check with under 120 s left) within a minute of signing in, and the old token
// expires soon after. A page clock moved ahead of the auth server's would make every token it is given look
// almost expired and refresh in a loop — what a first attempt at this test ran into.
import type { BrowserContext, Page, WebSocket } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { sessionCookies, signInViaUI, uniqueEmail } from './auth-helpers.ts';
import { useBackendWith } from './backend-control.ts';
import { gotoHydrated, sleep, useBrowser } from './browser.ts';
import { createUser, listedTitles, listSettled, seedNotes } from './notes-helpers.ts';

const fixture = useBrowser();
const LIVE = { timeout: 8_000 };
const JWT_EXPIRY_S = 130;

useBackendWith({ env: { LOCALBASE_JWT_EXPIRY: String(JWT_EXPIRY_S) } }, 120_000);

interface CookieSession {
  accessToken: string;
  /** Seconds since the epoch. */
  expiresAt: number;
}

/** The session in the `sb-127-auth-token` cookie (or its chunks), decoded as @supabase/ssr wrote it. */
async function cookieSession(context: BrowserContext): Promise<CookieSession> {
  const chunkIndex = (name: string): number => Number(/\.(\d+)$/.exec(name)?.[1] ?? -1);
  const cookies = (await sessionCookies(context)).sort((a, b) => chunkIndex(a.name) - chunkIndex(b.name));
  const raw = cookies.map((c) => c.value).join('');
  expect(raw.startsWith('base64-'), 'a session cookie').toBe(true);
  const session = JSON.parse(Buffer.from(raw.slice('base64-'.length), 'base64url').toString('utf8')) as {
    access_token: string;
    expires_at: number;
  };
  return { accessToken: session.access_token, expiresAt: session.expires_at };
}

/** A Phoenix message as realtime-js 2.x sends it (JSON array `[join_ref, ref, topic, event, payload]`) or as an object. */
interface Frame {
  at: number;
  topic: string;
  event: string;
  payload: Record<string, unknown>;
}

function parseFrame(raw: string | Buffer): Frame | null {
  if (typeof raw !== 'string') return null; // binary broadcasts: none on this page
  const message = JSON.parse(raw) as unknown;
  if (Array.isArray(message)) {
    const [, , topic, event, payload] = message as [unknown, unknown, string, string, Record<string, unknown>];
    return { at: Date.now(), topic, event, payload };
  }
  const m = message as { topic: string; event: string; payload: Record<string, unknown> };
  return { at: Date.now(), topic: m.topic, event: m.event, payload: m.payload };
}

interface Wire {
  sent: Frame[];
  received: Frame[];
  sockets: WebSocket[];
  /** Refresh-token grants the page itself sent (auth-js in the browser). */
  pageRefreshes: number[];
  /** The access tokens those grants returned, in order. */
  refreshedTokens: string[];
  /** App responses (pages, tRPC) that set new session cookies: a refresh done by the web server. */
  serverRefreshes: number[];
}

/** Records the page's realtime frames both ways, and who refreshed the session: the page or the web server. */
function watch(page: Page): Wire {
  const wire: Wire = { sent: [], received: [], sockets: [], pageRefreshes: [], refreshedTokens: [], serverRefreshes: [] };
  page.on('websocket', (socket) => {
    if (!socket.url().includes('/realtime/v1/websocket')) return;
    wire.sockets.push(socket);
    socket.on('framesent', ({ payload }) => {
      const frame = parseFrame(payload);
      if (frame) wire.sent.push(frame);
    });
    socket.on('framereceived', ({ payload }) => {
      const frame = parseFrame(payload);
      if (frame) wire.received.push(frame);
    });
  });
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (request.method() === 'POST' && url.pathname === '/auth/v1/token' && url.searchParams.get('grant_type') === 'refresh_token')
      wire.pageRefreshes.push(Date.now());
  });
  page.on('response', async (response) => {
    const url = new URL(response.url());
    if (url.pathname === '/auth/v1/token' && url.searchParams.get('grant_type') === 'refresh_token' && response.ok()) {
      const body = (await response.json().catch(() => null)) as { access_token?: string } | null;
      if (body?.access_token) wire.refreshedTokens.push(body.access_token);
    }
    if (url.pathname.startsWith('/auth/v1/')) return;
    const setCookie = await response.headerValue('set-cookie').catch(() => null);
    if (setCookie && /sb-[a-z0-9-]+-auth-token/.test(setCookie)) wire.serverRefreshes.push(Date.now());
  });
  return wire;
}

const notesTopic = (userId: string) => `realtime:notes:${userId}`;

/** The tokens the page gave Realtime for its notes channel: in joins and in `access_token` messages, in order. */
function tokensSent(wire: Wire, userId: string): { event: string; token: unknown }[] {
  return wire.sent
    .filter((f) => f.topic === notesTopic(userId) && (f.event === 'phx_join' || f.event === 'access_token'))
    .map((f) => ({ event: f.event, token: f.payload.access_token }));
}

async function liveOn(page: Page): Promise<void> {
  await page.locator('[data-testid="live-status"][data-live="on"]').waitFor({ state: 'attached', ...LIVE });
}

describe('the socket follows the session', () => {
  test(
    'auth-js refreshes the token: the socket sends the new one, changes keep coming after the old one expired, none is lost',
    { timeout: 300_000 },
    async () => {
      const email = uniqueEmail('live-refresh');
      const userId = await createUser(email);
      const context = await fixture.newContext();
      const page = await context.newPage();
      const wire = watch(page);
      await gotoHydrated(page, '/sign-in');
      await signInViaUI(page, email);
      await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
      await listSettled(page);
      await liveOn(page);

      const first = await cookieSession(context);
      expect(first.expiresAt * 1000 - Date.now(), 'localbase issues short tokens for this file').toBeLessThanOrEqual(JWT_EXPIRY_S * 1000);
      expect(tokensSent(wire, userId)[0], 'the channel joined with the session token').toEqual({ event: 'phx_join', token: first.accessToken });

      // A change every second from another "device", from before the refresh until after the old token expired.
      const seeded: string[] = [];
      const writeUntil = first.expiresAt * 1000 + 3_000;
      const writer = (async () => {
        for (let i = 1; Date.now() < writeUntil; i++) {
          const [note] = await seedNotes(userId, [{ title: `Tick ${String(i).padStart(3, '0')}` }]);
          seeded.push(note!.id);
          await sleep(1_000);
        }
      })();

      // (1) The page's auth client refreshes (no reload, no server round trip doing it), the cookie holds the new
      // token, and the socket sends exactly that token on the notes channel.
      await expect
        .poll(() => wire.pageRefreshes.length, { timeout: first.expiresAt * 1000 - Date.now() - 5_000, interval: 500 })
        .toBeGreaterThan(0);
      await expect.poll(async () => (await cookieSession(context)).accessToken, LIVE).not.toBe(first.accessToken);
      const second = await cookieSession(context);
      expect(second.expiresAt).toBeGreaterThan(first.expiresAt);
      await expect
        .poll(() => tokensSent(wire, userId).some((t) => t.event === 'access_token' && t.token === second.accessToken), LIVE)
        .toBe(true);
      const sentAt = wire.sent.find((f) => f.event === 'access_token' && f.payload.access_token === second.accessToken)!.at;
      expect(sentAt, 'the new token went out before the old one expired').toBeLessThan(first.expiresAt * 1000);

      // (2) Past the old token's expiry (localbase would close a channel still on it): the channel is still joined and
      // a change made now still arrives.
      await writer;
      expect(Date.now()).toBeGreaterThan(first.expiresAt * 1000);
      await sleep(2_000);
      await seedNotes(userId, [{ title: 'After the old token expired' }]);
      await expect.poll(async () => (await listedTitles(page))[0], LIVE).toBe('After the old token expired');
      await liveOn(page);
      const notesFrames = wire.received.filter((f) => f.topic === notesTopic(userId));
      expect(notesFrames.filter((f) => f.event === 'system' && f.payload.status === 'error'), 'no channel error').toEqual([]);
      expect(notesFrames.filter((f) => f.event === 'phx_close'), 'the channel was never closed').toEqual([]);
      expect(wire.sockets, 'one socket all along').toHaveLength(1);
      expect(wire.sockets[0]!.isClosed()).toBe(false);

      // (3) Every change made around the refresh reached the page once, as its own message.
      const delivered = notesFrames
        .filter((f) => f.event === 'postgres_changes')
        .map((f) => ((f.payload.data as { record?: { id?: string } } | undefined)?.record?.id ?? ''));
      expect(seeded.length).toBeGreaterThan(JWT_EXPIRY_S / 3);
      expect(seeded.filter((id) => !delivered.includes(id)), 'changes lost').toEqual([]);
      expect(new Set(delivered).size, 'no change delivered twice').toBe(delivered.length);
      await expect.poll(() => page.getByText(`${seeded.length + 1} notes`, { exact: true }).isVisible(), LIVE).toBe(true);

      // auth-js went on refreshing the 130 s tokens every 30 s: the socket sent each new token, in order, once, and
      // the last one it sent is the one the cookie holds. (Should the web server refresh the cookie first in some
      // window — a tRPC request within 90 s of expiry — the socket takes that token from the cookie at its next
      // heartbeat: it is sent too, and is not among the page's own refreshes.)
      expect(wire.refreshedTokens.length).toBeGreaterThanOrEqual(2);
      const accessTokensSent = () => tokensSent(wire, userId).filter((t) => t.event === 'access_token').map((t) => t.token);
      await expect.poll(() => accessTokensSent().filter((t) => wire.refreshedTokens.includes(t as string)), LIVE).toEqual(wire.refreshedTokens);
      await expect.poll(async () => accessTokensSent().at(-1) === (await cookieSession(context)).accessToken, { timeout: 30_000 }).toBe(true);
      expect(new Set(accessTokensSent()).size).toBe(accessTokensSent().length);
    },
  );

  test(
    'a channel Realtime closed because its token expired (no refresh could be had) is joined again with the next session token',
    { timeout: 360_000 },
    async () => {
      const email = uniqueEmail('live-expired');
      const userId = await createUser(email);
      const context = await fixture.newContext();
      const page = await context.newPage();
      const wire = watch(page);
      await gotoHydrated(page, '/sign-in');
      await signInViaUI(page, email);
      await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
      await listSettled(page);
      await liveOn(page);
      const first = await cookieSession(context);

      // The auth server is out of the page's reach (Realtime is not): auth-js cannot refresh, getSession() keeps the
      // old token while it is valid, and Realtime ends the channel when it expires — its rule, and the only way a
      // socket never hears changes with a token that no longer holds. Nothing makes the web server refresh the
      // cookie meanwhile (no request from the page).
      const refusedGrant = (url: URL) => url.pathname === '/auth/v1/token' && url.searchParams.get('grant_type') === 'refresh_token';
      await page.route(refusedGrant, (route) => route.abort('internetdisconnected'));
      await expect
        .poll(
          () => wire.received.some((f) => f.topic === notesTopic(userId) && f.event === 'system' && /Token has expired/.test(String(f.payload.message))),
          { timeout: first.expiresAt * 1000 - Date.now() + 10_000, interval: 1_000 },
        )
        .toBe(true);
      await expect.poll(() => wire.received.some((f) => f.topic === notesTopic(userId) && f.event === 'phx_close'), LIVE).toBe(true);
      await expect.poll(() => page.getByTestId('live-status').innerText(), LIVE).toMatch(/^Reconnecting…/);
      expect(wire.serverRefreshes).toEqual([]);
      const joinsBefore = tokensSent(wire, userId).filter((t) => t.event === 'phx_join').length;
      await seedNotes(userId, [{ title: 'Made while the channel was closed' }]);
      await sleep(3_000);
      expect(tokensSent(wire, userId).filter((t) => t.event === 'phx_join'), 'no join with an expired token').toHaveLength(joinsBefore);

      // The auth server is reachable again: auth-js refreshes (after its failure cooldown), the page joins again with
      // the new token, fetches what it missed, and hears changes again.
      await page.unroute(refusedGrant);
      await page.locator('[data-testid="live-status"][data-live="on"]').waitFor({ state: 'attached', timeout: 120_000 });
      const lastJoin = tokensSent(wire, userId).filter((t) => t.event === 'phx_join').at(-1);
      expect(lastJoin?.token).not.toBe(first.accessToken);
      expect(wire.refreshedTokens, 'joined with a token the session was refreshed to').toContain(lastJoin?.token);
      await expect.poll(async () => (await listedTitles(page))[0], LIVE).toBe('Made while the channel was closed');
      expect(await page.getByTestId('live-status').innerText()).toBe('');
      await seedNotes(userId, [{ title: 'Heard on the new channel' }]);
      await expect.poll(async () => (await listedTitles(page))[0], LIVE).toBe('Heard on the new channel');
    },
  );
});
