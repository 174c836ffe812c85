// Global setup for the browser tests: makes sure Debian Chromium exists, that a production build of
// apps/web exists, starts localbase (memory DB) on the backend port the bundle embeds (54321), then serves the
// app with `next start` on a free 127.0.0.1 port for the whole run.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { launchBackend, readBackendState, stopBackend, waitForBackend, type BackendSpec } from './backend-control.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    baseURL: string;
    /** The backend (localbase) the app talks to, e.g. http://127.0.0.1:54321. */
    supabaseURL: string;
    /** Playwright's own `--disable-features` switch for this Chromium (see playwrightDisableFeatures) */
    playwrightDisableFeatures: string;
  }
}

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WEB = join(ROOT, 'apps/web');
const LOG_DIR = join(ROOT, 'test-results');
const SERVER_LOG = join(LOG_DIR, 'e2e-server.log');
const BACKEND_LOG = join(LOG_DIR, 'e2e-localbase.log');
const BACKEND_DATA = join(LOG_DIR, 'e2e-localbase-data');
/** The browser bundle embeds this backend address at build time (apps/web/src/lib/env-config.ts). */
export const BACKEND_PORT = 54321;
export const BACKEND_URL = `http://127.0.0.1:${BACKEND_PORT}`;
/** The Supabase CLI's public local secret key (localbase accepts it as the service_role key). */
const LOCAL_SECRET_KEY = 'sb_secret_N7UND0UgjKTVK-Uodkm0Hg_xSvEMPvz';

/** PATH with the project's Node 22 (node_modules/.bin) first, as every npm script gets it. */
function projectEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
    NEXT_TELEMETRY_DISABLED: '1',
    ...extra,
  };
}

function ensureChromium(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  const installCommand = 'apt-get update && apt-get install -y chromium';
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM_PATH}; the browser tests need it. Install it as root with:\n` +
        `  sudo sh -c '${installCommand}'\nthen run the tests again.`,
    );
  }
  console.log(`[e2e] ${CHROMIUM_PATH} is missing; installing Debian's Chromium: ${installCommand}`);
  for (const args of [['update'], ['install', '-y', 'chromium']]) {
    console.log(`[e2e] $ apt-get ${args.join(' ')}`);
    const result = spawnSync('apt-get', args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (result.status !== 0) {
      throw new Error(`[e2e] "apt-get ${args.join(' ')}" failed (exit ${result.status}); cannot run the browser tests.`);
    }
  }
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`[e2e] apt-get finished but ${CHROMIUM_PATH} still does not exist.`);
  console.log(`[e2e] installed ${CHROMIUM_PATH}`);
}

function ensureBuild(): void {
  const buildId = join(WEB, '.next/BUILD_ID');
  const forced = process.env.E2E_BUILD === 'always';
  if (existsSync(buildId) && !forced) {
    console.log(`[e2e] using the existing production build ${readFileSync(buildId, 'utf8').trim()} (E2E_BUILD=always rebuilds)`);
    return;
  }
  console.log(`[e2e] ${forced ? 'E2E_BUILD=always: rebuilding' : 'no production build found: building'} apps/web (npm run build -w apps/web)`);
  const result = spawnSync('npm', ['run', 'build', '-w', 'apps/web'], { cwd: ROOT, stdio: 'inherit', env: projectEnv() });
  if (result.status !== 0 || !existsSync(buildId)) {
    throw new Error(`[e2e] "npm run build -w apps/web" failed (exit ${result.status}); see its output above.`);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not get a free port'));
        return;
      }
      server.close(() => resolvePort(address.port));
    });
  });
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree(true)));
  });
}

/**
 * localbase on 54321 with a fresh PGlite folder under test-results/ (kept across a restart, see backend-control.ts),
 * rate limits high enough for a whole test run (every test signs up or in from the same IP), email links allowed
 * back to the app under test, anonymous sign-ins (guest sessions) on.
 */
