// localbase /rest/v1 throughput: the whole HTTP request beside the same query issued directly to the database,
// measured in one run.
//
//   node bench/localbase-rest.ts [--rows 100000] [--duration 5] [--connections 10] [--no-count]
//                                [--pglite-main-thread] [--json]
//
// A child process (this file with --serve) starts localbase in memory (PGlite in its worker thread unless
// --pglite-main-thread), signs up one user, fills
// `bench_items` with --rows rows owned by that user (one INSERT … SELECT generate_series through lb.db) behind an RLS
// policy `owner = (select auth.uid())`, and answers commands on stdin. The parent drives it:
//   (a)  bare SELECT      the query written by hand, owner predicate spelled out, run as the table owner through
//                         lb.db (one call per request): 20 rows as JSON + count(*) of the user's rows
//   (b)  envelope         that statement inside localbase_rest.exec with role authenticated + the JWT claims
//                         (RLS by PostgreSQL): one call, as the server does it
//   HTTP                  GET /rest/v1/bench_items?select=id,title,created_at&order=created_at.desc&limit=20
//                         &offset=N with the user's JWT and Prefer: count=exact, driven by autocannon from the parent
//                         process over loopback
//   HTTP floor            a bare node:http server in the child answering the same page body, same autocannon setup:
//                         what HTTP on loopback with the load generator on the same 2 cores costs at all
// Each request/op uses offset N cycling over the first 100 pages (N = 0, 20, …, 1980), the same sequence everywhere.
// The direct variants run with the same concurrency as autocannon (that many async loops; PGlite serialises them).
// All variants run interleaved in 1-second slices, --duration rounds, so a load change on the (shared) machine hits
// them alike; req/s = all requests / all slice time, p99 = over all direct latencies (HTTP: mean of the slices' p99).
// Also timed in the child, per request: JWT verification (jose ES256, the signing key's) and parseQuery + buildRead.
// Targets: (b) ≤ 1.5 × (a) time per op; HTTP ≤ 1.3 × (b). Exit code 1 when one is missed.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type AutocannonRequest } from 'autocannon';
import { pathToFileURL } from 'node:url';
import { args, argValue } from './lib/args.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PKG = join(ROOT, 'packages/localbase');

const ROWS = Number(argValue('--rows') ?? 100_000);
const DURATION_S = Number(argValue('--duration') ?? 5);
const CONNECTIONS = Number(argValue('--connections') ?? 10);
const asJson = args.includes('--json');
/** --no-count: the same requests without Prefer: count=exact (the count(*) over all the user's rows dominates). */
const COUNT = !args.includes('--no-count');
/** --pglite-main-thread: PGlite on the main thread (no statement timeout) instead of the default worker thread. */
const MAIN_THREAD = args.includes('--pglite-main-thread');
const TARGET_ENVELOPE = 1.5;
const TARGET_HTTP = 1.3;
const PAGES = 100;
const PAGE = 20;

const offsetAt = (i: number): number => (i % PAGES) * PAGE;
const pathAt = (i: number): string =>
  `/rest/v1/bench_items?select=id,title,created_at&order=created_at.desc&limit=${PAGE}&offset=${offsetAt(i)}`;

interface Measured {
  name: string;
  opsPerSec: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  ops: number;
  errors: number;
}

function summarise(name: string, latencies: number[], elapsedMs: number, errors: number): Measured {
  const sorted = [...latencies].sort((x, y) => x - y);
  const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
  const sum = sorted.reduce((s, x) => s + x, 0);
  return {
    name,
    opsPerSec: (sorted.length / elapsedMs) * 1000,
    meanMs: sorted.length ? sum / sorted.length : 0,
    p50Ms: q(0.5),
    p99Ms: q(0.99),
    ops: sorted.length,
    errors,
  };
}

