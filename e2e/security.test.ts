// Security headers, the enforced Content-Security-Policy, framing, cross-site mutations and the API's request bounds,
// as a browser (and an attacker's page on another origin) meets them. Every other browser test also fails on any CSP
// violation (browser.ts), so the policy is proved to let every page and flow of the app work.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, get, type Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, signInViaUI, uniqueEmail } from './auth-helpers.ts';
import { DEFAULT_SERVICE_ROLE_KEY } from './backend-control.ts';
import { baseURL, cspViolationsOf, gotoHydrated, recordConsoleProblems, ROOT, useBrowser } from './browser.ts';
import { createUser, listSettled, seedNotes } from './notes-helpers.ts';

const fixture = useBrowser();

/** The `Cookie` header a browser context would send to the app. */
async function cookieHeader(context: BrowserContext): Promise<string> {
  const cookies = await context.cookies(baseURL);
  return cookies.map((c) => `${c.name}=${c.value}`).join('; ');
}

/** A signed-in browser context (a new user on `/`) and its cookie header. */
async function signedIn(): Promise<{ context: BrowserContext; cookie: string }> {
  const email = uniqueEmail('sec');
  await createUser(email);
  const context = await fixture.newContext();
  const page = await context.newPage();
  await gotoHydrated(page, '/sign-in');
  await signInViaUI(page, email);
  await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
  await listSettled(page);
  return { context, cookie: await cookieHeader(context) };
}

/** superjson-encoded tRPC mutation input for `notes.create`. */
const createInput = (title: string) => JSON.stringify({ json: { title, body: '' } });

async function noteTitles(cookie: string): Promise<string[]> {
  const input = encodeURIComponent(JSON.stringify({ json: { sort: 'created_at', dir: 'desc', pageSize: 100 } }));
  const res = await fetch(`${baseURL}/api/trpc/notes.list?input=${input}`, { headers: { cookie } });
  expect(res.status, await res.clone().text()).toBe(200);
  const body = (await res.json()) as { result: { data: { json: { items: Array<{ title: string }> } } } };
  return body.result.data.json.items.map((n) => n.title);
}

const EXPECTED_HEADERS: Record<string, RegExp> = {
  'x-frame-options': /^DENY$/,
  'x-content-type-options': /^nosniff$/,
  'referrer-policy': /^strict-origin-when-cross-origin$/,
  'permissions-policy': /camera=\(\).*microphone=\(\).*geolocation=\(\)/,
  'cross-origin-opener-policy': /^same-origin$/,
  'content-security-policy': /frame-ancestors 'none'/,
};