async function startBackend(appURL: string): Promise<number> {
  if (!(await portIsFree(BACKEND_PORT))) {
    throw new Error(
      `[e2e] port ${BACKEND_PORT} is taken. The browser tests start their own localbase there (the app's browser bundle ` +
        `embeds ${BACKEND_URL}). Stop whatever listens on ${BACKEND_PORT} (e.g. \`npm run dev\` / \`npm run backend\`) and run again.`,
    );
  }
  rmSync(BACKEND_DATA, { recursive: true, force: true });
  writeFileSync(BACKEND_LOG, '');
  const spec: BackendSpec = {
    url: BACKEND_URL,
    // The project's Node 22 runs localbase's TypeScript directly.
    command: join(ROOT, 'node_modules/.bin/node'),
    // Guest sessions (anonymous sign-ins) on, as `npm run backend` starts it: guest.test.ts tries them.
    args: [join(ROOT, 'packages/localbase/bin/localbase.ts'), 'start', '--data-dir', BACKEND_DATA, '--quiet', '--enable-anonymous-sign-ins'],
    env: {
      PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}`,
      LOCALBASE_PORT: String(BACKEND_PORT),
      LOCALBASE_HOST: '127.0.0.1',
      LOCALBASE_SITE_URL: appURL,
      LOCALBASE_REDIRECT_URLS: `${appURL}/**`,
      LOCALBASE_RATE_LIMIT_SIGN_IN: '100000',
      LOCALBASE_RATE_LIMIT_REFRESH: '100000',
      LOCALBASE_RATE_LIMIT_VERIFY: '100000',
      LOCALBASE_RATE_LIMIT_EMAIL: '100000',
      LOCALBASE_RATE_LIMIT_ANONYMOUS_USERS: '100000',
      // Tests mail one address again within a minute ("Send the link again"); the one about the wait sets its own.
      LOCALBASE_EMAIL_MAX_FREQUENCY: '0',
    },
    log: BACKEND_LOG,
  };
  const pid = launchBackend(spec);
  console.log(`[e2e] localbase on ${BACKEND_URL} (data ${BACKEND_DATA}, pid ${pid}, log ${BACKEND_LOG})`);
  try {
    await waitForBackend(spec, pid);
  } catch (error) {
    await stopBackend();
    throw error;
  }
  return pid;
}

export { DEFAULT_ANON_KEY } from './backend-control.ts';

function stop(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) {
      done();
      return;
    }
    const pid = child.pid;
    const killTimer = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 5000);
    child.once('exit', () => {
      clearTimeout(killTimer);
      done();
    });
    try {
      process.kill(-pid, 'SIGTERM'); // the whole process group: npm, sh and next
    } catch {
      clearTimeout(killTimer);
      done();
    }
  });
}

async function waitUntilReady(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`[e2e] "next start" exited (${child.exitCode ?? child.signalCode}) before it was ready; log: ${SERVER_LOG}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
      if (response.status === 200) return;
      lastError = `HTTP ${response.status}`;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`[e2e] ${url} was not ready after ${timeoutMs} ms (last: ${lastError}); log: ${SERVER_LOG}`);
}

/**
 * The `--disable-features` switch Playwright puts on Chromium's command line, read from a launch. The tests add
 * their own features to it (e2e/chromium.ts): Chromium honours only the last such switch, so appending a second
 * one would switch Playwright's features back on.
 */
async function playwrightDisableFeatures(): Promise<string> {
  const server = await chromium.launchServer({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, headless: true });
  try {
    const found = server.process().spawnargs.find((arg) => arg.startsWith('--disable-features='));
    return found ?? '';
  } finally {
    await server.close();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureChromium();
  project.provide('playwrightDisableFeatures', await playwrightDisableFeatures());

  // E2E_BASE_URL: test an app that is already running (e.g. `npm run dev`) instead of building and starting one.
  const external = process.env.E2E_BASE_URL;
  if (external) {
    const url = external.replace(/\/+$/, '');
    console.log(`[e2e] E2E_BASE_URL set: testing the running app at ${url}`);
    const response = await fetch(`${url}/`, { signal: AbortSignal.timeout(30_000) }).catch((error: unknown) => {
      throw new Error(`[e2e] E2E_BASE_URL=${url} is not reachable: ${error instanceof Error ? error.message : String(error)}`);
    });
    if (response.status !== 200) throw new Error(`[e2e] E2E_BASE_URL=${url}/ answered HTTP ${response.status}`);
    project.provide('baseURL', url);
    project.provide('supabaseURL', process.env.E2E_SUPABASE_URL ?? BACKEND_URL);
    return async () => {};
  }

  ensureBuild();

  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  mkdirSync(LOG_DIR, { recursive: true });
  await startBackend(baseURL);
  const log = createWriteStream(SERVER_LOG);
  // The app's start script serves on PORT and binds HOST (default 127.0.0.1).
  const child = spawn('npm', ['run', 'start', '-w', 'apps/web'], {
    cwd: ROOT,
    // The server tells Auth each user's address with Sb-Forwarded-For and the (local, public) secret key: the
    // production path for hosted Supabase (ADR 024), exercised by every server-side auth call of the run.
    env: projectEnv({ PORT: String(port), HOST: '127.0.0.1', SUPABASE_SECRET_KEY: LOCAL_SECRET_KEY }),
    detached: true, // own process group, so teardown can stop npm and next together
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  console.log(`[e2e] next start on ${baseURL} (pid ${child.pid}, log ${SERVER_LOG})`);
  try {
    await waitUntilReady(`${baseURL}/`, child, 90_000);
  } catch (error) {
    await Promise.all([stop(child), stopBackend()]);
    throw error;
  }
  project.provide('baseURL', baseURL);
  project.provide('supabaseURL', BACKEND_URL);

  // If the run is interrupted (Ctrl-C, a CI timeout) the teardown below never runs: stop the server anyway.
  const killGroup = (): void => {
    // The app server, and whichever localbase process is current (a test may have restarted it).
    const pids = [child.exitCode === null && child.signalCode === null ? child.pid : undefined, readBackendState()?.pid];
    for (const pid of pids) {
      if (pid === undefined) continue;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    killGroup();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  };
  process.once('exit', killGroup);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  return async () => {
    process.off('exit', killGroup);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await Promise.all([stop(child), stopBackend()]);
    log.end();
    console.log('[e2e] stopped next start and localbase');
  };
}
