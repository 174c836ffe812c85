// Durability of the file-backed database: write users in a loop, SIGKILL the CLI mid-loop, restart on the same
// folder and find every acknowledged write. Also: a second start on a running folder is refused naming the pid.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEMO_ANON_KEY,
  DEMO_SERVICE_KEY,
  freePort,
  spawnCli,
  stopCli,
  waitReady,
  type CliProcess,
} from './cli.ts';
import { removeDataFolder } from './helpers.ts';

const PASSWORD = 'durable-password-1';
let dataDir: string;
const running: CliProcess[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'localbase-durability-'));
});

afterAll(async () => {
  for (const proc of running) await stopCli(proc, 'SIGKILL');
  removeDataFolder(dataDir);
});

async function start(): Promise<CliProcess> {
  const proc = spawnCli(['--data-dir', dataDir, '--quiet'], await freePort());
  running.push(proc);
  await waitReady(proc, 90_000);
  return proc;
}

function adminHeaders(): Record<string, string> {
  return {
    apikey: DEMO_SERVICE_KEY,
    authorization: `Bearer ${DEMO_SERVICE_KEY}`,
    'content-type': 'application/json',
    'x-supabase-api-version': '2024-01-01',
  };
}

async function listAllUsers(url: string): Promise<{ id: string; email: string }[]> {
  const users: { id: string; email: string }[] = [];
  for (let page = 1; ; page++) {
    const res = await fetch(`${url}/auth/v1/admin/users?page=${page}&per_page=100`, { headers: adminHeaders() });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { users: { id: string; email: string }[] };
    users.push(...body.users);
    if (body.users.length < 100) return users;
  }
}

describe('file-backed durability', () => {
  it('finds every acknowledged user after kill -9 and a restart', async () => {
    const first = await start();
    const acknowledged: { id: string; email: string }[] = [];
    const runTag = Date.now().toString(36);
    const target = 25;
    let counter = 0;
    let killed = false;

    async function worker(): Promise<void> {
      while (!killed) {
        counter += 1;
        const email = `durable-${runTag}-${counter}@example.com`;
        try {
          const res = await fetch(`${first.url}/auth/v1/admin/users`, {
            method: 'POST',
            headers: adminHeaders(),
            body: JSON.stringify({ email, password: PASSWORD, email_confirm: true }),
          });
          const body = (await res.json()) as { id?: string };
          if (res.status === 200 && body.id) acknowledged.push({ id: body.id, email });
          else throw new Error(`create user answered ${res.status}: ${JSON.stringify(body)}`);
        } catch (e) {
          if (killed) return; // in-flight when killed: not acknowledged, may or may not exist
          throw e;
        }
        if (acknowledged.length >= target && !killed) {
          killed = true;
          first.child.kill('SIGKILL'); // while the other workers' requests are in flight
        }
      }
    }
    await Promise.all([worker(), worker(), worker(), worker()]);
    const exit = await first.exited;
    expect(exit.signal).toBe('SIGKILL');
    expect(acknowledged.length).toBeGreaterThanOrEqual(target);

    const second = await start();
    const users = await listAllUsers(second.url);
    const byId = new Map(users.map((u) => [u.id, u.email]));
    const missing = acknowledged.filter((a) => byId.get(a.id) !== a.email);
    expect(missing, `lost acknowledged writes: ${JSON.stringify(missing)}`).toEqual([]);

    // The restored rows are whole: an acknowledged user signs in with its password.
    const last = acknowledged[acknowledged.length - 1]!;
    const signIn = await fetch(`${second.url}/auth/v1/token?grant_type=password`, {
      method: 'POST',
      headers: { apikey: DEMO_ANON_KEY, 'content-type': 'application/json', 'x-supabase-api-version': '2024-01-01' },
      body: JSON.stringify({ email: last.email, password: PASSWORD }),
    });
    expect(signIn.status).toBe(200);

    // A second start on the same folder while this one runs is refused, naming the running pid.
    const intruder = spawnCli(['--data-dir', dataDir, '--quiet'], await freePort());
    running.push(intruder);
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000));
    const result = await Promise.race([intruder.exited, timeout]);
    expect(result, `second start did not exit:\n${intruder.output()}`).not.toBe('timeout');
    expect((result as { code: number | null }).code).toBe(1);
    expect(intruder.output()).toContain(String(second.pid));
    // The running server is unharmed.
    expect((await fetch(`${second.url}/auth/v1/health`, { headers: { apikey: DEMO_ANON_KEY } })).status).toBe(200);

    // SIGTERM exits cleanly and releases the folder: a third start works and still has the data.
    second.child.kill('SIGTERM');
    const termExit = await second.exited;
    expect(termExit.code).toBe(0);
    const third = await start();
    const again = await listAllUsers(third.url);
    expect(again.length).toBe(users.length);
    await stopCli(third);
  }, 240_000);
});