describe('security headers', () => {
  test('every kind of response (page, 404, API, static chunk, icon) carries them, with an enforced CSP', async () => {
    const html = await (await fetch(`${baseURL}/sign-in`)).text();
    const chunk = /<script src="(\/_next\/static\/chunks\/[^"]+\.js)"/.exec(html)?.[1];
    expect(chunk).toBeTruthy();
    for (const path of ['/', '/sign-in', '/no-such-page', '/api/trpc/system.health', chunk!, '/favicon.ico', '/styles/base.css']) {
      const res = await fetch(`${baseURL}${path}`);
      for (const [name, pattern] of Object.entries(EXPECTED_HEADERS)) {
        expect(res.headers.get(name), `${name} on ${path}`).toMatch(pattern);
      }
      expect(res.headers.get('content-security-policy-report-only'), path).toBeNull();
      // plain http: no HSTS (browsers would ignore it anyway)
      expect(res.headers.get('strict-transport-security'), path).toBeNull();
    }
  });

  test('a redirect of a path with a trailing or doubled slash (308) carries the framing, sniffing, referrer and CSP headers, and stays on the site', async () => {
    for (const [path, location] of [
      ['/sign-in/', '/sign-in'],
      ['//evil.example/', '/evil.example'],
    ]) {
      const res = await fetch(`${baseURL}${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(308);
      expect(res.headers.get('location'), path).toBe(location);
      for (const name of ['x-frame-options', 'x-content-type-options', 'referrer-policy', 'content-security-policy'])
        expect(res.headers.get(name), `${name} on ${path}`).toMatch(EXPECTED_HEADERS[name]!);
    }
  });

  test('the script policy allows this origin and the two head scripts (theme, viewport hint) by hash: no unsafe-inline, no unsafe-eval, no wildcard', async () => {
    const res = await fetch(`${baseURL}/`);
    const csp = res.headers.get('content-security-policy') ?? '';
    const directives = new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...sources]) => [name!, sources]));
    const scripts = directives.get('script-src') ?? [];
    expect(scripts).toContain("'self'");
    expect(scripts.filter((s) => s.startsWith("'sha256-"))).toHaveLength(2);
    for (const unsafe of ["'unsafe-inline'", "'unsafe-eval'", '*', 'data:', 'http:', 'https:']) expect(scripts).not.toContain(unsafe);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    expect(directives.get('connect-src')).toContain('http://127.0.0.1:54321');
  });

  test('rendered pages are never stored (so carry no ETag to revalidate); the public stylesheet and icon revalidate to 304', async () => {
    for (const path of ['/', '/sign-in', '/no-such-page']) {
      const res = await fetch(`${baseURL}${path}`);
      await res.arrayBuffer();
      expect(res.headers.get('cache-control'), path).toMatch(/\bno-store\b/);
      expect(res.headers.get('etag'), path).toBeNull();
    }
    // node:http, not fetch: fetch adds `Cache-Control: no-cache` to a conditional request, which a browser's
    // ordinary revalidation of a stored file does not send
    const status = (path: string, headers: Record<string, string>) =>
      new Promise<{ status: number; lastModified: string | undefined }>((resolve, reject) => {
        get(`${baseURL}${path}`, { headers }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, lastModified: res.headers['last-modified'] }));
        }).on('error', reject);
      });
    for (const path of ['/styles/base.css', '/favicon.ico']) {
      const first = await status(path, {});
      expect(first.status, path).toBe(200);
      expect(first.lastModified, path).toBeTruthy();
      expect((await status(path, { 'if-modified-since': first.lastModified! })).status, path).toBe(304);
    }
  });

  test('HSTS is sent when the app is served over https (a TLS proxy in front says so)', async () => {
    const res = await fetch(`${baseURL}/sign-in`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(res.headers.get('strict-transport-security')).toMatch(/^max-age=\d{8,}; includeSubDomains$/);
  });

  test('a part of a static file past its end is refused 416 with the file\'s size and no body (never the error page\'s HTML under the file\'s type); a part within it is 206', async () => {
    const html = await (await fetch(`${baseURL}/sign-in`)).text();
    const chunk = /<script src="(\/_next\/static\/chunks\/[^"]+\.js)"/.exec(html)?.[1];
    expect(chunk).toBeTruthy();
    for (const path of [chunk!, '/styles/base.css', '/favicon.ico']) {
      const size = (await (await fetch(`${baseURL}${path}`)).arrayBuffer()).byteLength;
      const refused = await fetch(`${baseURL}${path}`, { headers: { range: `bytes=${size + 1000}-` } });
      const body = await refused.text();
      expect([path, refused.status]).toEqual([path, 416]);
      expect(refused.headers.get('content-range'), path).toBe(`bytes */${size}`);
      expect(body.length, `${path}: ${body.slice(0, 60)}`).toBe(0);
      expect(refused.headers.get('x-content-type-options'), path).toBe('nosniff');
      const part = await fetch(`${baseURL}${path}`, { headers: { range: 'bytes=0-9' } });
      expect([path, part.status, (await part.arrayBuffer()).byteLength]).toEqual([path, 206, 10]);
    }
  });
  test('the image optimizer (`/_next/image`, a proxy that fetches and resizes what a URL names) is not served: 404 with the headers every answer has', async () => {
    for (const path of ['/_next/image?url=%2Ffavicon.ico&w=64&q=75', '/_next/image?url=%2Fstyles%2Fbase.css&w=3840&q=100', '/_next/image']) {
      const res = await fetch(`${baseURL}${path}`);
      await res.arrayBuffer();
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.headers.get('content-type'), path).not.toMatch(/^image\//);
      for (const [name, pattern] of Object.entries(EXPECTED_HEADERS)) expect(res.headers.get(name), `${name} on ${path}`).toMatch(pattern);
    }
  });

  test('a static file asked for with a method it does not take (POST, PUT, DELETE) gets 405 with `Allow: GET, HEAD` and our short page, as pages do; OPTIONS says the same; GET is untouched', async () => {
    const html = await (await fetch(`${baseURL}/sign-in`)).text();
    const chunk = /<script src="(\/_next\/static\/chunks\/[^"]+\.js)"/.exec(html)?.[1];
    expect(chunk).toBeTruthy();
    for (const path of [chunk!, '/styles/base.css', '/favicon.ico']) {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const res = await fetch(`${baseURL}${path}`, { method, body: 'x' });
        const body = await res.text();
        const what = `${method} ${path}`;
        expect([what, res.status, res.headers.get('allow')]).toEqual([what, 405, 'GET, HEAD']);
        expect(res.headers.get('content-type'), what).toBe('text/html; charset=utf-8');
        expect(body, what).toContain(`<h1>This file cannot be asked for with ${method}</h1>`);
        // never Next's error page (67 kB of HTML and scripts) under the 405
        expect(body.length, what).toBeLessThan(2000);
        expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
        expect(res.headers.get('content-security-policy'), what).toMatch(/frame-ancestors 'none'/);
      }
      const options = await fetch(`${baseURL}${path}`, { method: 'OPTIONS' });
      expect([path, options.status, options.headers.get('allow')]).toEqual([path, 204, 'GET, HEAD']);
      const get = await fetch(`${baseURL}${path}`);
      expect([path, get.status, (await get.arrayBuffer()).byteLength > 0]).toEqual([path, 200, true]);
    }
    // a page keeps its own answer
    const page = await fetch(`${baseURL}/sign-in`, { method: 'PUT' });
    await page.arrayBuffer();
    expect([page.status, page.headers.get('allow')]).toEqual([405, 'GET, HEAD, POST, OPTIONS']);
  });
});

describe('the browser console', () => {
  test('no page logs a warning or an error, signed out or in (a header the browser does not understand among them)', async () => {
    const email = uniqueEmail('console');
    const [note] = await seedNotes(await createUser(email), [{ title: 'A note for the console check', body: 'Its page is visited too.' }]);
    const context = await fixture.newContext();
    const page = await context.newPage();
    const logged = recordConsoleProblems(page, { warnings: true });
    for (const path of ['/sign-up', '/forgot-password', '/sign-in']) await gotoHydrated(page, path);
    await signInViaUI(page, email);
    await page.waitForURL((url) => url.pathname === '/', { timeout: 20_000 });
    await listSettled(page);
    for (const path of [`/notes/${note!.id}`, '/settings/account', '/settings/security', '/']) {
      await gotoHydrated(page, path);
      await page.waitForLoadState('networkidle');
    }
    expect(logged).toEqual([]);
  });
});

describe('Content-Security-Policy in the browser', () => {
  test('the theme script still runs before first paint, and nothing on the page is blocked', async () => {
    const context = await fixture.newContext({ colorScheme: 'dark' });
    const page = await context.newPage();
    await page.route('**/_next/static/**', (route) => route.abort()); // no app JS at all: only the inline script
    await page.goto('/sign-in');
    expect(await page.evaluate(() => document.documentElement.className)).toContain('t_dark');
    expect(cspViolationsOf(context)).toEqual([]);
  });

  test('an injected inline script and an inline event handler are blocked and reported', async () => {
    const context = await fixture.newContext({}, { allowViolations: true });
    const page = await context.newPage();
    await gotoHydrated(page, '/sign-in');
    await page.evaluate(() => {
      const script = document.createElement('script');
      script.textContent = 'window.__injected = "script ran"';
      document.body.append(script);
      const holder = document.createElement('div');
      holder.innerHTML = '<img src="/favicon.ico?x" onload="window.__handler = \'handler ran\'">';
      document.body.append(holder);
    });
    await page.waitForTimeout(500);
    expect(await page.evaluate(() => (window as unknown as { __injected?: string }).__injected)).toBeUndefined();
    expect(await page.evaluate(() => (window as unknown as { __handler?: string }).__handler)).toBeUndefined();
    const directives = cspViolationsOf(context).map((v) => v.directive);
    expect(directives).toContain('script-src-elem');
    expect(directives).toContain('script-src-attr');
  });

  describe('another site', () => {
    let evil: Server;
    let evilOrigin = '';
    beforeAll(async () => {
      // A page on another origin that frames the app and posts a form to its API.
      evil = createServer((_req, res) => {
        res.setHeader('content-type', 'text/html');
        res.end(`<!doctype html><title>evil</title>
          <iframe id="victim" src="${baseURL}/sign-in" width="800" height="600"></iframe>`);
      });
      await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
      evilOrigin = `http://localhost:${(evil.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise((resolve) => evil.close(resolve));
    });

    test('cannot frame the app (frame-ancestors none, X-Frame-Options DENY)', async () => {
      const context = await fixture.newContext({}, { allowViolations: true });
      const page = await context.newPage();
      await page.goto(`${evilOrigin}/`);
      await page.waitForTimeout(1500);
      const frame = page.frames().find((f) => f !== page.mainFrame());
      expect(frame).toBeDefined();
      // Chromium replaces a refused frame with its own error page: none of the app's markup is in it.
      const appRendered = await frame!
        .evaluate(() => document.querySelector('#__next') !== null)
        .catch(() => false);
      expect(appRendered).toBe(false);
    });
  });
});

