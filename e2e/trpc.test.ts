// tRPC as the network sees it: one batched GET with comma-joined paths on load, a POST for the mutation,
// no custom headers, superjson Dates both ways, the pending bar, and the error path for a malformed response.
import type { Page, Request } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { gotoHydrated, sleep, useBrowser } from './browser.ts';

const fixture = useBrowser();

/** Headers a browser sends by itself on fetch(); anything else is a custom header. */
const BROWSER_HEADERS = new Set([
  'accept',
  'accept-encoding',
  'accept-language',
  'cache-control',
  'connection',
  'content-length',
  'content-type',
  'cookie',
  'host',
  'origin',
  'pragma',
  'priority',
  'referer',
  'user-agent',
]);

async function customHeaders(request: Request): Promise<string[]> {
  const headers = await request.allHeaders();
  return Object.keys(headers).filter((name) => !BROWSER_HEADERS.has(name.toLowerCase()) && !name.toLowerCase().startsWith('sec-'));
}

function trpcRequests(page: Page): Request[] {
  const seen: Request[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/api/trpc')) seen.push(request);
  });
  return seen;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

interface SuperJsonEnvelope {
  json?: Record<string, unknown>;
  meta?: { values?: Record<string, unknown> };
}

describe('tRPC over HTTP', () => {
  test('the home page loads its status with exactly one batched GET, comma-joined paths, input in the query string', async () => {
    const page = await fixture.newPage();
    const requests = trpcRequests(page);
    await gotoHydrated(page);
    await page.getByTestId('server-time').waitFor({ state: 'visible', timeout: 15_000 });
    await sleep(1000); // anything else would have gone out by now

    expect(requests.map((r) => `${r.method()} ${r.url()}`)).toHaveLength(1);
    const [request] = requests;
    if (!request) return;
    expect(request.method()).toBe('GET');
    const url = new URL(request.url());
    const paths = decodeURIComponent(url.pathname.slice('/api/trpc/'.length)).split(',');
    expect([...paths].sort()).toEqual(['system.config', 'system.health']);
    expect(url.searchParams.get('batch')).toBe('1');
    const input: unknown = JSON.parse(url.searchParams.get('input') ?? 'null');
    expect(input, 'one input entry per batched call, keyed by index').toMatchObject({});
    expect(Object.keys(input as object).length).toBeLessThanOrEqual(2);
    expect(await customHeaders(request)).toEqual([]);

    const response = await request.response();
    expect(response?.status()).toBe(200);
    const body = (await response?.json()) as Array<{ result?: { data?: SuperJsonEnvelope } }>;
    expect(body).toHaveLength(2);
    const health = body[paths.indexOf('system.health')]?.result?.data;
    expect(health?.json).toMatchObject({ ok: true });
    expect(health?.meta?.values, 'the Date travels as a superjson Date').toMatchObject({ time: ['Date'] });
    const config = body[paths.indexOf('system.config')]?.result?.data?.json;
    expect(config?.backend === 'local' || config?.backend === 'hosted').toBe(true);
    expect(typeof config?.supabaseUrl).toBe('string');
  });

  test('the server time arrives as a Date and shows as an ISO time close to now; version and backend URL show', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page);
    const text = (await page.getByTestId('server-time').innerText()).trim();
    expect(text).toMatch(ISO_DATE);
    expect(Math.abs(Date.parse(text) - Date.now())).toBeLessThan(5 * 60_000);
    const main = await page.getByRole('main').innerText();
    expect(main).toMatch(/\d+\.\d+\.\d+/); // the version
    expect(main).toMatch(/https?:\/\/\S+/); // the backend URL
  });

  test('"Check connection" POSTs the mutation with its JSON input in the body and gets a Date back', async () => {
    const page = await fixture.newPage();
    const requests = trpcRequests(page);
    await gotoHydrated(page);
    await page.getByTestId('server-time').waitFor({ state: 'visible', timeout: 15_000 });
    requests.length = 0;

    const responsePromise = page.waitForResponse((r) => new URL(r.url()).pathname.startsWith('/api/trpc/system.clockSkew'));
    await page.getByRole('button', { name: 'Check connection' }).click();
    const response = await responsePromise;
    const request = response.request();

    expect(request.method()).toBe('POST');
    expect(new URL(request.url()).pathname).toBe('/api/trpc/system.clockSkew');
    expect(new URL(request.url()).searchParams.get('input'), 'no input in the URL of a POST').toBeNull();
    expect(await customHeaders(request)).toEqual([]);
    const sent = request.postDataJSON() as Record<string, SuperJsonEnvelope> | SuperJsonEnvelope;
    const envelope: SuperJsonEnvelope = '0' in sent ? (sent as Record<string, SuperJsonEnvelope>)['0'] ?? {} : (sent as SuperJsonEnvelope);
    expect(typeof envelope.json?.clientTime).toBe('string');
    expect(String(envelope.json?.clientTime)).toMatch(ISO_DATE);
    expect(envelope.meta?.values, 'clientTime is sent as a superjson Date').toMatchObject({ clientTime: ['Date'] });

    expect(response.status()).toBe(200);
    const text = await response.text();
    expect(text).toContain('"Date"');
    const parsed = JSON.parse(text) as unknown;
    const result = (Array.isArray(parsed) ? parsed[0] : parsed) as { result?: { data?: SuperJsonEnvelope } };
    expect(result.result?.data?.meta?.values).toMatchObject({ serverTime: ['Date'] });
    expect(typeof result.result?.data?.json?.skewMs).toBe('number');

    await page.getByTestId('toast').filter({ hasText: 'Connected' }).waitFor({ state: 'visible', timeout: 10_000 });
    expect(requests.filter((r) => r.method() === 'POST')).toHaveLength(1);
  });

  test('a pending mutation shows the top progress bar under the toast viewport', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page);
    await page.getByTestId('server-time').waitFor({ state: 'visible', timeout: 15_000 });
    const bar = page.getByRole('progressbar', { name: 'Loading' });
    expect(await bar.isVisible()).toBe(false);

    // Hold the mutation until the bar has been seen.
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/trpc/system.clockSkew**', async (route) => {
      await released;
      await route.continue();
    });
    await page.getByRole('button', { name: 'Check connection' }).click();
    await bar.waitFor({ state: 'visible', timeout: 3000 });
    const box = await bar.boundingBox();
    expect(box?.y ?? -1, 'at the very top').toBeLessThanOrEqual(1);
    const zIndexOf = (selector: string) =>
      page.evaluate((sel) => {
        let el: Element | null = document.querySelector(sel);
        if (!el) return Number.NaN;
        while (el) {
          const z = getComputedStyle(el).zIndex;
          if (z !== 'auto') return Number(z);
          el = el.parentElement;
        }
        return 0;
      }, selector);
    const barZ = await zIndexOf('[role="progressbar"][aria-label="Loading"]');
    await sleep(300);
    expect(await bar.isVisible(), 'the bar stays while the mutation is pending').toBe(true);
    release();

    await page.getByTestId('toast').filter({ hasText: 'Connected' }).waitFor({ state: 'visible', timeout: 10_000 });
    await bar.waitFor({ state: 'hidden', timeout: 3000 });
    // Stacking: the bar's z-index is below the toast viewport's.
    const viewportZ = await zIndexOf('[role="region"][aria-label^="Notifications"]');
    expect(barZ).toBeLessThan(viewportZ);
  });

  test('a JSON response that is not tRPC-shaped (a proxy\'s JSON error) shows an error toast in words, never tRPC\'s "Unable to transform response from server"', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page);
    await page.getByTestId('server-time').waitFor({ state: 'visible', timeout: 15_000 });
    await page.route('**/api/trpc/system.clockSkew**', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ hello: 'world' }) }),
    );
    await page.getByRole('button', { name: 'Check connection' }).click();
    const toast = page.getByTestId('toast').filter({ hasText: 'The server is not answering properly just now' });
    await toast.waitFor({ state: 'visible', timeout: 10_000 });
    expect(await page.getByText('Unable to transform response').count()).toBe(0);
    expect(await page.getByTestId('toast').filter({ hasText: 'Connected' }).count()).toBe(0);
    // An error toast is announced assertively.
    const announced = await toast.evaluate(
      (el) => el.getAttribute('role') ?? el.querySelector('[role="alert"], [role="status"]')?.getAttribute('role') ?? null,
    );
    expect(announced).toBe('alert');
  });

  test('the API answers a malformed call with a 4xx tRPC error carrying code and message', async () => {
    const page = await fixture.newPage();
    await gotoHydrated(page);
    const result = await page.evaluate(async () => {
      const response = await fetch('/api/trpc/system.clockSkew?batch=1', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ 0: { json: { clientTime: 'not a date' } } }),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    });
    expect(result.status).toBe(400);
    const [entry] = result.body as Array<{ error?: { json?: { message?: string; code?: number; data?: Record<string, unknown> } } }>;
    expect(entry?.error?.json?.code).toBe(-32600);
    expect(typeof entry?.error?.json?.message).toBe('string');
    expect(entry?.error?.json?.data).toMatchObject({ code: 'BAD_REQUEST' });
    expect(entry?.error?.json?.data?.zodError, 'zod issues in data for BAD_REQUEST').toBeTruthy();
  });
});
