// localbase auth throughput and start-up, beside a bare Node HTTP JSON endpoint measured in the same run.
//
//   node bench/localbase-auth.ts [--duration 5] [--connections 20] [--pglite-main-thread] [--json]
//
// --pglite-main-thread: localbase with PGlite on the main thread (no statement timeout) instead of the default
// worker thread, to compare the two in one session.
//
// What it does (all on 127.0.0.1):
//   1. Cold start: spawns the CLI (`bin/localbase.ts start --data-dir <new temp dir> --quiet`) and times the start
//      until its banner ("localbase started (ready in …)", then "API URL: …"), three times: as on a clean clone (a fresh repo root, so no template cache:
//      the database is created from scratch), on a new folder with the template cached, and again on that
//      existing folder (after SIGTERM). RSS is read from /proc/<pid>/status (VmRSS now, VmHWM = peak) right after
//      the banner. Targets: first start ≤ 10 s; start on an existing folder ≤ 3 s and ≤ 350 MB RSS.
//   2. Load: starts localbase (file-backed, the same temp folder, request log off, rate limits raised so the
//      limiter does not answer instead of the handlers) and a bare `node:http` server answering a small JSON
//      object, each in its own child process, and drives them with autocannon from this process: fixed
//      concurrency, bounded duration, 1 s warm-up each.
//        - bare      GET /                                        (baseline)
//        - GET /auth/v1/user                                       with a signed-up user's bearer token
//        - POST /auth/v1/token?grant_type=refresh_token           every request presents a refresh token never
//          used before: a pool of pre-minted sessions (one sign-in each) feeds autocannon's setupRequest, and each
//          200 answer's rotated refresh_token goes back into the pool (onResponse), so each session is a rotation
//          chain and no token is ever replayed.
//      Target: GET /user ≥ 1/3 of the bare endpoint's req/s.
// Exit code 1 when a target is missed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type AutocannonOptions, type AutocannonResult } from 'autocannon';
import { dataFolderEntries } from '../packages/localbase/src/data-folder.ts';
import { args, argValue } from './lib/args.ts';
import { ANON_KEY, API_VERSION, freePort, localbaseChildCode } from './lib/local.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'packages/localbase/bin/localbase.ts');
const SRC_INDEX = join(ROOT, 'packages/localbase/src/index.ts');
const NODE = process.execPath;

const DURATION_S = Number(argValue('--duration') ?? 5);
const CONNECTIONS = Number(argValue('--connections') ?? 20);
const asJson = args.includes('--json');
const MAIN_THREAD = args.includes('--pglite-main-thread');

const TARGET_FIRST_START_MS = 10_000;
const TARGET_RESTART_MS = 3_000;
const TARGET_RSS_MB = 350;
const TARGET_USER_RATIO = 1 / 3;
const READY_LINE = /localbase started|API URL/i; // the banner's first line, "localbase started (ready in …)"

function log(message: string): void {
  if (!asJson) console.error(message);
}

interface Child {
  proc: ChildProcess;
  pid: number;
  output: () => string;
  exited: Promise<string>;
}

function spawnChild(argv: string[], env: NodeJS.ProcessEnv = process.env, cwd = ROOT): Child {
  const proc = spawn(NODE, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<string>((r) => proc.once('exit', (code, signal) => r(signal ? `signal ${signal}` : `code ${code}`)));
  if (proc.pid === undefined) throw new Error(`could not spawn ${argv.join(' ')}`);
  return { proc, pid: proc.pid, output: () => out, exited };
}

/** Resolves with ms from `t0` when a line of the child's output matches; rejects on exit or timeout. */
function waitForLine(child: Child, pattern: RegExp, t0: number, timeoutMs: number): Promise<number> {
  return new Promise((res, rej) => {
    let done = false;
    const finish = (fn: () => void): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.proc.stdout?.off('data', check);
      child.proc.stderr?.off('data', check);
      fn();
    };
    const check = (): void => {
      if (pattern.test(child.output())) {
        const ms = performance.now() - t0;
        finish(() => res(ms));
      }
    };
    const timer = setTimeout(
      () => finish(() => rej(new Error(`no ${pattern} within ${timeoutMs} ms:\n${child.output()}`))),
      timeoutMs,
    );
    child.proc.stdout?.on('data', check);
    child.proc.stderr?.on('data', check);
    void child.exited.then((how) => finish(() => rej(new Error(`exited (${how}) before ${pattern}:\n${child.output()}`))));
    check();
  });
}