// ───────────────────────────── child: the server and the direct measurements ─────────────────────────────
// localbase is loaded at run time (its sources are type-checked by its own tsconfig, not by bench's): the parts
// used here, typed minimally.
interface Db {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  exec(sql: string): Promise<void>;
}
interface Lb {
  url: string;
  anonKey: string;
  serviceRoleKey: string;
  jwtSecret: string;
  db: Db;
  reloadSchema(): Promise<void>;
  stop(): Promise<void>;
}
interface Built {
  sql: string;
  params: unknown[];
}
const load = async <T,>(rel: string): Promise<T> => (await import(pathToFileURL(join(PKG, rel)).href)) as T;

async function serve(): Promise<void> {
  const { startLocalbase } = await load<{ startLocalbase(o: Record<string, unknown>): Promise<Lb> }>('src/index.ts');
  const { runEnveloped } = await load<{ runEnveloped(db: Db, ctx: Record<string, unknown>, stmt: Built): Promise<Record<string, unknown> | null> }>('src/rest/envelope.ts');
  const { loadSchemaCache } = await load<{ loadSchemaCache(db: Db, schemas: string[]): Promise<unknown> }>('src/rest/schema-cache.ts');
  const { parseQuery } = await load<{ parseQuery(search: string): unknown }>('src/rest/parse.ts');
  const { buildRead } = await load<{ buildRead(o: Record<string, unknown>): Built }>('src/rest/build-read.ts');
  const { JwtKeys } = await load<{ JwtKeys: new (secret: string, keys?: unknown[]) => { verify(token: string): Promise<unknown> } }>('src/auth/tokens.ts');
  const { generateKeySet } = await load<{ generateKeySet(): Promise<unknown[]> }>('src/auth/keys.ts');
  const signingKeys = await generateKeySet();
  const out = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);

  const lb = await startLocalbase({
    memory: true,
    signingKeys: signingKeys as never,
    pgliteWorker: !MAIN_THREAD,
    port: 0,
    quiet: true,
    migrationsDir: join(PKG, 'test/fixtures/empty-migrations'),
    seedFile: join(PKG, 'test/fixtures/empty-seed.sql'),
  });
  const email = `bench-${Date.now()}@example.com`;
  const password = 'bench-password-123';
  const auth = async (path: string, body: unknown, key: string) => {
    const res = await fetch(`${lb.url}/auth/v1/${path}`, {
      method: 'POST',
      headers: { apikey: key, authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const user = await auth('admin/users', { email, password, email_confirm: true }, lb.serviceRoleKey);
  const session = await auth('token?grant_type=password', { email, password }, lb.anonKey);
  const token = session.access_token as string;
  const userId = user.id as string;

  const t0 = performance.now();
  await lb.db.exec(`
    create table public.bench_items (
      id bigint generated always as identity primary key,
      owner uuid not null default auth.uid(),
      title text not null,
      created_at timestamptz not null default now()
    );
    create index bench_items_owner_created on public.bench_items (owner, created_at desc);
    alter table public.bench_items enable row level security;
    create policy "own items" on public.bench_items for all to authenticated
      using (owner = (select auth.uid())) with check (owner = (select auth.uid()));
  `);
  await lb.db.query(
    `insert into public.bench_items (owner, title, created_at)
     select $1::uuid, 'item ' || g, now() - make_interval(secs => g) from generate_series(1, $2::int) g`,
    [userId, ROWS],
  );
  await lb.db.exec('analyze public.bench_items');
  await lb.reloadSchema();
  const fillMs = performance.now() - t0;

  const cache = await loadSchemaCache(lb.db, ['public']);
  const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  const built = (i: number) =>
    buildRead({
      cache,
      schema: 'public',
      table: 'bench_items',
      query: parseQuery(`?select=id,title,created_at&order=created_at.desc&limit=${PAGE}&offset=${offsetAt(i)}`),
      offset: offsetAt(i),
      limit: PAGE,
      count: COUNT,
      paramStyle: 'array',
    });
  const BARE = `select ${COUNT ? '(select count(*) from public.bench_items where owner = $1)' : 'null::bigint'} as total,
      (select coalesce(json_agg(t), '[]')::text from (select id, title, created_at from public.bench_items
        where owner = $1 order by created_at desc limit ${PAGE} offset $2) t) as body`;
  const ctx = { role: 'authenticated', claims, readOnly: true, method: 'GET', path: '/rest/v1/bench_items', headers: {} };

  // sanity: the three direct variants return the same page and total
  const a = (await lb.db.query(BARE, [userId, 40])).rows[0] as { total: unknown; body: string };
  const b1 = built(2);
  const b = (await runEnveloped(lb.db, ctx, b1)) as { total: unknown; body: string };
  if (JSON.stringify(JSON.parse(a.body)) !== JSON.stringify(JSON.parse(b.body)) || (COUNT && (Number(a.total) !== ROWS || Number(b.total) !== ROWS)))
    throw new Error(`direct variants disagree: ${String(a.total)} / ${String(b.total)}`);

  const variants: Record<string, (i: number) => Promise<unknown>> = {
    '(a) bare SELECT': (i) => lb.db.query(BARE, [userId, offsetAt(i)]),
    '(b) envelope (role + claims, RLS)': (i) => runEnveloped(lb.db, ctx, built(i)),
  };

  async function runFor(fn: (i: number) => Promise<unknown>, seconds: number, concurrency: number): Promise<{ latencies: number[]; elapsedMs: number; errors: number }> {
    const latencies: number[] = [];
    let errors = 0;
    let next = 0;
    const start = performance.now();
    const end = start + seconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < end) {
          const i = next++;
          const s = performance.now();
          try {
            await fn(i);
            latencies.push(performance.now() - s);
          } catch {
            errors++;
          }
        }
      }),
    );
    return { latencies, elapsedMs: performance.now() - start, errors };
  }

  // µs per request of the TypeScript steps that do not touch the database
  const jwt = new JwtKeys(lb.jwtSecret, signingKeys);
  const timeUs = async (n: number, fn: (i: number) => unknown) => {
    const s = performance.now();
    for (let i = 0; i < n; i++) await fn(i);
    return ((performance.now() - s) * 1000) / n;
  };
  const steps = {
    jwtVerifyUs: await timeUs(3000, () => jwt.verify(token)),
    parseBuildUs: await timeUs(3000, (i) => built(i)),
  };

  // HTTP floor: a bare node:http server answering the same page body (no database, no JWT, no hono)
  const page = b.body;
  const floor = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-range': `0-19/${ROWS}`, 'content-length': Buffer.byteLength(page) });
    res.end(page);
  });
  await new Promise<void>((r) => floor.listen(0, '127.0.0.1', r));
  const floorUrl = `http://127.0.0.1:${(floor.address() as AddressInfo).port}`;

  out({ ready: true, url: lb.url, floorUrl, anonKey: lb.anonKey, token, rows: ROWS, fillMs, steps });
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    const cmd = JSON.parse(line) as { measure?: { seconds: number; concurrency: number }; stop?: boolean };
    if (cmd.measure) {
      const results: Record<string, { latencies: number[]; elapsedMs: number; errors: number }> = {};
      for (const [name, fn] of Object.entries(variants)) results[name] = await runFor(fn, cmd.measure.seconds, cmd.measure.concurrency);
      out({ results });
    }
    if (cmd.stop) break;
  }
  floor.close();
  await lb.stop();
  process.exit(0);
}

