// Global setup for the browser tests: makes sure Debian Chromium exists, that a production build of
// apps/web exists, starts localbase (memory DB) on the backend port the bundle embeds (54321), then serves the
// app with `next start` on a free 127.0.0.1 port for the whole run.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    baseURL: string;
    /** The backend (localbase) the app talks to, e.g. http://127.0.0.1:54321. */
    supabaseURL: string;
  }
}

export const CHROMIUM_PATH = '/usr/bin/chromium';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WEB = join(ROOT, 'apps/web');
const LOG_DIR = join(ROOT, 'test-results');
const SERVER_LOG = join(LOG_DIR, 'e2e-server.log');
const BACKEND_LOG = join(LOG_DIR, 'e2e-localbase.log');
/** The browser bundle embeds this backend address at build time (apps/web/src/lib/env-config.ts). */
export const BACKEND_PORT = 54321;
export const BACKEND_URL = `http://127.0.0.1:${BACKEND_PORT}`;

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
 * localbase with an in-memory database on 54321, rate limits high enough for a whole test run (every test signs
 * up or in from the same IP), email links allowed back to the app under test.
 */
async function startBackend(appURL: string): Promise<ChildProcess> {
  if (!(await portIsFree(BACKEND_PORT))) {
    throw new Error(
      `[e2e] port ${BACKEND_PORT} is taken. The browser tests start their own localbase there (the app's browser bundle ` +
        `embeds ${BACKEND_URL}). Stop whatever listens on ${BACKEND_PORT} (e.g. \`npm run dev\` / \`npm run backend\`) and run again.`,
    );
  }
  const log = createWriteStream(BACKEND_LOG);
  // The project's Node 22 runs localbase's TypeScript directly.
  const child = spawn(join(ROOT, 'node_modules/.bin/node'), [join(ROOT, 'packages/localbase/bin/localbase.ts'), 'start', '--memory', '--quiet'], {
    cwd: ROOT,
    env: projectEnv({
      LOCALBASE_PORT: String(BACKEND_PORT),
      LOCALBASE_HOST: '127.0.0.1',
      LOCALBASE_SITE_URL: appURL,
      LOCALBASE_REDIRECT_URLS: `${appURL}/**`,
      LOCALBASE_RATE_LIMIT_SIGN_IN: '100000',
      LOCALBASE_RATE_LIMIT_REFRESH: '100000',
      LOCALBASE_RATE_LIMIT_VERIFY: '100000',
      LOCALBASE_RATE_LIMIT_EMAIL: '100000',
    }),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  console.log(`[e2e] localbase on ${BACKEND_URL} (memory DB, pid ${child.pid}, log ${BACKEND_LOG})`);
  const deadline = Date.now() + 60_000;
  let lastError = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`[e2e] localbase exited (${child.exitCode ?? child.signalCode}) before it was ready; log: ${BACKEND_LOG}`);
    }
    try {
      const response = await fetch(`${BACKEND_URL}/auth/v1/health`, {
        headers: { apikey: DEFAULT_ANON_KEY },
        signal: AbortSignal.timeout(3000),
      });
      if (response.ok) return child;
      lastError = `HTTP ${response.status}`;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  await stop(child);
  throw new Error(`[e2e] localbase was not ready after 60 s (last: ${lastError}); log: ${BACKEND_LOG}`);
}

/** The Supabase CLI's public demo anon key (what the app embeds by default); not a secret. */
export const DEFAULT_ANON_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0';

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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureChromium();

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
  const backend = await startBackend(baseURL);
  const log = createWriteStream(SERVER_LOG);
  // The app's start script serves on PORT and binds HOST (default 127.0.0.1).
  const child = spawn('npm', ['run', 'start', '-w', 'apps/web'], {
    cwd: ROOT,
    env: projectEnv({ PORT: String(port), HOST: '127.0.0.1' }),
    detached: true, // own process group, so teardown can stop npm and next together
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  console.log(`[e2e] next start on ${baseURL} (pid ${child.pid}, log ${SERVER_LOG})`);
  try {
    await waitUntilReady(`${baseURL}/`, child, 90_000);
  } catch (error) {
    await Promise.all([stop(child), stop(backend)]);
    throw error;
  }
  project.provide('baseURL', baseURL);
  project.provide('supabaseURL', BACKEND_URL);

  // If the run is interrupted (Ctrl-C, a CI timeout) the teardown below never runs: stop the server anyway.
  const killGroup = (): void => {
    for (const proc of [child, backend]) {
      if (proc.pid !== undefined && proc.exitCode === null && proc.signalCode === null) {
        try {
          process.kill(-proc.pid, 'SIGKILL');
        } catch {
          // already gone
        }
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
    await Promise.all([stop(child), stop(backend)]);
    log.end();
    console.log('[e2e] stopped next start and localbase');
  };
}