async function stopChild(child: Child): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  child.proc.kill('SIGTERM');
  const t = setTimeout(() => child.proc.kill('SIGKILL'), 10_000);
  await child.exited;
  clearTimeout(t);
}

/** VmRSS and VmHWM (peak) of a process in MB. */
function rssOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) if (key.startsWith('LOCALBASE_') || key === 'DATABASE_URL') delete env[key];
  return env;
}

interface StartFigures {
  readyMs: number;
  rssMb: number;
  peakMb: number;
}

/**
 * Starts the CLI and times it to the banner. `cwd` decides the repo root localbase finds (the nearest package.json
 * with workspaces, from the working directory up), and so its template cache (<root>/node_modules/.cache/localbase):
 * a fresh root measures a clean clone's very first start, which must build the template.
 */
async function timedCliStart(dataDir: string, timeoutMs: number, cwd = ROOT): Promise<StartFigures> {
  const port = await freePort();
  const t0 = performance.now();
  const argv = [CLI, 'start', '--data-dir', dataDir, '--port', String(port), '--quiet'];
  if (MAIN_THREAD) argv.push('--pglite-main-thread');
  argv.push('--migrations-dir', join(ROOT, 'supabase/migrations'), '--seed-file', join(ROOT, 'supabase/seed.sql'));
  const child = spawnChild(argv, cliEnv(), cwd);
  try {
    const readyMs = await waitForLine(child, READY_LINE, t0, timeoutMs);
    const mem = rssOf(child.pid);
    return { readyMs, ...mem };
  } finally {
    await stopChild(child);
  }
}

interface Served {
  child: Child;
  url: string;
}

async function startLocalbaseChild(dataDir: string): Promise<Served> {
  const port = await freePort();
  const high = 1_000_000_000;
  const options = {
    dataDir,
    port,
    quiet: true,
    rateLimits: { signInSignUps: high, tokenRefresh: high, tokenVerifications: high, emailSent: high },
    pgliteWorker: !MAIN_THREAD,
  };
  const code = localbaseChildCode(SRC_INDEX, options);
  const child = spawnChild(['--input-type=module', '-e', code], cliEnv());
  await waitForLine(child, /BENCH_READY /, performance.now(), 120_000);
  const url = /BENCH_READY (\S+)/.exec(child.output())![1]!;
  return { child, url };
}

async function startBareChild(): Promise<Served> {
  const port = await freePort();
  const code = `
import { createServer } from 'node:http';
const body = JSON.stringify({ id: '5f0c6d3e-1a2b-4c3d-8e9f-001122334455', aud: 'authenticated', role: 'authenticated', email: 'bench@example.com' });
createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}).listen(${port}, '127.0.0.1', () => console.log('BENCH_READY http://127.0.0.1:${port}'));
process.on('SIGTERM', () => process.exit(0));
`;
  const child = spawnChild(['--input-type=module', '-e', code]);
  await waitForLine(child, /BENCH_READY /, performance.now(), 10_000);
  return { child, url: `http://127.0.0.1:${port}` };
}

async function postJson(url: string, body: unknown, apikey: string): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { apikey, authorization: `Bearer ${apikey}`, 'content-type': 'application/json', 'x-supabase-api-version': API_VERSION },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

async function run(options: AutocannonOptions, warmUp = true): Promise<AutocannonResult> {
  if (warmUp) await autocannon({ ...options, duration: 1 });
  return autocannon({ ...options, duration: DURATION_S });
}

interface Row {
  name: string;
  reqPerSec: number;
  p99Ms: number;
  p50Ms: number;
  non2xx: number;
  errors: number;
  total: number;
}

