// The `localbase start` command as a developer sees it: the banner, one log line per request and per mail,
// --quiet, and a clean exit on SIGINT.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEMO_ANON_KEY, DEMO_SERVICE_KEY, cliPath, freePort, nodeBin, spawnCli, stopCli, waitReady, type CliProcess } from './cli.ts';
import { fetchFrom, uniqueEmail } from './helpers.ts';

const running: CliProcess[] = [];

afterAll(async () => {
  for (const proc of running) await stopCli(proc, 'SIGKILL');
});

async function start(args: string[]): Promise<CliProcess> {
  const proc = spawnCli(args, await freePort());
  running.push(proc);
  await waitReady(proc, 90_000);
  return proc;
}

const headers = { apikey: DEMO_ANON_KEY, 'content-type': 'application/json', 'x-supabase-api-version': '2024-01-01' };

/** Waits until a line of the output satisfies `test`. */
async function waitForLine(proc: CliProcess, test: (line: string) => boolean, what: string): Promise<string> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const line = proc.output().split('\n').find(test);
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no ${what} line in the output:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const requestLine = (method: string, path: string, status: number) => (line: string) =>
  line.includes(method) && line.includes(path) && line.includes(` ${status}`) && /\d+(\.\d+)?\s*ms/.test(line);

describe('localbase start', () => {
  it('prints the banner like supabase start, logs requests and mails, and exits 0 on SIGINT', async () => {
    const proc = await start(['--memory']);
    const out = proc.output();
    for (const label of ['API URL', 'anon key', 'service_role key', 'JWT secret', 'Mailbox URL', 'Realtime URL', 'Data location']) {
      expect(out).toContain(label);
    }
    expect(out).toContain(proc.url);
    expect(out).toContain(`${proc.url}/mailbox`);
    expect(out).toContain(DEMO_ANON_KEY);
    expect(out).toContain(DEMO_SERVICE_KEY);
    expect(out).toContain('super-secret-jwt-token-with-at-least-32-characters-long');

    expect((await fetch(`${proc.url}/auth/v1/settings`, { headers })).status).toBe(200);
    await waitForLine(proc, requestLine('GET', '/auth/v1/settings', 200), 'request log');
    expect((await fetch(`${proc.url}/auth/v1/nope`, { headers })).status).toBe(404);
    await waitForLine(proc, requestLine('GET', '/auth/v1/nope', 404), 'request log');

    const email = uniqueEmail('cli');
    const signUp = await fetch(`${proc.url}/auth/v1/signup`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ email, password: 'cli-password-1' }),
    });
    expect(signUp.status).toBe(200);
    await waitForLine(proc, requestLine('POST', '/auth/v1/signup', 200), 'request log');
    const token = ((await signUp.json()) as { access_token: string }).access_token;
    const me = await fetch(`${proc.url}/auth/v1/user`, { headers: { ...headers, authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    await waitForLine(proc, requestLine('GET', '/auth/v1/user', 200), 'request log');

    // One console line per mail.
    expect(proc.output()).not.toContain(email);
    const recover = await fetch(`${proc.url}/auth/v1/recover`, { method: 'POST', headers, body: JSON.stringify({ email }) });
    expect(recover.status).toBe(200);
    await waitForLine(proc, (l) => l.includes(email) && !l.includes('/auth/v1/recover '), 'mail');
    // The default --email-max-frequency (60 s): a second reset within it is refused.
    const again = await fetch(`${proc.url}/auth/v1/recover`, { method: 'POST', headers, body: JSON.stringify({ email }) });
    expect(again.status).toBe(429);
    expect(await again.json()).toMatchObject({ code: 'over_email_send_rate_limit' });

    proc.child.kill('SIGINT');
    const exit = await proc.exited;
    expect(exit.code).toBe(0);
  }, 120_000);

  it('client-address and account-protection settings reach the server (flags and env); bad ones stop it', async () => {
    const env = {
      LOCALBASE_CLIENT_IP_HEADER: 'X-Real-IP',
      LOCALBASE_ACCOUNT_MAX_DELAY: '0',
      LOCALBASE_TRUSTED_PROXIES: '127.0.0.2',
      LOCALBASE_RATE_LIMIT_REFRESH: '1',
      LOCALBASE_ENABLE_ANONYMOUS_SIGN_INS: '1',
      LOCALBASE_RATE_LIMIT_ANONYMOUS_USERS: '1',
      LOCALBASE_EMAIL_MAX_FREQUENCY: '0',
    };
    const configured = spawnCli(['--memory', '--quiet'], await freePort(), env);
    running.push(configured);
    await waitReady(configured, 90_000);
    const proxy = fetchFrom('127.0.0.2');
    const email = uniqueEmail('cli-proxy');
    const signUp = await fetch(`${configured.url}/auth/v1/signup`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ email, password: 'cli-password-1' }),
    });
    let refreshToken = ((await signUp.json()) as { refresh_token: string }).refresh_token;
    const refresh = async (ip: string) => {
      const res = await proxy(`${configured.url}/auth/v1/token?grant_type=refresh_token`, {
        method: 'POST',
        headers: { ...headers, 'x-real-ip': ip },
        body: JSON.stringify({ refresh_token: refreshToken }),
      });
      if (res.status === 200) refreshToken = ((await res.json()) as { refresh_token: string }).refresh_token;
      return res.status;
    };
    // One refresh per client address, read from X-Real-IP of the trusted proxy.
    expect([await refresh('198.51.100.1'), await refresh('198.51.100.1'), await refresh('198.51.100.2')]).toEqual([200, 429, 200]);
    // LOCALBASE_ACCOUNT_MAX_DELAY=0: no per-account delays. (Each attempt from its own address: a password sign-in is
    // a token grant, and LOCALBASE_RATE_LIMIT_REFRESH=1 allows one per address.)
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await proxy(`${configured.url}/auth/v1/token?grant_type=password`, {
        method: 'POST',
        headers: { ...headers, 'x-real-ip': `198.51.100.${10 + i}` },
        body: JSON.stringify({ email, password: `wrong-${i}` }),
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual(Array<number>(7).fill(400));
    // LOCALBASE_ENABLE_ANONYMOUS_SIGN_INS=1 and LOCALBASE_RATE_LIMIT_ANONYMOUS_USERS=1: one guest per address an hour.
    // LOCALBASE_EMAIL_MAX_FREQUENCY=0: resets to one address follow each other without a wait.
    const reset = () => fetch(`${configured.url}/auth/v1/recover`, { method: 'POST', headers, body: JSON.stringify({ email }) });
    expect([(await reset()).status, (await reset()).status]).toEqual([200, 200]);
    const guest = () => fetch(`${configured.url}/auth/v1/signup`, { method: 'POST', headers, body: JSON.stringify({ data: {} }) });
    expect([(await guest()).status, (await guest()).status]).toEqual([200, 429]);
    configured.child.kill('SIGTERM');
    expect((await configured.exited).code).toBe(0);

    const bad = spawnCli(['--memory', '--trusted-proxies', '10.0.0.0/33'], await freePort());
    running.push(bad);
    expect((await bad.exited).code).toBe(1);
    expect(bad.output()).toContain('"10.0.0.0/33" is not an IP address or CIDR');

    const help = spawnSync(nodeBin, [cliPath, 'start', '--help'], { encoding: 'utf8' });
    for (const flag of ['--trusted-proxies', '--client-ip-header', '--no-sb-forwarded-for', 'LOCALBASE_SB_FORWARDED_FOR=0',
      '--account-free-failures', '--account-max-delay', '--account-failure-window', '--otp-max-attempts',
      '--email-max-frequency', 'LOCALBASE_EMAIL_MAX_FREQUENCY', '--enable-anonymous-sign-ins', 'LOCALBASE_ENABLE_ANONYMOUS_SIGN_INS=1', '--rate-limit-anonymous-users'])
      expect(help.stdout).toContain(flag);
  }, 180_000);

  it('a database URL that is wrong or leads nowhere stops the start with exit 1, naming the database and hiding the password', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'localbase-cli-dburl-'));
    try {
      const nowhere = `postgres://postgres:s3cret-pw@127.0.0.1:${await freePort()}/app`;
      for (const [url, expected] of [
        [nowhere, `cannot connect to the database postgres://postgres:***@127.0.0.1:`],
        ['not a url', 'the database URL (--database-url / DATABASE_URL) is not a postgres:// or postgresql:// URL'],
      ] as const) {
        const bad = spawnCli(['--database-url', url, '--data-dir', path.join(folder, 'data')], await freePort());
        running.push(bad);
        expect((await bad.exited).code).toBe(1);
        expect(bad.output()).toContain(expected);
        expect(bad.output()).not.toContain('s3cret-pw');
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('--quiet prints the banner but no request lines', async () => {
    const proc = await start(['--memory', '--quiet']);
    expect(proc.output()).toContain('API URL');
    for (let i = 0; i < 3; i++) expect((await fetch(`${proc.url}/auth/v1/settings`, { headers })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(proc.output()).not.toContain('/auth/v1/settings');
    proc.child.kill('SIGTERM');
    expect((await proc.exited).code).toBe(0);
  }, 120_000);
});
