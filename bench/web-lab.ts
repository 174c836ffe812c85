// Lab loads of the apps/web production build in Chromium, beside a floor page of the same build (issue 13).
//
//   node bench/web-lab.ts [--loads 5] [--quiet 5000] [--notes 25] [--renders 250] [--json] [--profile] [--no-viewport-hint]
//                         [--devtools]
//
// Needs a production build (`npm run build -w apps/web`) and /usr/bin/chromium, driven over the DevTools protocol on
// its pipe (lib/cdp-pipe.ts; nothing is downloaded) with only the Page, Network and Emulation domains on in each page,
// as a visitor's browser runs it: Playwright would enable the Runtime domain, under which V8 records a detailed stack
// trace of every Error created, ≈ 250–350 ms of every page's boot here at 4× (ADR 059; `--devtools` measures that way).
// Served as the browser tests serve it (e2e/global-setup.ts): localbase from its sources on 127.0.0.1:54321 — the
// backend address the browser bundle embeds at build time, so run this inside a private network namespace
// (`unshare -n`) when anything else may hold that port — with a fresh PGlite folder under test-results/, and
// the app's own server (`node apps/web/server.ts`, NODE_ENV=production, the local secret key) on a free loopback port,
// with FOYER_LAB_FLOOR=1 so its floor page answers (pages/lab-floor.tsx: 404 otherwise).
//
// Chromium runs without the omnibox popup WebUIs it would otherwise load for every new window, during the page's load
// (ADR 060: ≈ 1 s of a core per load on this 2-core host; a visitor's window loaded them when it opened).
//
// Pages, each load in a new browser context (cold HTTP cache, no service worker, no cookies but the session's and,
// signed in, the viewport hint `foyer-vw=wide` that every page the browser showed before — the sign-in page at
// least — left (apps/web/src/lib/viewport-hint.ts; `--no-viewport-hint` loads `/` as a browser's very first page),
// CPU throttled 4× through the DevTools protocol (Emulation.setCPUThrottlingRate), no network throttling (loopback):
//   floor        /lab-floor   the same build's React + Next runtime and shared chunks, rendered without the app's
//                             providers or UI kit (_app renders it alone): what any page of this build costs at least
//   /sign-in     signed out
//   /            signed in as a user with --notes notes (a full first page of 20), session cookie from @supabase/ssr
// One warm-up round (not counted: the server's first renders), then --loads rounds, the three pages one after another
// in an order that rotates each round (interleaved, so whatever else the machine does hits each alike); medians.
// Per load, from the page's own performance entries (buffered observers registered once `load` has fired, so that no
// code of the lab's runs in the page before its first paint; script bodies are read once the page is quiet):
//   FCP   first-contentful-paint
//   LCP   the last largest-contentful-paint entry
//   TBT   as Lighthouse defines it: the long tasks (> 50 ms, PerformanceObserver 'longtask') between FCP and TTI, each
//         counted for its time past 50 ms (a task that started before FCP counts only from FCP); TTI = the end of the
//         last long task before a quiet window of --quiet ms (Lighthouse: 5 s) with no long task and at most two
//         requests in flight, or FCP when there is none
//   JS after load   gzipped bytes (zlib level 6, each file on its own, as e2e/downloads.test.ts) of the .js files whose
//         requests started after the `load` event (lazy chunks, prefetches), until the quiet window
// Before the browser loads, the server alone: each page rendered --renders times (blocks of 50 a page, the pages'
// order rotating, the first block a warm-up), one request at a time over a keep-alive connection, gzip accepted as a
// browser accepts it, unthrottled: p50 of the time to the answer's last byte, and the web server's CPU time per render
// (its process's utime + stime from /proc over each block), each beside the floor page's. No target: it tells how much
// of a page's time to first byte is the server's own work (ADR 061).
// Targets (issue 13): TBT ≤ 200 ms on /sign-in and on / signed in; FCP ≤ 1.5 × the floor's FCP on both; on / signed
// in LCP ≤ 1.2 × its FCP. Exit 1 when one is missed (as web-size.ts), 2 when the bench itself cannot run.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createServerClient } from '@supabase/ssr';
import { CHROMIUM_ARGS, CHROMIUM_PATH, disableFeaturesSwitch } from '../e2e/chromium.ts';
import { args, argValue } from './lib/args.ts';
import { launchOverPipe, type CdpBrowser, type CdpEvent } from './lib/cdp-pipe.ts';
import { ANON_KEY, freePort } from './lib/local.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WEB = join(ROOT, 'apps/web');
const OUT = join(ROOT, 'test-results');
/** The backend address the browser bundle embeds (apps/web/src/lib/env-config.ts): localbase must listen there. */
const BACKEND_PORT = 54321;
const BACKEND_URL = `http://127.0.0.1:${BACKEND_PORT}`;
/** The Supabase CLI's public local keys (localbase's defaults; not secrets). */
const SERVICE_ROLE_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU';
const LOCAL_SECRET_KEY = 'sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz';
const PASSWORD = 'correct-horse-battery-staple';