describe('cross-site mutations', () => {
  test('a tRPC mutation with the user\'s cookie but a foreign Origin or Sec-Fetch-Site is refused (403) and changes nothing', async () => {
    const { cookie } = await signedIn();
    const headers = { cookie, 'content-type': 'application/json' };
    const attempts: Array<Record<string, string>> = [
      { origin: 'http://evil.test' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site', origin: 'http://sub.127.0.0.1.nip.io' },
    ];
    for (const extra of attempts) {
      const res = await fetch(`${baseURL}/api/trpc/notes.create`, {
        method: 'POST',
        headers: { ...headers, ...extra },
        body: createInput(`csrf ${JSON.stringify(extra)}`),
      });
      expect(res.status, JSON.stringify(extra)).toBe(403);
      const body = (await res.json()) as { error: { json: { message: string; data: { code: string } } } };
      expect(body.error.json.data.code).toBe('FORBIDDEN');
      expect(body.error.json.message).toMatch(/^Cross-site request refused/);
    }
    expect(await noteTitles(cookie)).toEqual([]);

    // The app's own page (same origin) still creates notes.
    const ok = await fetch(`${baseURL}/api/trpc/notes.create`, {
      method: 'POST',
      headers: { ...headers, origin: baseURL, 'sec-fetch-site': 'same-origin' },
      body: createInput('same origin'),
    });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await noteTitles(cookie)).toEqual(['same origin']);
  });
});

