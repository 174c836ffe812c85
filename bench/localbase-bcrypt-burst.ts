// Does a burst of password sign-ins slow down requests that need no password hashing?
//
//   node bench/localbase-bcrypt-burst.ts [--clients 50] [--duration 8] [--idle 3] [--hash-concurrency N] [--json]
//
// What it does (all on 127.0.0.1):
//   1. Starts localbase in a child process (memory PGlite in its worker thread, the product's supabase/migrations
//      and seed, request log off, sign-in rate limit raised so that the limiter does not answer instead of bcrypt).
//      --hash-concurrency N is passed as `passwordHashConcurrency` (how many bcrypt computations run at once in the
//      thread pool; default: localbase's own).
//   2. Signs up one user and inserts 20 notes with the user's token.
//   3. Idle: one prober sends `GET /rest/v1/notes?select=id,title,updated_at&order=updated_at.desc&limit=20` with the
//      user's JWT, one request after another on a keep-alive connection, for --idle seconds: idle p50.
//   4. Burst: --clients connections each send `POST /auth/v1/token?grant_type=password` one after another, each with
//      a new unknown email and a wrong password (every one costs one bcrypt comparison on the server, like a wrong
//      password for a real account, and no per-account lockout can answer early), for --duration seconds. After
//      0.5 s of ramp-up the prober measures the same GET again: burst p50. Sign-ins completed per second (while the
//      prober ran) and the p50 of every sign-in's latency (queueing included) are printed too: the price of limiting
//      bcrypt's concurrency.
// Target: burst p50 ≤ 4 × idle p50 + 20 ms. Exit code 1 when it is missed.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { args, argValue } from './lib/args.ts';
import { ANON_KEY, API_VERSION, freePort, localbaseChildCode } from './lib/local.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC_INDEX = join(ROOT, 'packages/localbase/src/index.ts');
const NODE = process.execPath;

const CLIENTS = Number(argValue('--clients') ?? 50);
const DURATION_S = Number(argValue('--duration') ?? 8);
const IDLE_S = Number(argValue('--idle') ?? 3);
const HASH_CONCURRENCY = argValue('--hash-concurrency');
const asJson = args.includes('--json');
const RAMP_UP_MS = 500;

function log(message: string): void {
  if (!asJson) console.error(message);
}

interface Child {
  proc: ChildProcess;
  output: () => string;
  exited: Promise<string>;
}

function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('LOCALBASE_') || key === 'DATABASE_URL') delete env[key];
  return env;
}

async function startLocalbaseChild(): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const options: Record<string, unknown> = {
    memory: true,
    port,
    quiet: true,
    rateLimits: { signInSignUps: 1_000_000_000 },
  };
  if (HASH_CONCURRENCY !== undefined) options.passwordHashConcurrency = Number(HASH_CONCURRENCY);
  const code = localbaseChildCode(SRC_INDEX, options);
  const proc = spawn(NODE, ['--input-type=module', '-e', code], { cwd: ROOT, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<string>((r) => proc.once('exit', (c, s) => r(s ? `signal ${s}` : `code ${c}`)));
  const child: Child = { proc, output: () => out, exited };
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`localbase did not start within 120 s:\n${out}`)), 120_000);
    const check = (): void => {
      const m = /BENCH_READY (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    };
    proc.stdout?.on('data', check);
    void exited.then((how) => {
      clearTimeout(timer);
      rej(new Error(`localbase exited (${how}) before it was ready:\n${out}`));
    });
  });
  return { child, url };
}

async function stopChild(child: Child): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const t = setTimeout(() => child.proc.kill('SIGKILL'), 10_000);
  await child.exited;
  clearTimeout(t);
}

interface Answer {
  status: number;
  body: string;
}