const LOADS = Number(argValue('--loads') ?? 5);
const QUIET_MS = Number(argValue('--quiet') ?? 5000);
const NOTES = Number(argValue('--notes') ?? 25);
/** Server renders per page before the browser loads (blocks of RENDER_BLOCK, the first block a warm-up). */
const RENDERS = Number(argValue('--renders') ?? 250);
const RENDER_BLOCK = 50;
const asJson = args.includes('--json');
/** Without the viewport hint cookie: `/` rendered for a browser that never showed a page of the app (both list shapes). */
const VIEWPORT_HINT = !args.includes('--no-viewport-hint');
/** `--profile`: a CPU profile of each page's first counted load; prints where the main thread's time went. */
const PROFILE = args.includes('--profile');
/**
 * `--devtools`: each page with the DevTools protocol's Runtime domain enabled, as Playwright, Lighthouse and an open
 * DevTools panel run pages. V8 then records a detailed stack trace for every Error created, which costs the boot of
 * every page of this build ≈ 250–350 ms of main thread at 4× (ADR 059); visitors' browsers do not pay it.
 */
const DEVTOOLS_AGENT = args.includes('--devtools');
const CPU_THROTTLE = 4;
/** Give up waiting for the quiet window this long after navigation starts (the load then fails the bench). */
const LOAD_DEADLINE_MS = 60_000;

const TARGET_TBT_MS = 200;
const TARGET_FCP_VS_FLOOR = 1.5;
const TARGET_LCP_VS_FCP = 1.2;

type PageKey = 'floor' | 'sign-in' | 'home';
interface PageSpec {
  key: PageKey;
  label: string;
  path: string;
  signedIn: boolean;
  /** What must be on screen for the load to count (the right page, not an error or a redirect). */
  ready: string;
}
const PAGES: PageSpec[] = [
  { key: 'floor', label: 'floor (/lab-floor)', path: '/lab-floor', signedIn: false, ready: 'h1' },
  { key: 'sign-in', label: '/sign-in', path: '/sign-in', signedIn: false, ready: 'input[type=password]' },
  { key: 'home', label: '/ signed in', path: '/', signedIn: true, ready: '[data-testid=note-row]' },
];

interface LoadResult {
  fcp: number;
  lcp: number;
  lcpElement: string;
  tbt: number;
  tti: number;
  longTasks: number;
  jsAfterLoadGz: number;
  jsAfterLoadFiles: number;
}

/** The bench cannot run: main's catch stops the servers and exits 2. */
function fail(message: string): never {
  throw new Error(message);
}

/** A server died under the bench (from an event handler, outside main's flow): stop the rest, exit 2. */
function abort(message: string): void {
  console.error(`web-lab: ${message}`);
  void stopAll().finally(() => process.exit(2));
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/* ---------------------------------------------------------------- servers */

const children: ChildProcess[] = [];
let browser: CdpBrowser | undefined;

async function stopAll(): Promise<void> {
  await browser?.close().catch(() => {});
  browser = undefined;
  await Promise.all(
    children.splice(0).map(
      (child) =>
        new Promise<void>((done) => {
          if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return done();
          const pid = child.pid;
          const timer = setTimeout(() => {
            try {
              process.kill(-pid, 'SIGKILL');
            } catch {
              // gone
            }
          }, 5000);
          child.once('exit', () => {
            clearTimeout(timer);
            done();
          });
          try {
            process.kill(-pid, 'SIGTERM');
          } catch {
            clearTimeout(timer);
            done();
          }
        }),
    ),
  );
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143)));
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