describe('request bounds', () => {
  test('a batch of more than 25 calls is refused whole with 400 before any runs; 25 are fine', async () => {
    const { cookie } = await signedIn();
    const batch = (n: number) => {
      const paths = Array.from({ length: n }, () => 'notes.create').join(',');
      const input = Object.fromEntries(Array.from({ length: n }, (_, i) => [String(i), { json: { title: `batch ${n} #${i}`, body: '' } }]));
      return fetch(`${baseURL}/api/trpc/${paths}?batch=1`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', origin: baseURL },
        body: JSON.stringify(input),
      });
    };
    const tooMany = await batch(1000);
    expect(tooMany.status).toBe(400);
    expect(await tooMany.text()).toMatch(/Batch call exceeds maximum size/);
    expect(await noteTitles(cookie)).toEqual([]);

    const fine = await batch(25);
    expect(fine.status, await fine.clone().text()).toBe(200);
    const results = (await fine.json()) as unknown[];
    expect(results).toHaveLength(25);
  });

  test('one user\'s mutations have a budget: past it, 429 TOO_MANY_REQUESTS with Retry-After, and other users are unaffected', async () => {
    const [first, second] = [await signedIn(), await signedIn()];
    const create = (cookie: string, title: string) =>
      fetch(`${baseURL}/api/trpc/notes.create`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', origin: baseURL },
        body: createInput(title),
      });
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 70 && !limited; i++) {
      const res = await create(first.cookie, `burst ${i}`);
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(limited, `statuses: ${statuses.join(',')}`).toBeDefined();
    // the burst allowance (60) went through before the first refusal
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(58);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await limited!.json()) as { error: { json: { message: string; data: { code: string } } } };
    expect(body.error.json.data.code).toBe('TOO_MANY_REQUESTS');
    expect(body.error.json.message).toMatch(/Try again in \d+ seconds?/);

    // someone else is not affected
    const other = await create(second.cookie, 'unaffected');
    expect(other.status).toBe(200);
  });
});