/** One request on a keep-alive agent; resolves with the status and the body. */
function request(agent: http.Agent, url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((res, rej) => {
    const req = http.request(url, { method, headers, agent }, (r) => {
      let text = '';
      r.setEncoding('utf8');
      r.on('data', (d: string) => (text += d));
      r.on('end', () => res({ status: r.statusCode ?? 0, body: text }));
      r.on('error', rej);
    });
    req.on('error', rej);
    req.end(body);
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!;
}

interface Probe {
  samples: number;
  p50: number;
  p90: number;
  max: number;
  errors: number;
}

/** Sends the unrelated request one after another until `until()` says stop. */
async function probe(agent: http.Agent, url: string, token: string, until: () => boolean): Promise<Probe> {
  const times: number[] = [];
  let errors = 0;
  const headers = { apikey: ANON_KEY, authorization: `Bearer ${token}`, 'accept-profile': 'public' };
  while (!until()) {
    const t0 = performance.now();
    const res = await request(agent, `${url}/rest/v1/notes?select=id,title,updated_at&order=updated_at.desc&limit=20`, 'GET', headers);
    const ms = performance.now() - t0;
    if (res.status !== 200) errors += 1;
    else times.push(ms);
  }
  times.sort((a, b) => a - b);
  return { samples: times.length, p50: percentile(times, 0.5), p90: percentile(times, 0.9), max: times.at(-1) ?? NaN, errors };
}

async function main(): Promise<void> {
  const { child, url } = await startLocalbaseChild();
  const probeAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const burstAgent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  try {
    const json = { 'content-type': 'application/json', 'x-supabase-api-version': API_VERSION };
    const signUp = await request(
      burstAgent,
      `${url}/auth/v1/signup`,
      'POST',
      { ...json, apikey: ANON_KEY, authorization: `Bearer ${ANON_KEY}` },
      JSON.stringify({ email: `burst-${Date.now().toString(36)}@example.com`, password: 'bench-password-123' }),
    );
    const token = (JSON.parse(signUp.body) as { access_token?: string }).access_token;
    if (signUp.status !== 200 || !token) throw new Error(`sign-up answered ${signUp.status}: ${signUp.body}`);
    const notes = Array.from({ length: 20 }, (_, i) => ({ title: `note ${i}`, body: 'x'.repeat(200) }));
    const inserted = await request(
      burstAgent,
      `${url}/rest/v1/notes`,
      'POST',
      { ...json, apikey: ANON_KEY, authorization: `Bearer ${token}`, prefer: 'return=minimal' },
      JSON.stringify(notes),
    );
    if (inserted.status !== 201) throw new Error(`inserting notes answered ${inserted.status}: ${inserted.body}`);

    log(`idle: GET /rest/v1/notes one after another for ${IDLE_S} s…`);
    await probe(probeAgent, url, token, ((end) => () => performance.now() > end)(performance.now() + 500)); // warm-up
    const idle = await probe(probeAgent, url, token, ((end) => () => performance.now() > end)(performance.now() + IDLE_S * 1000));

    log(`burst: ${CLIENTS} clients signing in with wrong passwords for ${DURATION_S} s, the prober beside them…`);
    let stop = false;
    const signIns: number[] = [];
    const signInStatuses = new Map<number, number>();
    let signInErrors = 0;
    const signInClient = async (): Promise<void> => {
      while (!stop) {
        const email = `nobody-${randomBytes(6).toString('hex')}@example.com`;
        const t0 = performance.now();
        try {
          const res = await request(
            burstAgent,
            `${url}/auth/v1/token?grant_type=password`,
            'POST',
            { ...json, apikey: ANON_KEY, authorization: `Bearer ${ANON_KEY}` },
            JSON.stringify({ email, password: 'wrong-password-123' }),
          );
          signInStatuses.set(res.status, (signInStatuses.get(res.status) ?? 0) + 1);
          signIns.push(performance.now() - t0);
        } catch {
          signInErrors += 1;
        }
      }
    };
    const burstStart = performance.now();
    const clients = Array.from({ length: CLIENTS }, () => signInClient());
    await new Promise((r) => setTimeout(r, RAMP_UP_MS));
    const countAtProbeStart = signIns.length;
    const probeStart = performance.now();
    const burst = await probe(probeAgent, url, token, () => performance.now() - burstStart > DURATION_S * 1000);
    const probeSeconds = (performance.now() - probeStart) / 1000;
    const signInsDuringProbe = signIns.length - countAtProbeStart;
    stop = true;
    await Promise.all(clients);

    signIns.sort((a, b) => a - b);
    const limit = 4 * idle.p50 + 20;
    const ok = burst.p50 <= limit && burst.samples > 0 && signInsDuringProbe > 0;
    const result = {
      clients: CLIENTS,
      durationS: DURATION_S,
      hashConcurrency: HASH_CONCURRENCY ?? 'default',
      idle,
      burst,
      burstOverIdle: burst.p50 / idle.p50,
      targetMs: limit,
      burstOverTarget: burst.p50 / limit,
      signInsPerSecond: signInsDuringProbe / probeSeconds,
      signInP50Ms: percentile(signIns, 0.5),
      signInStatuses: Object.fromEntries(signInStatuses),
      signInErrors,
      ok,
    };
    if (asJson) console.log(JSON.stringify(result, null, 2));
    else {
      const f = (n: number): string => n.toFixed(1);
      console.log(`\nlocalbase bcrypt burst — ${CLIENTS} sign-in clients, ${DURATION_S} s, hash concurrency ${result.hashConcurrency}`);
      console.log('| GET /rest/v1/notes | samples | p50 ms | p90 ms | max ms | errors |');
      console.log('|---|---:|---:|---:|---:|---:|');
      console.log(`| idle | ${idle.samples} | ${f(idle.p50)} | ${f(idle.p90)} | ${f(idle.max)} | ${idle.errors} |`);
      console.log(`| during the burst | ${burst.samples} | ${f(burst.p50)} | ${f(burst.p90)} | ${f(burst.max)} | ${burst.errors} |`);
      console.log(
        `\nsign-ins: ${f(result.signInsPerSecond)}/s, p50 ${f(result.signInP50Ms)} ms, statuses ${JSON.stringify(result.signInStatuses)}, network errors ${signInErrors}`,
      );
      console.log(`burst p50 / idle p50 = ${result.burstOverIdle.toFixed(2)}×`);
      console.log(
        `target: burst p50 ≤ 4 × idle p50 + 20 ms = ${f(limit)} ms; burst p50 / target = ${result.burstOverTarget.toFixed(2)} — ${ok ? 'ok' : 'MISSED'}`,
      );
    }
    if (!ok) process.exitCode = 1;
  } finally {
    probeAgent.destroy();
    burstAgent.destroy();
    await stopChild(child);
  }
}

await main();