function startChild(name: string, argv: string[], env: NodeJS.ProcessEnv, log: string, cwd = ROOT): ChildProcess {
  const out = createWriteStream(log);
  const child = spawn(join(ROOT, 'node_modules/.bin/node'), argv, {
    cwd,
    env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}`, NEXT_TELEMETRY_DISABLED: '1', ...env },
    detached: true, // own process group: stopAll ends it whole
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(out);
  child.stderr?.pipe(out);
  children.push(child);
  child.once('exit', (code, signal) => {
    if (children.includes(child)) abort(`${name} exited early (${code ?? signal}); log: ${log}`);
  });
  return child;
}

async function waitFor(url: string, what: string, timeoutMs: number, ok: (status: number) => boolean = (status) => status === 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
      if (ok(response.status)) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  fail(`${what} was not ready at ${url} after ${timeoutMs} ms (last: ${last})`);
}

/** A user with `count` notes and the session cookie header the app writes for them (@supabase/ssr). */
async function seedUser(count: number): Promise<{ name: string; value: string }[]> {
  const email = `web-lab-${Date.now()}@example.com`;
  const signup = await fetch(`${BACKEND_URL}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: ANON_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  if (!signup.ok) fail(`sign-up failed: HTTP ${signup.status} ${await signup.text()}`);
  const body = (await signup.json()) as { id?: string; user?: { id: string } };
  const userId = body.user?.id ?? body.id;
  const base = Date.parse('2026-11-01T09:00:00Z');
  const notes = Array.from({ length: count }, (_, i) => ({
    user_id: userId,
    title: `Lab note ${i + 1}: ${['groceries', 'reading list', 'trip plan', 'meeting notes', 'ideas'][i % 5]}`,
    body: `Body of note ${i + 1}. `.repeat(12),
    pinned: i < 2,
    created_at: new Date(base + i * 3_600_000).toISOString(),
    updated_at: new Date(base + i * 3_600_000).toISOString(),
  }));
  const insert = await fetch(`${BACKEND_URL}/rest/v1/notes`, {
    method: 'POST',
    headers: {
      apikey: SERVICE_ROLE_KEY,
      authorization: `Bearer ${SERVICE_ROLE_KEY}`,
      'content-type': 'application/json',
      prefer: 'return=minimal',
    },
    body: JSON.stringify(notes),
  });
  if (!insert.ok) fail(`inserting the notes failed: HTTP ${insert.status} ${await insert.text()}`);
  let jar: { name: string; value: string }[] = [];
  const client = createServerClient(BACKEND_URL, ANON_KEY, {
    cookies: {
      getAll: () => jar,
      setAll: (cookies) => {
        for (const c of cookies) jar = [...jar.filter((j) => j.name !== c.name), ...(c.value ? [{ name: c.name, value: c.value }] : [])];
      },
    },
  });
  const { error } = await client.auth.signInWithPassword({ email, password: PASSWORD });
  if (error) fail(`sign-in failed: ${error.message}`);
  await new Promise((r) => setTimeout(r, 50)); // setAll runs from the auth state listener
  if (!jar.some((c) => /^sb-[a-z0-9-]+-auth-token(\.\d+)?$/.test(c.name))) fail('no session cookie was written');
  return jar;
}

/* ---------------------------------------------------------------- the server alone */

interface ServerRender {
  /** p50 of the time to the answer's last byte, ms */
  p50: number;
  /** the web server's CPU time per render, ms (NaN where /proc is not there) */
  cpu: number;
}

/** The CPU time (user + system) a process has used so far, in ms, from /proc (Linux); NaN elsewhere. */
function cpuTimeMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    // the fields after the command name (which may hold spaces) start at the state, field 3; utime and stime are 14, 15
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 1/100 s (USER_HZ on Linux)
  } catch {
    return Number.NaN;
  }
}

