// The localbase the browser tests run against, as a process the tests can stop and start again (to see how the app
// behaves while its backend is down). Global setup launches it and records how in test-results/e2e-localbase.json;
// a test calls stopBackend() / startBackend(); teardown stops whichever process is current. The database is a
// PGlite folder under test-results/, so users, sessions and notes survive a restart, as in `npm run dev`.
import { spawn } from 'node:child_process';
import { existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const BACKEND_STATE_FILE = join(ROOT, 'test-results/e2e-localbase.json');

/** The Supabase CLI's public demo keys (what the app embeds by default); not secrets. */
export const DEFAULT_ANON_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0';
export const DEFAULT_SERVICE_ROLE_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU';

export interface BackendSpec {
  url: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  log: string;
  pid?: number;
}

export function readBackendState(): BackendSpec | null {
  if (!existsSync(BACKEND_STATE_FILE)) return null;
  return JSON.parse(readFileSync(BACKEND_STATE_FILE, 'utf8')) as BackendSpec;
}

function writeBackendState(spec: BackendSpec): void {
  writeFileSync(BACKEND_STATE_FILE, `${JSON.stringify(spec, null, 2)}\n`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts localbase from a spec (own process group, output appended to its log), records its pid. */
export function launchBackend(spec: BackendSpec): number {
  const out = openSync(spec.log, 'a');
  const child = spawn(spec.command, spec.args, {
    cwd: ROOT,
    env: { ...process.env, ...spec.env },
    detached: true,
    stdio: ['ignore', out, out],
  });
  child.unref();
  if (child.pid === undefined) throw new Error('[e2e] localbase did not start');
  writeBackendState({ ...spec, pid: child.pid });
  return child.pid;
}

/** Waits until localbase answers its health check (and fails early if its process died). */
export async function waitForBackend(spec: BackendSpec, pid: number, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  while (Date.now() < deadline) {
    if (!alive(pid)) throw new Error(`[e2e] localbase (pid ${pid}) exited before it was ready; log: ${spec.log}`);
    try {
      const response = await fetch(`${spec.url}/auth/v1/health`, {
        headers: { apikey: DEFAULT_ANON_KEY },
        signal: AbortSignal.timeout(3000),
      });
      if (response.ok) return;
      lastError = `HTTP ${response.status}`;
    } catch (error) {
      lastError = error instanceof Error ? error.message : String(error);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`[e2e] localbase was not ready after ${timeoutMs} ms (last: ${lastError}); log: ${spec.log}`);
}

/** Stops the current localbase process group (SIGTERM, then SIGKILL after 5 s) and waits until it is gone. */
export async function stopBackend(): Promise<void> {
  const spec = readBackendState();
  const pid = spec?.pid;
  if (pid === undefined || !alive(pid)) return;
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + 5000;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (alive(pid)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
    while (alive(pid)) await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts localbase again exactly as global setup did (same port, same data folder) and waits until it is ready. */
export async function startBackend(): Promise<void> {
  const spec = readBackendState();
  if (!spec) throw new Error(`[e2e] no ${BACKEND_STATE_FILE}: localbase was not started by the e2e global setup (E2E_BASE_URL?)`);
  const pid = launchBackend(spec);
  await waitForBackend(spec, pid);
}

/** True when this run's localbase was started by global setup (so a test may stop and restart it). */
export const backendControllable = (): boolean => readBackendState() !== null;

export interface BackendChange {
  /** Environment variables to set (e.g. LOCALBASE_ENABLE_CONFIRMATIONS=1). */
  env?: Record<string, string>;
  /** Command-line flags to leave out (e.g. --enable-anonymous-sign-ins). */
  dropArgs?: string[];
}

/**
 * Restarts localbase with some settings changed (same port, same data folder), for tests about a configuration the
 * rest of the run does not use. Returns the function that restarts it again as global setup did; call it in an
 * afterAll, so later files see the usual backend.
 */
export async function restartBackendWith(change: BackendChange): Promise<() => Promise<void>> {
  const original = readBackendState();
  if (!original) throw new Error(`[e2e] no ${BACKEND_STATE_FILE}: localbase was not started by the e2e global setup (E2E_BASE_URL?)`);
  const spec: BackendSpec = { ...original };
  delete spec.pid;
  await stopBackend();
  const changed: BackendSpec = {
    ...spec,
    env: { ...spec.env, ...change.env },
    args: spec.args.filter((arg) => !(change.dropArgs ?? []).includes(arg)),
  };
  await waitForBackend(changed, launchBackend(changed));
  return async () => {
    await stopBackend();
    await waitForBackend(spec, launchBackend(spec));
  };
}

/**
 * For a describe block (or a whole file) about another configuration: restarts localbase with `change` before its
 * tests and as global setup had it after them, so later files see the usual backend.
 */
export function useBackendWith(change: BackendChange, timeoutMs = 90_000): void {
  let restore: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    restore = await restartBackendWith(change);
  }, timeoutMs);
  afterAll(async () => {
    await restore?.();
  }, timeoutMs);
}

/**
 * Stops localbase and answers on its address with `handler` instead (a backend that answers something unexpected:
 * a database failure, a proxy's error page), until the returned function stops that server and starts localbase
 * again as before.
 */
export async function replaceBackendWith(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<() => Promise<void>> {
  const spec = readBackendState();
  if (!spec) throw new Error(`[e2e] no ${BACKEND_STATE_FILE}: localbase was not started by the e2e global setup (E2E_BASE_URL?)`);
  await stopBackend();
  const { hostname, port } = new URL(spec.url);
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(port), hostname, resolve);
  });
  return async () => {
    await new Promise((resolve) => {
      server.close(resolve);
      server.closeAllConnections();
    });
    await startBackend();
  };
}
