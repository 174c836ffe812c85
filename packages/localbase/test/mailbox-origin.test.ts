// The mailbox is same-origin only (decision 021): another website can neither read nor clear it, while the
// developer's own tab and tools without a browser (e2e's fetch, curl) keep working. The Supabase APIs keep their
// open CORS.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anonClient, latestMail, listMail, raw, startTestServer, uniqueEmail, type Localbase, type RawResponse } from './helpers.ts';

let lb: Localbase;
let email: string;

beforeAll(async () => {
  lb = await startTestServer();
  // One mail in the mailbox: a magic link.
  email = uniqueEmail('mailbox');
  const { error } = await anonClient(lb).auth.signInWithOtp({ email });
  if (error) throw error;
  await latestMail(lb, email);
});

afterAll(async () => {
  await lb?.stop();
});

const EVIL = 'http://evil.test';

function corsHeaders(res: RawResponse): string[] {
  const names: string[] = [];
  res.headers.forEach((_value, name) => names.push(name));
  return names.filter((k) => k.startsWith('access-control-'));
}

function expectRefused(res: RawResponse, what: string): void {
  expect(res.status, `${what}: ${res.text}`).toBe(403);
  expect((res.json as { code?: unknown }).code, what).toBe('cross_origin_request_forbidden');
  expect(res.headers.get('x-sb-error-code'), what).toBe('cross_origin_request_forbidden');
  expect(corsHeaders(res), what).toEqual([]);
}

const mailbox = (path: string, init: { method?: string; headers?: Record<string, string> } = {}) =>
  raw(lb, path, { apikey: null, apiVersion: false, method: init.method, headers: init.headers });

describe('requests from another website are refused with 403 and no CORS headers', () => {
  it('reading the messages or the page with a foreign Origin (a fetch or XHR from another site, or from the app)', async () => {
    for (const path of ['/mailbox/api/messages', `/mailbox/api/messages?to=${encodeURIComponent(email)}`, '/mailbox', '/mailbox/nope']) {
      for (const origin of [EVIL, 'null', 'http://127.0.0.1:3000', 'http://localhost:54321', `${lb.url}.evil.test`]) {
        expectRefused(await mailbox(path, { headers: { origin } }), `${path} from ${origin}`);
      }
    }
  });

  it('requests without Origin that a browser marks as from another site (an <img>, a link, a frame)', async () => {
    for (const site of ['cross-site', 'same-site']) {
      const res = await mailbox('/mailbox/api/messages', { headers: { 'sec-fetch-site': site, 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' } });
      expectRefused(res, `sec-fetch-site ${site}`);
    }
    const framed = await mailbox('/mailbox', { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' } });
    expectRefused(framed, 'a cross-site frame');
  });

  it('a cross-site DELETE is refused (also its preflight) and a cross-site form POST too: the messages are still there', async () => {
    const preflight = await mailbox('/mailbox/api/messages', {
      method: 'OPTIONS',
      headers: { origin: EVIL, 'access-control-request-method': 'DELETE' },
    });
    expectRefused(preflight, 'preflight');
    expectRefused(await mailbox('/mailbox/api/messages', { method: 'DELETE', headers: { origin: EVIL } }), 'DELETE');
    expectRefused(
      await mailbox('/mailbox/api/messages', { method: 'DELETE', headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' } }),
      'DELETE marked cross-site without Origin',
    );
    const form = await raw(lb, '/mailbox/api/messages', {
      apikey: null,
      apiVersion: false,
      method: 'POST',
      body: '_method=DELETE',
      headers: { origin: EVIL, 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
    });
    expectRefused(form, 'form POST');
    expect((await listMail(lb, email)).length).toBeGreaterThanOrEqual(1);
  });

  it('a request for another host name (DNS rebinding: evil.test resolving to 127.0.0.1) is refused', async () => {
    const port = Number(new URL(lb.url).port);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/mailbox/api/messages', headers: { host: `evil.test:${port}`, origin: `http://evil.test:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it('a percent-encoded path is the same path', async () => {
    expectRefused(await mailbox('/%6Dailbox/api/messages', { headers: { origin: EVIL } }), 'encoded path');
  });
});

describe('the developer and their tools keep working', () => {
  it('tools without a browser (no Origin, no Sec-Fetch-*: e2e, curl) read and clear it, and get no CORS headers', async () => {
    const res = await mailbox(`/mailbox/api/messages?to=${encodeURIComponent(email)}`);
    expect(res.status).toBe(200);
    expect((res.json as unknown[]).length).toBeGreaterThanOrEqual(1);
    expect(corsHeaders(res)).toEqual([]);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('the page opened from the address bar, its own links and same-origin requests', async () => {
    const navigation = { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', 'sec-fetch-user': '?1' };
    const page = await mailbox('/mailbox', { headers: navigation });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('localbase mailbox');
    expect(page.text).toContain(email);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const ownLink = await mailbox('/mailbox/api/messages', { headers: { ...navigation, 'sec-fetch-site': 'same-origin' } });
    expect(ownLink.status).toBe(200);
    const sameOrigin = await mailbox('/mailbox/api/messages', { headers: { origin: lb.url, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' } });
    expect(sameOrigin.status).toBe(200);
    expect(corsHeaders(sameOrigin)).toEqual([]);
    const viaLocalhost = await new Promise<number>((resolve, reject) => {
      const port = Number(new URL(lb.url).port);
      const req = http.request({ host: '127.0.0.1', port, path: '/mailbox', headers: { host: `localhost:${port}`, origin: `http://localhost:${port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(viaLocalhost, 'opened as http://localhost:<port>/mailbox').toBe(200);
  });
});

describe('the Supabase APIs keep their open CORS', () => {
  it('a foreign origin gets its origin reflected with credentials, and preflights are answered', async () => {
    const res = await raw(lb, '/auth/v1/settings', { headers: { origin: EVIL } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(EVIL);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    for (const path of ['/auth/v1/token?grant_type=password', '/rest/v1/anything']) {
      const preflight = await fetch(lb.url + path, {
        method: 'OPTIONS',
        headers: { origin: EVIL, 'access-control-request-method': 'POST', 'access-control-request-headers': 'apikey,content-type' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(EVIL);
    }
  });
});