/** One GET over the keep-alive agent: the time to the answer's last byte (the body gzipped, as a browser asks). */
function timedGet(agent: Agent, url: string, cookie: string | undefined): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const req = request(url, { agent, headers: { 'accept-encoding': 'gzip', ...(cookie ? { cookie } : {}) } }, (res) => {
      res.on('data', () => undefined);
      res.on('end', () => (res.statusCode === 200 ? resolvePromise(performance.now() - started) : reject(new Error(`${url} answered HTTP ${res.statusCode}`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Each page rendered RENDERS times by the server alone (see the header); before any browser runs. */
async function timeServerRenders(base: string, cookies: { name: string; value: string }[], serverPid: number | undefined): Promise<Record<PageKey, ServerRender>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const hint = VIEWPORT_HINT ? [{ name: 'foyer-vw', value: 'wide' }] : [];
  const signedIn = [...cookies, ...hint].map((c) => `${c.name}=${c.value}`).join('; ');
  const times: Record<PageKey, number[]> = { floor: [], 'sign-in': [], home: [] };
  const cpu: Record<PageKey, number[]> = { floor: [], 'sign-in': [], home: [] };
  try {
    const blocks = Math.max(2, Math.ceil(RENDERS / RENDER_BLOCK) + 1);
    for (let block = 0; block < blocks; block += 1) {
      for (const spec of PAGES.map((_, i) => PAGES[(i + block) % PAGES.length]!)) {
        const cpuBefore = cpuTimeMs(serverPid);
        const blockTimes: number[] = [];
        for (let i = 0; i < RENDER_BLOCK; i += 1) blockTimes.push(await timedGet(agent, `${base}${spec.path}`, spec.signedIn ? signedIn : undefined));
        if (block === 0) continue; // warm-up
        times[spec.key].push(...blockTimes);
        cpu[spec.key].push((cpuTimeMs(serverPid) - cpuBefore) / RENDER_BLOCK);
      }
    }
  } finally {
    agent.destroy();
  }
  const result = {} as Record<PageKey, ServerRender>;
  for (const spec of PAGES) result[spec.key] = { p50: median(times[spec.key]), cpu: median(cpu[spec.key]) };
  return result;
}

/* ---------------------------------------------------------------- one load */

/**
 * LCP candidates and long tasks, kept on `window.__lab` (page code). Registered once the load event has fired, with
 * `buffered: true`: the entries from the document's start are handed over then (takeRecords), later ones as they come.
 * Nothing of the lab's runs in the page before its first paint.
 */
const OBSERVE_IN_PAGE = `(() => {
  const lab = { lcp: 0, lcpElement: '', longTasks: [] };
  window.__lab = lab;
  const describe = (el) => {
    if (!el) return '(removed)';
    const cls = typeof el.className === 'string' && el.className ? '.' + el.className.trim().split(/\\s+/)[0] : '';
    const text = (el.textContent || '').trim().slice(0, 24);
    return el.tagName.toLowerCase() + cls + (text ? ' "' + text + '"' : '');
  };
  const onLcp = (entries) => {
    for (const entry of entries) {
      lab.lcp = entry.startTime;
      lab.lcpElement = describe(entry.element);
    }
  };
  const onLongTasks = (entries) => {
    for (const entry of entries) lab.longTasks.push([entry.startTime, entry.startTime + entry.duration]);
  };
  const lcp = new PerformanceObserver((list) => onLcp(list.getEntries()));
  lcp.observe({ type: 'largest-contentful-paint', buffered: true });
  onLcp(lcp.takeRecords());
  const longTasks = new PerformanceObserver((list) => onLongTasks(list.getEntries()));
  longTasks.observe({ type: 'longtask', buffered: true });
  onLongTasks(longTasks.takeRecords());
})()`;

interface PageFigures {
  fcp: number;
  lcp: number;
  /** The LCP entry's element: tag, first class, the start of its text */
  lcpElement: string;
  loadStart: number;
  now: number;
  longTasks: [number, number][];
  scriptsAfterLoad: string[];
}

/** What the page knows so far (page code, run by page.evaluate). */
const READ_FIGURES = `(() => {
  const lab = window.__lab;
  const nav = performance.getEntriesByType('navigation')[0];
  const loadStart = nav ? nav.loadEventStart : 0;
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  const scriptsAfterLoad = performance
    .getEntriesByType('resource')
    .filter((entry) => loadStart > 0 && entry.startTime >= loadStart && new URL(entry.name).pathname.endsWith('.js'))
    .map((entry) => entry.name);
  // A prefetched chunk is listed again when the page then runs it (from the HTTP cache): each URL counts once.
  return { fcp: paint ? paint.startTime : 0, lcp: lab.lcp, lcpElement: lab.lcpElement, loadStart, now: performance.now(), longTasks: lab.longTasks, scriptsAfterLoad: [...new Set(scriptsAfterLoad)] };
})()`;

/** Lighthouse's TBT: long tasks between FCP and TTI, each counted past 50 ms, clipped to start at FCP. */
export function totalBlockingTime(longTasks: [number, number][], fcp: number, tti: number): number {
  let total = 0;
  for (const [start, end] of longTasks) {
    if (end <= fcp || start >= tti) continue;
    const blocking = Math.min(end, tti) - Math.max(start, fcp) - 50;
    if (blocking > 0) total += blocking;
  }
  return total;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time (ms) per script file and per function (file:line:col name), heaviest first. */
function profileSummary(profile: CpuProfile): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const perFile = new Map<string, number>();
  const perFunction = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (!node) return;
    const file = node.callFrame.url ? new URL(node.callFrame.url).pathname.replace(/^\/_next\/static\/chunks\//, '') : `(${node.callFrame.functionName || 'native'})`;
    perFile.set(file, (perFile.get(file) ?? 0) + ms);
    const fn = `${file}:${node.callFrame.lineNumber}:${node.callFrame.columnNumber} ${node.callFrame.functionName || '(anonymous)'}`;
    perFunction.set(fn, (perFunction.get(fn) ?? 0) + ms);
  });
  const top = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, ms]) => `      ${ms.toFixed(0).padStart(5)} ms  ${name}`)
      .join('\n');
  return `    self time per file:\n${top(perFile, 12)}\n    heaviest functions:\n${top(perFunction, 15)}`;
}

/** One page of the lab's browser: its CDP session, and commands and events scoped to it. */
interface LabPage {
  send<T = Record<string, unknown>>(method: string, params?: Record<string, unknown>): Promise<T>;
  evaluate<T>(expression: string): Promise<T>;
}

async function measure(base: string, spec: PageSpec, cookies: { name: string; value: string }[], profile = false): Promise<LoadResult> {
  if (!browser) fail('no browser');
  const lab = browser;
  // A new browser context per load: cold HTTP cache, no service worker, only the cookies set here.
  const { browserContextId } = await lab.send<{ browserContextId: string }>('Target.createBrowserContext', { disposeOnDetach: true });
  const stopListening: (() => void)[] = [];
  try {
    if (spec.signedIn) {
      // the lab's viewport (1280 px) is wide: what the head script of an earlier page wrote
      const hint = VIEWPORT_HINT ? [{ name: 'foyer-vw', value: 'wide' }] : [];
      await lab.send('Storage.setCookies', { browserContextId, cookies: [...cookies, ...hint].map((c) => ({ ...c, url: base, sameSite: 'Lax' })) });
    }
    const { targetId } = await lab.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank', browserContextId });
    const { sessionId } = await lab.send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
    const page: LabPage = {
      send: (method, params) => lab.send(method, params, sessionId),
      async evaluate<T>(expression: string) {
        const { result, exceptionDetails } = await lab.send<{ result: { value: T }; exceptionDetails?: { text: string } }>(
          'Runtime.evaluate',
          { expression, returnByValue: true, awaitPromise: true },
          sessionId,
        );
        if (exceptionDetails) fail(`${spec.path}: evaluation failed: ${exceptionDetails.text}`);
        return result.value;
      },
    };
    const hook: { onEvent?: (event: CdpEvent) => void } = {};
    stopListening.push(
      lab.on((event) => {
        if (event.sessionId !== sessionId) return;
        hook.onEvent?.(event);
      }),
    );
    await page.send('Page.enable');
    await page.send('Network.enable');
    await page.send('Emulation.setDeviceMetricsOverride', { width: 1280, height: 800, deviceScaleFactor: 1, mobile: false });
    await page.send('Emulation.setCPUThrottlingRate', { rate: CPU_THROTTLE });
    // `--devtools`: the Runtime domain on, as Playwright, Lighthouse and an open DevTools have it (ADR 059)
    if (DEVTOOLS_AGENT) await page.send('Runtime.enable');
    if (profile) {
      await page.send('Profiler.enable');
      await page.send('Profiler.setSamplingInterval', { interval: 200 });
      await page.send('Profiler.start');
    }

    // Requests in flight (for the quiet window), the document's answer, and every script's body (for the bytes after load).
    let inFlight = 0;
    let busyUntil = Date.now();
    let loaded = false;
    let documentStatus = 0;
    const scripts = new Map<string, string>();
    /** script URL → the request that loaded it; its body is read once the page is quiet (no lab work during the load) */
    const finished = new Map<string, string>();
    hook.onEvent = (event) => {
      const params = event.params as { requestId?: string; type?: string; response?: { url: string; status: number }; request?: { url: string } };
      if (event.method === 'Network.requestWillBeSent') {
        inFlight += 1;
        if (inFlight > 2) busyUntil = Date.now();
        if (params.type === 'Document' && params.request) documentStatus = 0;
      } else if (event.method === 'Network.responseReceived' && params.response) {
        if (params.type === 'Document') documentStatus = params.response.status;
        if (new URL(params.response.url).pathname.endsWith('.js') && params.requestId) scripts.set(params.requestId, params.response.url);
      } else if (event.method === 'Network.loadingFinished' || event.method === 'Network.loadingFailed') {
        inFlight = Math.max(0, inFlight - 1);
        if (inFlight > 2) busyUntil = Date.now();
        const url = params.requestId ? scripts.get(params.requestId) : undefined;
        if (url && params.requestId && event.method === 'Network.loadingFinished') finished.set(url, params.requestId);
      } else if (event.method === 'Page.loadEventFired') {
        loaded = true;
      }
    };

    const started = Date.now();
    const until = async (what: string, done: () => boolean | Promise<boolean>, timeoutMs: number) => {
      while (!(await done())) {
        if (Date.now() - started > timeoutMs) fail(`${spec.path}: ${what} did not happen within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const { errorText } = await page.send<{ errorText?: string }>('Page.navigate', { url: `${base}${spec.path}` });
    if (errorText) fail(`${spec.path}: ${errorText}`);
    await until('the load event', () => loaded, LOAD_DEADLINE_MS);
    await page.evaluate(OBSERVE_IN_PAGE);
    if (documentStatus !== 200) fail(`${spec.path} answered HTTP ${documentStatus}`);
    const at = await page.evaluate<string>('location.pathname');
    if (at !== spec.path) fail(`${spec.path} ended on ${at}`);
    await until(`${spec.ready} on screen`, () => page.evaluate<boolean>(`document.querySelector(${JSON.stringify(spec.ready)}) !== null`), LOAD_DEADLINE_MS);

    // Wait for the quiet window: no long task and ≤ 2 requests in flight for QUIET_MS.
    let figures = await page.evaluate<PageFigures>(READ_FIGURES);
    for (;;) {
      const lastTaskEnd = figures.longTasks.reduce((max, [, end]) => Math.max(max, end), figures.fcp);
      const cpuQuietFor = figures.now - lastTaskEnd;
      const netQuietFor = inFlight > 2 ? 0 : Date.now() - busyUntil;
      if (cpuQuietFor >= QUIET_MS && netQuietFor >= QUIET_MS) break;
      if (Date.now() - started > LOAD_DEADLINE_MS) fail(`${spec.path} never became quiet for ${QUIET_MS} ms`);
      await new Promise((r) => setTimeout(r, Math.max(100, Math.min(QUIET_MS - cpuQuietFor, QUIET_MS - netQuietFor, 1000))));
      figures = await page.evaluate<PageFigures>(READ_FIGURES);
    }
    if (figures.fcp <= 0) fail(`${spec.path}: no first-contentful-paint entry`);
    const tti = figures.longTasks.reduce((max, [, end]) => Math.max(max, end), figures.fcp);
    if (profile) {
      const { profile: cpuProfile } = await page.send<{ profile: CpuProfile }>('Profiler.stop');
      console.log(`  CPU profile of ${spec.label} (throttled ${CPU_THROTTLE}×, navigation to quiet):\n${profileSummary(cpuProfile)}`);
    }
    const sizes = await Promise.all(
      figures.scriptsAfterLoad.map(async (url) => {
        const requestId = finished.get(url);
        if (!requestId) return 0;
        const { body, base64Encoded } = await page.send<{ body: string; base64Encoded: boolean }>('Network.getResponseBody', { requestId });
        return gzipSync(Buffer.from(body, base64Encoded ? 'base64' : 'utf8'), { level: 6 }).length;
      }),
    );
    return {
      fcp: figures.fcp,
      lcp: figures.lcp,
      lcpElement: figures.lcpElement,
      tbt: totalBlockingTime(figures.longTasks, figures.fcp, tti),
      tti,
      longTasks: figures.longTasks.filter(([, end]) => end > figures.fcp).length,
      jsAfterLoadGz: sizes.reduce((a, b) => a + b, 0),
      jsAfterLoadFiles: sizes.length,
    };
  } finally {
    for (const stop of stopListening) stop();
    await lab.send('Target.disposeBrowserContext', { browserContextId }).catch(() => undefined);
  }
}

/* ---------------------------------------------------------------- run */

async function main(): Promise<number> {
  if (!existsSync(join(WEB, '.next/BUILD_ID'))) fail('no production build in apps/web/.next; run "npm run build -w apps/web" first');
  if (!existsSync(CHROMIUM_PATH)) fail(`Chromium is missing at ${CHROMIUM_PATH} (apt-get install -y chromium)`);
  if (!(await portIsFree(BACKEND_PORT))) {
    fail(`port ${BACKEND_PORT} is taken; the app's browser bundle talks to ${BACKEND_URL}. Run inside a private network namespace: unshare -n bash -c 'ip link set lo up; node bench/web-lab.ts'`);
  }
  const loadBefore = loadavg();
  mkdirSync(OUT, { recursive: true });
  const dataDir = join(OUT, 'web-lab-localbase-data');
  rmSync(dataDir, { recursive: true, force: true });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;

  startChild(
    'localbase',
    [join(ROOT, 'packages/localbase/bin/localbase.ts'), 'start', '--data-dir', dataDir, '--quiet'],
    {
      LOCALBASE_PORT: String(BACKEND_PORT),
      LOCALBASE_HOST: '127.0.0.1',
      LOCALBASE_SITE_URL: base,
      LOCALBASE_REDIRECT_URLS: `${base}/**`,
      LOCALBASE_RATE_LIMIT_SIGN_IN: '100000',
      LOCALBASE_RATE_LIMIT_REFRESH: '100000',
    },
    join(OUT, 'web-lab-localbase.log'),
  );
  await waitFor(`${BACKEND_URL}/auth/v1/health`, 'localbase', 120_000, (status) => status < 500);
  const webServer = startChild(
    'the web server',
    [join(WEB, 'server.ts')],
    { NODE_ENV: 'production', PORT: String(port), HOST: '127.0.0.1', SUPABASE_SECRET_KEY: LOCAL_SECRET_KEY, FOYER_LAB_FLOOR: '1' },
    join(OUT, 'web-lab-server.log'),
    WEB, // as `npm run start -w apps/web`: next.config.ts resolves from there
  );
  await waitFor(`${base}/lab-floor`, 'the web server', 120_000);
  const cookies = await seedUser(NOTES);
  const serverRender = await timeServerRenders(base, cookies, webServer.pid);

  browser = await launchOverPipe(CHROMIUM_PATH, [
    ...CHROMIUM_ARGS,
    // no omnibox popup WebUI for each load's new window (e2e/chromium.ts): ≈ 1 s of a core during each load (ADR 060)
    disableFeaturesSwitch(),
  ]);

  const results: Record<PageKey, LoadResult[]> = { floor: [], 'sign-in': [], home: [] };
  const log = (line: string) => {
    if (!asJson) console.log(line);
  };
  log(`web-lab: ${base}, CPU ${CPU_THROTTLE}× slower, ${LOADS} loads each + 1 warm-up round, quiet window ${QUIET_MS} ms; load average ${loadBefore.map((l) => l.toFixed(1)).join(' ')}`);
  for (let round = 0; round <= LOADS; round += 1) {
    const order = PAGES.map((_, i) => PAGES[(i + round) % PAGES.length]!);
    for (const spec of order) {
      const result = await measure(base, spec, cookies, PROFILE && round === 1);
      if (round > 0) results[spec.key].push(result);
      log(
        `  ${round === 0 ? 'warm-up' : `round ${round}`} ${spec.label.padEnd(18)} FCP ${result.fcp.toFixed(0).padStart(5)}  LCP ${result.lcp.toFixed(0).padStart(5)}  TBT ${result.tbt.toFixed(0).padStart(4)}  TTI ${result.tti.toFixed(0).padStart(5)}  long tasks ${result.longTasks}  JS after load ${(result.jsAfterLoadGz / 1000).toFixed(1)} kB gz (${result.jsAfterLoadFiles})${result.lcp > result.fcp ? `  LCP element ${result.lcpElement}` : ''}`,
      );
    }
  }
  const loadAfter = loadavg();
  await stopAll();

  const summary = Object.fromEntries(
    PAGES.map((spec) => {
      const rows = results[spec.key];
      return [
        spec.key,
        {
          label: spec.label,
          fcp: median(rows.map((r) => r.fcp)),
          lcp: median(rows.map((r) => r.lcp)),
          tbt: median(rows.map((r) => r.tbt)),
          tti: median(rows.map((r) => r.tti)),
          jsAfterLoadGz: median(rows.map((r) => r.jsAfterLoadGz)),
          tbtRange: [Math.min(...rows.map((r) => r.tbt)), Math.max(...rows.map((r) => r.tbt))],
          fcpRange: [Math.min(...rows.map((r) => r.fcp)), Math.max(...rows.map((r) => r.fcp))],
        },
      ];
    }),
  ) as Record<PageKey, { label: string; fcp: number; lcp: number; tbt: number; tti: number; jsAfterLoadGz: number; tbtRange: number[]; fcpRange: number[] }>;
  const floor = summary.floor;

  const checks: { what: string; value: number; target: number; unit: string }[] = [];
  for (const key of ['sign-in', 'home'] as const) {
    const s = summary[key];
    checks.push({ what: `${s.label}: TBT`, value: s.tbt, target: TARGET_TBT_MS, unit: 'ms' });
    checks.push({ what: `${s.label}: FCP / floor FCP`, value: s.fcp / floor.fcp, target: TARGET_FCP_VS_FLOOR, unit: '×' });
  }
  checks.push({ what: `${summary.home.label}: LCP / FCP`, value: summary.home.lcp / summary.home.fcp, target: TARGET_LCP_VS_FCP, unit: '×' });
  const missed = checks.filter((c) => c.value > c.target);

  if (asJson) {
    console.log(JSON.stringify({ loads: LOADS, quietMs: QUIET_MS, cpuThrottle: CPU_THROTTLE, loadBefore, loadAfter, summary, serverRender, results, checks, missed: missed.length }, null, 2));
  } else {
    console.log(`\nmedians of ${LOADS} loads (ms; kB gz), load average after ${loadAfter.map((l) => l.toFixed(1)).join(' ')}`);
    console.log(`  ${'page'.padEnd(20)} ${'FCP'.padStart(6)} ${'×floor'.padStart(7)} ${'LCP'.padStart(6)} ${'LCP/FCP'.padStart(8)} ${'TBT'.padStart(5)} ${'TBT range'.padStart(11)} ${'×floor'.padStart(7)} ${'TTI'.padStart(6)} ${'JS after load'.padStart(14)}`);
    for (const spec of PAGES) {
      const s = summary[spec.key];
      console.log(
        `  ${s.label.padEnd(20)} ${s.fcp.toFixed(0).padStart(6)} ${(s.fcp / floor.fcp).toFixed(2).padStart(7)} ${s.lcp.toFixed(0).padStart(6)} ${(s.lcp / s.fcp).toFixed(2).padStart(8)} ${s.tbt.toFixed(0).padStart(5)} ${`${s.tbtRange[0]!.toFixed(0)}–${s.tbtRange[1]!.toFixed(0)}`.padStart(11)} ${(floor.tbt > 0 ? `${(s.tbt / floor.tbt).toFixed(1)}` : '—').padStart(7)} ${s.tti.toFixed(0).padStart(6)} ${(s.jsAfterLoadGz / 1000).toFixed(1).padStart(14)}`,
      );
    }
    const overFloor = PAGES.filter((spec) => spec.key !== 'floor')
      .map((spec) => `${spec.label} ${(serverRender[spec.key].p50 / serverRender.floor.p50).toFixed(2)} (CPU ${(serverRender[spec.key].cpu / serverRender.floor.cpu).toFixed(2)})`)
      .join(', ');
    console.log(`\nthe server alone (p50 of ${RENDERS} renders a page, unthrottled; ms to the last byte, CPU ms a render):`);
    for (const spec of PAGES) {
      const r = serverRender[spec.key];
      console.log(`  ${spec.label.padEnd(20)} ${r.p50.toFixed(2).padStart(6)} ms   CPU ${Number.isNaN(r.cpu) ? '—' : r.cpu.toFixed(2)} ms`);
    }
    console.log(`  × the floor's: ${overFloor}`);
    console.log('\ntargets (issue 13):');
    for (const c of checks) {
      const shown = c.unit === 'ms' ? `${c.value.toFixed(0)} ms` : `${c.value.toFixed(2)}×`;
      const target = c.unit === 'ms' ? `${c.target} ms` : `${c.target}×`;
      console.log(`  ${c.value > c.target ? 'MISSED' : 'ok    '} ${c.what.padEnd(32)} ${shown.padStart(8)}  (target ≤ ${target})`);
    }
  }
  return missed.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    console.error(`web-lab: ${error instanceof Error ? error.message : String(error)}`);
    await stopAll();
    process.exit(2);
  },
);