describe('malformed API requests', () => {
  const serverLog = join(ROOT, 'test-results/e2e-server.log');
  const logSize = () => {
    try {
      return readFileSync(serverLog).byteLength;
    } catch {
      return 0;
    }
  };
  type ErrorBody = { error: { json: { message: string; data: { code: string } } } };
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  test('input nested 10,000 deep is a 400 with a readable message, signed out and in, by POST and GET; nothing logged', async () => {
    const { cookie } = await signedIn();
    const logBefore = logSize();
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${baseURL}/api/trpc/${path}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', origin: baseURL },
        body: `{"json":${nested(10_000)}}`,
      });
    const answers = [
      await post('system.clockSkew', {}),
      await post('notes.create', { cookie }),
      await fetch(`${baseURL}/api/trpc/system.health?input=${encodeURIComponent(`{"json":${nested(5_000)}}`)}`),
      await fetch(`${baseURL}/api/trpc/notes.list?batch=1&input=${encodeURIComponent(`{"0":{"json":${nested(5_000)}}}`)}`, { headers: { cookie } }),
    ];
    for (const answer of answers) {
      expect(answer.status, answer.url.slice(0, 80)).toBe(400);
      const body = (await answer.json()) as ErrorBody;
      expect(body.error.json.data.code).toBe('BAD_REQUEST');
      expect(body.error.json.message).toBe('The input is nested too deeply (more than 100 levels of arrays and objects).');
    }
    expect(await noteTitles(cookie)).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const logged = readFileSync(serverLog, 'utf8').slice(logBefore);
    expect(logged).not.toMatch(/RangeError|Maximum call stack|failed:/);
  });

  test('a body of null, an unknown method and an over-large body get readable answers (400, 405 with Allow, 413)', async () => {
    const nullBody = await fetch(`${baseURL}/api/trpc/system.clockSkew`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'null' });
    expect(nullBody.status).toBe(400);
    const nullError = ((await nullBody.json()) as ErrorBody).error.json;
    expect(nullError.message).toBe('The input must be a JSON object as the tRPC client sends it: {"json": …}.');
    expect(nullError.message).not.toMatch(/destructure|payload/);

    for (const method of ['PUT', 'DELETE', 'OPTIONS']) {
      const answer = await fetch(`${baseURL}/api/trpc/notes.create`, { method, headers: { 'content-type': 'application/json' } });
      expect(answer.status, method).toBe(405);
      expect(answer.headers.get('allow'), method).toBe('POST');
      expect(((await answer.json()) as ErrorBody).error.json.data.code).toBe('METHOD_NOT_SUPPORTED');
    }
    const query = await fetch(`${baseURL}/api/trpc/notes.list`, { method: 'PUT' });
    expect([query.status, query.headers.get('allow')]).toEqual([405, 'GET, HEAD']);

    const big = await fetch(`${baseURL}/api/trpc/system.clockSkew`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ json: { clientTime: 'x'.repeat(2 * 1024 * 1024) } }),
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as ErrorBody).error.json.data.code).toBe('PAYLOAD_TOO_LARGE');
  });

  test('an API path that does not exist is a small JSON 404 NOT_FOUND with the headers every answer has, never the 404 page\'s HTML; the API itself is untouched', async () => {
    for (const [method, path] of [
      ['GET', '/api/nope'],
      ['POST', '/api/trpc-typo'],
      ['GET', '/api'],
      ['GET', '/api/trpc'],
      ['DELETE', '/api/nope/deeper?x=1'],
      ['HEAD', '/api/nope'],
    ] as const) {
      const what = `${method} ${path}`;
      const res = await fetch(`${baseURL}${path}`, { method, ...(method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}) });
      const text = await res.text();
      expect([what, res.status]).toEqual([what, 404]);
      expect(res.headers.get('content-type'), what).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control'), what).toBe('private, no-store');
      for (const [name, pattern] of Object.entries(EXPECTED_HEADERS)) expect(res.headers.get(name), `${name} on ${what}`).toMatch(pattern);
      if (method === 'HEAD') continue;
      expect(text.length, what).toBeLessThan(500);
      const error = (JSON.parse(text) as ErrorBody).error.json;
      expect(error.data.code, what).toBe('NOT_FOUND');
      expect(error.message, what).toBe(`There is no API at ${path.split('?')[0]}.`);
    }
    // the API's own answers are as before
    expect((await fetch(`${baseURL}/api/trpc/system.health`)).status).toBe(200);
    const unknown = await fetch(`${baseURL}/api/trpc/nope`);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as ErrorBody).error.json.message).toMatch(/No procedure found on path/);
  });

  test("the API's answers about a user are never stored by a cache (Cache-Control: private, no-store)", async () => {
    const { cookie } = await signedIn();
    const input = encodeURIComponent(JSON.stringify({ 0: { json: { sort: 'created_at', dir: 'desc' } } }));
    for (const path of ['auth.me', `notes.list?batch=1&input=${input}`, `auth.me,notes.list?batch=1&input=${encodeURIComponent(JSON.stringify({ 1: { json: { sort: 'created_at', dir: 'desc' } } }))}`]) {
      const answer = await fetch(`${baseURL}/api/trpc/${path}`, { headers: { cookie } });
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get('cache-control'), path).toBe('private, no-store');
    }
    const signedOut = await fetch(`${baseURL}/api/trpc/auth.me`);
    expect(signedOut.status).toBe(401);
    expect(signedOut.headers.get('cache-control')).toBe('private, no-store');
  });
});