// ───────────────────────────── parent: drive the child, autocannon, report ─────────────────────────────
async function main(): Promise<void> {
  const log = (m: string) => {
    if (!asJson) console.error(m);
  };
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', '--rows', String(ROWS), ...(COUNT ? [] : ['--no-count']), ...(MAIN_THREAD ? ['--pglite-main-thread'] : [])], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const nextMessage = async (): Promise<Record<string, unknown>> => {
    const r = await lines.next();
    if (r.done) throw new Error('the bench server exited early');
    return JSON.parse(r.value) as Record<string, unknown>;
  };
  const send = (o: unknown) => child.stdin.write(`${JSON.stringify(o)}\n`);
  try {
    log(`starting localbase (memory PGlite, ${MAIN_THREAD ? 'main thread' : 'worker thread'}) and filling ${ROWS} rows…`);
    const ready = (await nextMessage()) as { url: string; floorUrl: string; anonKey: string; token: string; fillMs: number; steps: { jwtVerifyUs: number; parseBuildUs: number } };
    log(`filled in ${(ready.fillMs / 1000).toFixed(1)} s; ${DURATION_S} rounds of 1 s slices per variant, concurrency ${CONNECTIONS}…`);
    let i = 0;
    const options = {
      url: ready.url,
      connections: CONNECTIONS,
      headers: { apikey: ready.anonKey, authorization: `Bearer ${ready.token}`, accept: 'application/json', ...(COUNT ? { prefer: 'count=exact' } : {}) },
      requests: [{ method: 'GET', setupRequest: (req: AutocannonRequest) => ({ ...req, path: pathAt(i++) }) }],
    };
    // warm-up of both paths
    await autocannon({ ...options, duration: 1 });
    send({ measure: { seconds: 0.5, concurrency: CONNECTIONS } });
    await nextMessage();
    const merged: Record<string, { latencies: number[]; elapsedMs: number; errors: number; perSlice: number[] }> = {};
    const http = { requests: 0, elapsedMs: 0, p99s: [] as number[], means: [] as number[], perSlice: [] as number[] };
    const bare = { requests: 0, elapsedMs: 0, p99s: [] as number[], means: [] as number[], perSlice: [] as number[] };
    for (let round = 0; round < DURATION_S; round++) {
      send({ measure: { seconds: 1, concurrency: CONNECTIONS } });
      const slice = (await nextMessage()) as { results: Record<string, { latencies: number[]; elapsedMs: number; errors: number }> };
      for (const [name, r] of Object.entries(slice.results)) {
        const m = (merged[name] ??= { latencies: [], elapsedMs: 0, errors: 0, perSlice: [] });
        m.latencies.push(...r.latencies);
        m.elapsedMs += r.elapsedMs;
        m.errors += r.errors;
        m.perSlice.push((r.latencies.length / r.elapsedMs) * 1000);
      }
      const h = await autocannon({ ...options, duration: 1 });
      if (h.non2xx > 0 || h.errors > 0) throw new Error(`HTTP slice had ${h.non2xx} non-2xx answers and ${h.errors} errors`);
      http.requests += h.requests.total;
      http.elapsedMs += h.duration * 1000; // autocannon reports seconds
      http.p99s.push(h.latency.p99);
      http.means.push(h.latency.average);
      http.perSlice.push(h.requests.total / h.duration);
      const f = await autocannon({ ...options, url: ready.floorUrl, duration: 1 });
      bare.requests += f.requests.total;
      bare.elapsedMs += f.duration * 1000;
      bare.p99s.push(f.latency.p99);
      bare.means.push(f.latency.average);
      bare.perSlice.push(f.requests.total / f.duration);
    }
    send({ stop: true });

    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
    const direct = Object.entries(merged).map(([name, m]) => ({ ...summarise(name, m.latencies, m.elapsedMs, m.errors), runs: m.perSlice }));
    const httpRow = { name: 'HTTP GET /rest/v1', opsPerSec: (http.requests / http.elapsedMs) * 1000, p99Ms: mean(http.p99s), meanMs: mean(http.means), runs: http.perSlice };
    const floorRow = { name: 'HTTP floor: bare node:http, same body', opsPerSec: (bare.requests / bare.elapsedMs) * 1000, p99Ms: mean(bare.p99s), meanMs: mean(bare.means), runs: bare.perSlice };
    const rows = [...direct, httpRow, floorRow];
    const perOp = (r: { opsPerSec: number }) => 1000 / r.opsPerSec; // ms of server capacity per request
    const [ra, rb] = direct;
    if (!ra || !rb) throw new Error('missing direct results');
    const envelopeRatio = perOp(rb) / perOp(ra);
    const httpRatio = perOp(httpRow) / perOp(rb);
    const ok = envelopeRatio <= TARGET_ENVELOPE && httpRatio <= TARGET_HTTP;
    const report = {
      rows: ROWS,
      count: COUNT,
      durationS: DURATION_S,
      connections: CONNECTIONS,
      results: rows,
      ratios: { envelopeVsBare: envelopeRatio, httpVsEnvelope: httpRatio },
      targets: { envelopeVsBare: TARGET_ENVELOPE, httpVsEnvelope: TARGET_HTTP },
      stepsUsPerRequest: ready.steps,
      ok,
    };
    if (asJson) {
      console.log(JSON.stringify(report, null, 2));
    } else {
      console.log(`\n/rest/v1 bench: ${ROWS} rows of one user, offset cycling over ${PAGES} pages of ${PAGE}, ${COUNT ? 'count=exact' : 'no count'}, ${CONNECTIONS} concurrent, ${DURATION_S} s per variant`);
      console.log('variant                                   req/s    mean ms   p99 ms   (req/s per 1 s slice)');
      for (const r of rows)
        console.log(`${r.name.padEnd(40)} ${r.opsPerSec.toFixed(0).padStart(6)}   ${r.meanMs.toFixed(2).padStart(7)}  ${r.p99Ms.toFixed(2).padStart(7)}   (${r.runs.map((x) => x.toFixed(0)).join(', ')})`);
      console.log(`\ntime per request (1 / req/s): (a) ${perOp(ra).toFixed(3)} ms, (b) ${perOp(rb).toFixed(3)} ms, HTTP ${perOp(httpRow).toFixed(3)} ms`);
      console.log(`(b)/(a)  envelope vs bare SELECT:         ${envelopeRatio.toFixed(2)}×  (target ≤ ${TARGET_ENVELOPE}) ${envelopeRatio <= TARGET_ENVELOPE ? 'OK' : 'MISSED'}`);
      console.log(`HTTP/(b) whole request vs envelope:       ${httpRatio.toFixed(2)}×  (target ≤ ${TARGET_HTTP}) ${httpRatio <= TARGET_HTTP ? 'OK' : 'MISSED'}`);
      const httpExtraUs = (perOp(httpRow) - perOp(rb)) * 1000;
      console.log(
        `where the time goes per HTTP request: the bare query ≈ ${(perOp(ra) * 1000).toFixed(0)} µs; envelope + RLS adds ≈ ${((perOp(rb) - perOp(ra)) * 1000).toFixed(0)} µs; ` +
          `HTTP and our TypeScript add ≈ ${httpExtraUs.toFixed(0)} µs, of which a bare node:http answer of the same body costs ≈ ${(perOp(floorRow) * 1000).toFixed(0)} µs with autocannon on the same cores, ` +
          `JWT verify ${ready.steps.jwtVerifyUs.toFixed(0)} µs and parse + build ${ready.steps.parseBuildUs.toFixed(0)} µs (measured alone); the rest is hono, Request/Response, headers and JSON ` +
          '(negative = within the noise of a shared machine).',
      );
      console.log('(autocannon runs in this process, the server in a child; on a 2-core machine they compete for CPU.)');
    }
    process.exitCode = ok ? 0 : 1;
  } finally {
    if (child.exitCode === null) {
      send({ stop: true });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await new Promise((r) => child.once('exit', r));
      clearTimeout(timer);
    }
  }
}

if (args.includes('--serve')) await serve();
else await main();
