// Helpers to run the `localbase` CLI as a child process (durability and lock tests, the one-shot commands).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import pg from 'pg';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const nodeBin = fileURLToPath(new URL('../../../node_modules/.bin/node', import.meta.url));
export const cliPath = fileURLToPath(new URL('../bin/localbase.ts', import.meta.url));

/** Supabase CLI demo keys (protocol §E): the CLI's defaults. */
export const DEMO_ANON_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0';
export const DEMO_SERVICE_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU';

/** A TCP port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface CliProcess {
  child: ChildProcess;
  pid: number;
  url: string;
  /** stdout + stderr so far. */
  output(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Environment for the child: no inherited localbase/database settings, so flags decide. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith('LOCALBASE_') || key === 'DATABASE_URL') delete env[key];
  }
  return { ...env, ...extra };
}

export function spawnCli(args: string[], port: number, extraEnv: Record<string, string> = {}): CliProcess {
  const child = spawn(nodeBin, [cliPath, 'start', '--port', String(port), ...args], {
    cwd: repoRoot,
    env: childEnv(extraEnv),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  if (child.pid === undefined) throw new Error('spawn failed');
  return { child, pid: child.pid, url: `http://127.0.0.1:${port}`, output: () => out, exited };
}

/** Polls GET /auth/v1/health until 200; fails early (with the output) if the process exits. */
export async function waitReady(proc: CliProcess, timeoutMs = 60_000): Promise<void> {
  let exited = false;
  void proc.exited.then(() => {
    exited = true;
  });
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`localbase exited before ready:\n${proc.output()}`);
    try {
      const res = await fetch(`${proc.url}/auth/v1/health`, { headers: { apikey: DEMO_ANON_KEY } });
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`localbase not ready after ${timeoutMs} ms:\n${proc.output()}`);
}

/** Kills the process if still running (cleanup). */
export async function stopCli(proc: CliProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill(signal);
  const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000));
  if ((await Promise.race([proc.exited, timeout])) === 'timeout') {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
}

/** Runs a one-shot CLI command (status, db reset, migration new, gen types) to its end. */
export function runCli(
  args: string[],
  extraEnv: Record<string, string> = {},
  cwd: string = repoRoot,
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(nodeBin, [cliPath, ...args], { cwd, env: childEnv(extraEnv), encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * A new, empty database on the PostgreSQL server of `serverUrl` (for tests that drop schemas or need their own
 * catalog, which the suite's shared database must not see). drop() removes it.
 */
export async function createScratchDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `lb_scratch_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists ${name} with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}