function rowOf(name: string, r: AutocannonResult): Row {
  return {
    name,
    reqPerSec: r.requests.average,
    p99Ms: r.latency.p99,
    p50Ms: r.latency.p50,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    total: r['2xx'] + r.non2xx,
  };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'localbase-bench-'));
  const children: Child[] = [];
  try {
    // 1. Start-up figures.
    log('cold start: very first start (clean clone: no template cache, new data folder)…');
    const cleanRoot = mkdtempSync(join(tmpdir(), 'localbase-bench-root-'));
    writeFileSync(join(cleanRoot, 'package.json'), JSON.stringify({ name: 'bench-root', private: true, workspaces: [] }));
    let clean: StartFigures;
    try {
      clean = await timedCliStart(join(cleanRoot, 'data'), 120_000, cleanRoot);
    } finally {
      rmSync(cleanRoot, { recursive: true, force: true });
    }
    log(`  ready in ${clean.readyMs.toFixed(0)} ms, RSS ${clean.rssMb.toFixed(0)} MB (peak ${clean.peakMb.toFixed(0)} MB)`);
    log('cold start: first start on a new data folder (template cached)…');
    const first = await timedCliStart(dataDir, 120_000);
    log(`  ready in ${first.readyMs.toFixed(0)} ms, RSS ${first.rssMb.toFixed(0)} MB (peak ${first.peakMb.toFixed(0)} MB)`);
    log('cold start: start on the existing folder…');
    const again = await timedCliStart(dataDir, 60_000);
    log(`  ready in ${again.readyMs.toFixed(0)} ms, RSS ${again.rssMb.toFixed(0)} MB (peak ${again.peakMb.toFixed(0)} MB)`);

    // 2. Servers for the load runs.
    const lb = await startLocalbaseChild(dataDir);
    children.push(lb.child);
    const bare = await startBareChild();
    children.push(bare.child);
    const anonKey = ANON_KEY;
    const settings = await fetch(`${lb.url}/auth/v1/settings`, { headers: { apikey: anonKey } });
    if (settings.status !== 200) throw new Error(`localbase /settings answered ${settings.status}`);

    const email = `bench-${Date.now().toString(36)}@example.com`;
    const password = 'bench-password-123';
    const signUp = await postJson(`${lb.url}/auth/v1/signup`, { email, password }, anonKey);
    const accessToken = signUp.access_token;
    if (typeof accessToken !== 'string') throw new Error(`signUp returned no session: ${JSON.stringify(signUp)}`);

    const poolSize = CONNECTIONS * 3;
    log(`minting ${poolSize} sessions for the refresh run…`);
    const pool: string[] = [];
    for (let i = 0; i < poolSize; i += 4) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(4, poolSize - i) }, () =>
          postJson(`${lb.url}/auth/v1/token?grant_type=password`, { email, password }, anonKey),
        ),
      );
      for (const s of batch) pool.push(String(s.refresh_token));
    }

    const common = { connections: CONNECTIONS, pipelining: 1, timeout: 10 };
    log(`load: ${CONNECTIONS} connections, ${DURATION_S} s each (+1 s warm-up)…`);
    // The bare baseline is measured before and after the localbase runs; the ratio uses their mean, which evens
    // out drift in the machine's load (other processes share the CPU).
    const bareBefore = await run({ ...common, url: `${bare.url}/` });
    const userResult = await run({
      ...common,
      url: `${lb.url}/auth/v1/user`,
      headers: { apikey: anonKey, authorization: `Bearer ${accessToken}`, 'x-supabase-api-version': API_VERSION },
    });

    let lastToken = pool[0]!;
    let replayed = 0;
    const refreshOptions: AutocannonOptions = {
      ...common,
      url: lb.url,
      requests: [
        {
          method: 'POST',
          path: '/auth/v1/token?grant_type=refresh_token',
          headers: {
            apikey: anonKey,
            authorization: `Bearer ${anonKey}`,
            'content-type': 'application/json;charset=UTF-8',
            'x-supabase-api-version': API_VERSION,
          },
          setupRequest: (req) => {
            let token = pool.shift();
            if (!token) {
              replayed += 1; // pool exhausted (failed answers): replays count as non-2xx below
              token = lastToken;
            }
            lastToken = token;
            return { ...req, body: JSON.stringify({ refresh_token: token }) };
          },
          onResponse: (status, body) => {
            if (status !== 200) return;
            try {
              const rt = (JSON.parse(body) as { refresh_token?: unknown }).refresh_token;
              if (typeof rt === 'string') pool.push(rt);
            } catch {
              // a non-JSON 200 would be a server bug; the token is simply not reused
            }
          },
        },
      ],
    };
    const refreshResult = await run(refreshOptions);

    const bareAfter = await run({ ...common, url: `${bare.url}/` });
    const bareRps = (bareBefore.requests.average + bareAfter.requests.average) / 2;

    const rows = [
      rowOf('bare node:http GET / (baseline, before)', bareBefore),
      rowOf('bare node:http GET / (baseline, after)', bareAfter),
      rowOf('GET /auth/v1/user', userResult),
      rowOf('POST /token refresh_token', refreshResult),
    ];
    const userRatio = userResult.requests.average / bareRps;
    const refreshRatio = refreshResult.requests.average / bareRps;
    const checks = [
      { what: 'GET /user req/s ≥ 1/3 of bare', value: `${(userRatio * 100).toFixed(1)} %`, ok: userRatio >= TARGET_USER_RATIO },
      { what: `first start, clean clone ≤ ${TARGET_FIRST_START_MS / 1000} s`, value: `${(clean.readyMs / 1000).toFixed(2)} s`, ok: clean.readyMs <= TARGET_FIRST_START_MS },
      { what: `first start, new folder ≤ ${TARGET_FIRST_START_MS / 1000} s`, value: `${(first.readyMs / 1000).toFixed(2)} s`, ok: first.readyMs <= TARGET_FIRST_START_MS },
      { what: `start on existing folder ≤ ${TARGET_RESTART_MS / 1000} s`, value: `${(again.readyMs / 1000).toFixed(2)} s`, ok: again.readyMs <= TARGET_RESTART_MS },
      { what: `RSS on existing folder ≤ ${TARGET_RSS_MB} MB (VmHWM peak)`, value: `${again.peakMb.toFixed(0)} MB (now ${again.rssMb.toFixed(0)} MB)`, ok: again.peakMb <= TARGET_RSS_MB },
    ];

    if (asJson) {
      console.log(JSON.stringify({ connections: CONNECTIONS, durationS: DURATION_S, rows, bareRps, userRatio, refreshRatio, cleanStart: clean, firstStart: first, restart: again, replayedRefreshTokens: replayed, checks }, null, 2));
    } else {
      console.log(`\nlocalbase auth bench — ${CONNECTIONS} connections, ${DURATION_S} s per run, loopback, autocannon 9`);
      console.log('| endpoint | req/s | p50 ms | p99 ms | non-2xx | errors | vs bare (mean of before/after) |');
      console.log('|---|---:|---:|---:|---:|---:|---:|');
      for (const r of rows) {
        const ratio = r.reqPerSec / bareRps;
        console.log(`| ${r.name} | ${r.reqPerSec.toFixed(0)} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.non2xx} | ${r.errors} | ${(ratio * 100).toFixed(1)} % |`);
      }
      if (replayed > 0) console.log(`(refresh run: pool ran dry ${replayed} times; those requests replayed a used token)`);
      console.log('\n| start-up | ready | RSS now | RSS peak |');
      console.log('|---|---:|---:|---:|');
      console.log(`| very first start (clean clone: builds the template) | ${(clean.readyMs / 1000).toFixed(2)} s | ${clean.rssMb.toFixed(0)} MB | ${clean.peakMb.toFixed(0)} MB |`);
      console.log(`| first start on a new folder (template cached) | ${(first.readyMs / 1000).toFixed(2)} s | ${first.rssMb.toFixed(0)} MB | ${first.peakMb.toFixed(0)} MB |`);
      console.log(`| start on existing folder | ${(again.readyMs / 1000).toFixed(2)} s | ${again.rssMb.toFixed(0)} MB | ${again.peakMb.toFixed(0)} MB |`);
      console.log('\n| target | measured | |');
      console.log('|---|---:|---|');
      for (const c of checks) console.log(`| ${c.what} | ${c.value} | ${c.ok ? 'ok' : 'MISSED'} |`);
    }
    if (checks.some((c) => !c.ok)) process.exitCode = 1;
  } finally {
    for (const c of children) await stopChild(c);
    // the folder and what localbase keeps beside it: storage bytes, signing keys, lock
    for (const entry of dataFolderEntries(dataDir)) rmSync(entry, { recursive: true, force: true });
  }
}

await main();