describe('secrets', () => {
  test('no client bundle holds a server secret (service-role key, secret key, JWT secret)', () => {
    const dir = join(ROOT, 'apps/web/.next/static');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'));
    expect(files.length).toBeGreaterThan(10);
    // supabase-js itself mentions the prefix "sb_secret_" (it tells key kinds apart): look for real keys.
    const secrets = [DEFAULT_SERVICE_ROLE_KEY, 'sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz', 'super-secret-jwt-token', 'SUPABASE_SECRET_KEY'];
    for (const file of files) {
      const text = readFileSync(join(dir, file), 'utf8');
      for (const secret of secrets) expect(text.includes(secret), `${secret} in ${file}`).toBe(false);
    }
  });
});

describe('accounts', () => {
  test('repeated wrong passwords hold the account for a moment, and the form says how long', async () => {
    const email = uniqueEmail('held');
    await createAccount(email);
    const page = await fixture.newPage();
    await gotoHydrated(page, '/sign-in');
    const held = page.getByRole('form', { name: 'Sign in' }).getByText(/^Too many failed attempts for this account\. Wait \d+ seconds?, then try again\.$/);
    for (let attempt = 1; attempt <= 12 && !(await held.isVisible()); attempt++) {
      await signInViaUI(page, email, `wrong-password-${attempt}`);
      await page.getByRole('form', { name: 'Sign in' }).getByText(/do not match|Too many failed attempts/).first().waitFor({ timeout: 15_000 });
      await page.waitForTimeout(100);
    }
    await held.waitFor({ timeout: 5_000 });
    expect(await page.getByLabel('Email').inputValue()).toBe(email); // nothing typed is lost
    // The wait counts down with "Sign in" disabled; when it is over the message goes and the form may try again.
    const signIn = page.getByRole('button', { name: 'Sign in', exact: true });
    expect(await signIn.isDisabled()).toBe(true);
    await held.waitFor({ state: 'detached', timeout: 65_000 });
    expect(await signIn.isEnabled()).toBe(true);
  });

  test('signing in from the app keeps working under the policy (no violation on the auth screens)', async () => {
    const { context } = await signedIn();
    expect(cspViolationsOf(context)).toEqual([]);
  });
});
