// localbase's mailbox in a real browser (decision 021): the developer's tab shows it, another website can neither
// read nor clear it — not by fetch, nor by an <img>, a form POST or a frame.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useBrowser } from './browser.ts';
import { supabaseURL, uniqueEmail } from './auth-helpers.ts';

const browser = useBrowser();
/** The Supabase CLI demo anon key, which the e2e localbase runs with. */
const ANON_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0';

let evil: http.Server;
let evilURL: string;
const email = uniqueEmail('mailbox');

async function messagesTo(to: string): Promise<unknown[]> {
  const res = await fetch(`${supabaseURL}/mailbox/api/messages?to=${encodeURIComponent(to)}`);
  expect(res.status).toBe(200);
  return (await res.json()) as unknown[];
}

beforeAll(async () => {
  // A magic-link mail in the mailbox.
  const sent = await fetch(`${supabaseURL}/auth/v1/otp`, {
    method: 'POST',
    headers: { apikey: ANON_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ email, create_user: true }),
  });
  expect(sent.status).toBe(200);
  const deadline = Date.now() + 10_000;
  while ((await messagesTo(email)).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  // "Another website": a page on http://localhost:<port>, another site than localbase's 127.0.0.1.
  evil = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>evil</title><iframe name="sink"></iframe>');
  });
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
  evilURL = `http://localhost:${(evil.address() as AddressInfo).port}/`;
});

afterAll(() => {
  evil?.close();
});

describe('the mailbox in a browser', () => {
  it('opened from the address bar, it shows the mails with their links', async () => {
    const page = await browser.newPage();
    const response = await page.goto(`${supabaseURL}/mailbox`);
    expect(response?.status()).toBe(200);
    await expect.poll(() => page.getByRole('heading', { name: 'localbase mailbox' }).isVisible()).toBe(true);
    expect(await page.getByText(email).count()).toBeGreaterThan(0);
    // Its own link to the JSON (a same-origin navigation) works too.
    await page.getByRole('link', { name: '/mailbox/api/messages' }).click();
    await expect.poll(() => page.evaluate(() => document.body.innerText.includes('"links"'))).toBe(true);
  });

  it('another website cannot read it or clear it', async () => {
    const page = await browser.newPage();
    await page.goto(evilURL);
    const target = `${supabaseURL}/mailbox/api/messages`;
    const outcome = await page.evaluate(async (url) => {
      const attempt = async (fn: () => Promise<unknown>): Promise<string> => {
        try {
          return `ok ${String(await fn())}`;
        } catch (e) {
          return `failed ${(e as Error).name}`;
        }
      };
      const read = await attempt(async () => (await fetch(url, { credentials: 'include' })).text());
      const readNoCors = await attempt(async () => (await fetch(url, { mode: 'no-cors' })).type);
      const clear = await attempt(async () => (await fetch(url, { method: 'DELETE' })).status);
      const image = await new Promise<string>((resolve) => {
        const img = new Image();
        img.onload = () => resolve('loaded');
        img.onerror = () => resolve('error');
        img.src = url;
      });
      // A form POST into a frame (what a page can send without CORS), with the classic method override.
      const form = document.createElement('form');
      form.method = 'POST';
      form.action = url;
      form.target = 'sink';
      const input = document.createElement('input');
      input.name = '_method';
      input.value = 'DELETE';
      form.append(input);
      document.body.append(form);
      form.submit();
      await new Promise((r) => setTimeout(r, 500));
      return { read, readNoCors, clear, image };
    }, target);
    expect(outcome.read).toBe('failed TypeError'); // no CORS headers: the browser withholds the answer
    expect(outcome.readNoCors).toBe('ok opaque'); // sent, but unreadable — and refused by the server anyway
    expect(outcome.clear).toBe('failed TypeError'); // the preflight is refused: the DELETE is never sent
    expect(outcome.image).toBe('error');
    // Nothing was cleared.
    expect((await messagesTo(email)).length).toBeGreaterThan(0);
  });
});
