// notes.list over tRPC beside the direct /rest/v1 call it makes, measured in one run (issue 6).
//
//   node bench/notes-list.ts [--notes 10000] [--rounds 5] [--connections 10] [--json] [--show-requests]
//
// Three processes, as in production (browser → web server → localbase):
//   localbase child   (this file with --serve-localbase) localbase in memory (PGlite) with the product's
//                     supabase/migrations and no seed; one user (admin API) and --notes notes for them, inserted with
//                     the service key in bulk (POST /rest/v1/notes, 1,000 rows a request), then ANALYZE.
//   tRPC child        (this file with --serve-trpc) a plain node:http server mounting apps/web's `appRouter` with
//                     apps/web's own API handler (src/server/trpc-handler.ts, ADR 052) at /api/trpc/ and its own
//                     `createContext` (the Next API route's), so each request goes cookie → @supabase/ssr server client → protectedProcedure
//                     (verifySession: the ES256 token checked locally against the JWKS, ADR 031; GET
//                     /auth/v1/user only for a token not seen before at aal1) → notesListQuery → GET /rest/v1/notes, as
//                     under `next start` minus Next's routing (pages/api/trpc/[trpc].ts runs the same handler). apps/web's sources use bundler-style extensionless
//                     imports, so this child registers a module resolve hook (node:module registerHooks) that maps
//                     them to the .ts files (and JSON imports to `type: 'json'`); Node 22 strips the types.
//                     NEXT_PUBLIC_SUPABASE_URL / _ANON_KEY point at the localbase child.
//   parent            signs in through @supabase/ssr (so the `sb-127-auth-token` cookie is exactly what the app
//                     writes) and drives the load with its own keep-alive node:http client (every latency kept).
// Variants, each request cycling over the same 9 inputs (sort updated_at / created_at / title × page 1, the middle
// page, the last page; 20 a page):
//   (a) REST    the very GET /rest/v1/notes?select=…&order=…&offset=…&limit=… request (URL and headers, incl.
//               Prefer: count=exact and the user's JWT) that the procedure sent for that input — recorded in the tRPC
//               child during the warm-up, replayed here
//   (b) tRPC    GET /api/trpc/notes.list?batch=1&input=… with the session cookie, as the browser sends it
//   (c) /user   GET /auth/v1/user with the user's JWT (the call auth.getUser() makes; before ADR 031 every
//               protected request made it), for the breakdown
// Two phases. Concurrency 1: for --rounds × 3 s, a, b and c one after another for the same input (the order rotating),
// so whatever else this shared machine does at a moment hits all three alike. Concurrency --connections: 2 × --rounds
// rounds of 0.5 s slices per variant, the order rotating (per-variant req/s needs slices). p50/p99 over all latencies
// of a phase, also per page. The phases run on the tRPC server as the product runs it (no tracing). After each phase,
// a traced pass of (b) alone at the same concurrency (AsyncLocalStorage + a wrapped fetch + undici diagnostics
// channels in the tRPC child: costs of their own, so never in the timed phases) times, per request, the outgoing
// /auth/v1/user and /rest/v1 calls, createContext and the handler, which gives where the time goes (medians); the
// child also times the steps alone (c = 1) and a local ES256 verification of the token against the JWKS (jose).
// --show-requests logs the recorded requests and the cookie.
// Target (issue 12): at concurrency 1, (b) p50 ≤ 1.1 × (a) p50 over all inputs and ≤ 1.3 × on page 1 (the cheapest
// REST call, where the server's fixed cost weighs most); at concurrency --connections, (b) p50 ≤ 1.3 × (a) p50.
// Exit code 1 when missed.
import { AsyncLocalStorage } from 'node:async_hooks';
import diagnostics from 'node:diagnostics_channel';
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { registerHooks } from 'node:module';
import type { AddressInfo } from 'node:net';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createServerClient } from '@supabase/ssr';
import type { AnyRouter } from '@trpc/server';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { Agent as UndiciAgent, request as undiciRequest } from 'undici';
import type { JSONWebKeySet } from 'jose';
import { args, argValue } from './lib/args.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WEB = join(ROOT, 'apps/web');
const PKG = join(ROOT, 'packages/localbase');

const NOTES = Number(argValue('--notes') ?? 10_000);
const ROUNDS = Number(argValue('--rounds') ?? 5);
const CONNECTIONS = Number(argValue('--connections') ?? 10);
const asJson = args.includes('--json');
/** (b)/(a) p50 at concurrency 1, over all inputs */
const TARGET_C1 = 1.1;
/** (b)/(a) p50 on page 1 at concurrency 1 */
const TARGET_PAGE1 = 1.3;
/** (b)/(a) p50 at concurrency --connections */
const TARGET_LOAD = 1.3;
const SLICE_S = 0.5;
const PAGE_SIZE = 20;
const SORTS = ['updated_at', 'created_at', 'title'] as const;
const LAST_PAGE = Math.max(1, Math.ceil(NOTES / PAGE_SIZE));
const PAGES = [...new Set([1, Math.ceil(LAST_PAGE / 2), LAST_PAGE])];
/** The notes.list inputs, as the list screen sends them (features/notes/list-params.ts `listInput`). */
const INPUTS = SORTS.flatMap((sort) => PAGES.map((page) => ({ sort, dir: sort === 'title' ? 'asc' : 'desc', page, pageSize: PAGE_SIZE })));
/** The GET the browser's httpBatchLink sends for one query (superjson input: `{"0":{"json":…}}`). */
const trpcPathOf = (input: (typeof INPUTS)[number]) =>
  `/api/trpc/notes.list?batch=1&input=${encodeURIComponent(JSON.stringify({ 0: { json: input } }))}`;

const out = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);
const load = async <T,>(file: string): Promise<T> => (await import(pathToFileURL(file).href)) as T;
const q = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);

// ───────────────────────────── localbase child ─────────────────────────────
interface Lb {
  url: string;
  anonKey: string;
  serviceRoleKey: string;
  jwtSecret: string;
  db: { exec(sql: string): Promise<void> };
  stop(): Promise<void>;
}

const WORDS = ['Budget', 'Garden', 'Recipes', 'Trip', 'Meeting', 'Ideas', 'Reading', 'Workout', 'Groceries', 'Project', 'Letters', 'Music'];

async function serveLocalbase(): Promise<void> {
  const { startLocalbase } = await load<{ startLocalbase(o: Record<string, unknown>): Promise<Lb> }>(join(PKG, 'src/index.ts'));
  const lb = await startLocalbase({
    memory: true,
    port: 0,
    quiet: true,
    migrationsDir: join(ROOT, 'supabase/migrations'),
    seedFile: join(PKG, 'test/fixtures/empty-seed.sql'),
  });
  const call = async (path: string, body: unknown, key: string, extra: Record<string, string> = {}) => {
    const res = await fetch(`${lb.url}${path}`, {
      method: 'POST',
      headers: { apikey: key, authorization: `Bearer ${key}`, 'content-type': 'application/json', ...extra },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res;
  };
  const email = `bench-notes-${Date.now()}@example.com`;
  const password = 'bench-password-123';
  const t0 = performance.now();
  const user = (await (await call('/auth/v1/admin/users', { email, password, email_confirm: true }, lb.serviceRoleKey)).json()) as { id: string };
  const now = Date.now();
  for (let from = 0; from < NOTES; from += 1000) {
    const rows = Array.from({ length: Math.min(1000, NOTES - from) }, (_, k) => {
      const i = from + k;
      const created = new Date(now - (NOTES - i) * 60_000);
      return {
        user_id: user.id,
        title: `${WORDS[(i * 7) % WORDS.length] ?? 'Note'} ${String((i * 7919) % NOTES).padStart(5, '0')}`,
        body: `Note ${i}: ${'Some words about the day, a list of things to do and a thought worth keeping. '.repeat(1 + (i % 4))}`,
        pinned: i % 100 === 0,
        created_at: created.toISOString(),
        updated_at: new Date(Math.min(now, created.getTime() + ((i * 37) % 5000) * 60_000)).toISOString(),
      };
    });
    await call('/rest/v1/notes', rows, lb.serviceRoleKey, { prefer: 'return=minimal' });
  }
  await lb.db.exec('analyze public.notes');
  out({ ready: true, url: lb.url, anonKey: lb.anonKey, jwtSecret: lb.jwtSecret, email, password, userId: user.id, fillMs: performance.now() - t0 });
  for await (const line of createInterface({ input: process.stdin })) if ((JSON.parse(line) as { stop?: boolean }).stop) break;
  await lb.stop();
  process.exit(0);
}

// ───────────────────────────── tRPC child ─────────────────────────────
/** apps/web's bundler conventions for plain Node: extensionless relative imports → .ts / index.ts, JSON → type json. */
function registerWebImports(): void {
  registerHooks({
    resolve(specifier, context, next) {
      if ((specifier.startsWith('./') || specifier.startsWith('../')) && context.parentURL?.startsWith(pathToFileURL(WEB).href)) {
        const file = fileURLToPath(new URL(specifier, context.parentURL));
        if (!/\.(?:[cm]?[jt]sx?|json)$/.test(file))
          for (const candidate of [`${file}.ts`, join(file, 'index.ts')])
            if (existsSync(candidate) && statSync(candidate).isFile()) return next(pathToFileURL(candidate).href, context);
      }
      return next(specifier, context);
    },
    load(url, context, next) {
      if (url.startsWith(pathToFileURL(WEB).href) && url.endsWith('.json'))
        return next(url, { ...context, importAttributes: { ...context.importAttributes, type: 'json' } });
      return next(url, context);
    },
  });
}

type CallKind = 'user' | 'rest' | 'other';
interface Recorded {
  url: string;
  headers: Record<string, string>;
}
interface RequestRecord {
  start: number;
  /** outgoing calls: start (ms after the request arrived) and duration until the response headers */
  calls: { kind: CallKind; at: number; ms: number }[];
  contextMs: number;
  rest?: Recorded;
  user?: Recorded;
}
interface Sample {
  totalMs: number;
  /** request arrival → first outgoing call: tRPC request parsing, createContext (@supabase/ssr client), getSession */
  beforeMs: number;
  /** createContext alone (part of beforeMs) */
  contextMs: number;
  /** between the outgoing calls: supabase-js handling an answer, the next getSession, the procedure's middleware */
  betweenMs: number;
  /** REST answer's headers → response finished: body read + JSON, rows → items, superjson, writing the response */
  afterMs: number;
  userCalls: number;
  userMs: number;
  restMs: number;
}

async function serveTrpc(): Promise<void> {
  registerWebImports();
  const als = new AsyncLocalStorage<RequestRecord>();
  let recording = false;
  const recorded = new Map<string, { rest?: Recorded; user?: Recorded }>();
  let samples: Sample[] = [];
  const kindOf = (url: string): CallKind => (url.includes('/auth/v1/user') ? 'user' : url.includes('/rest/v1/') ? 'rest' : 'other');

  // Every outgoing call of the server's Supabase clients, timed (until the response headers) per tRPC request: the
  // auth client's through the global fetch, the table queries' (ctx.db: undici's request, server-fetch.ts) through
  // undici's diagnostics channels — which Node's own fetch also publishes to, so requests carrying fetch's
  // `sec-fetch-mode` header are left to the fetch wrapper.
  // All of it only while tracing (the warm-up that records the calls, and a breakdown pass of its own after each
  // phase): AsyncLocalStorage turns on promise hooks for every promise of the process, the wrapper and the
  // channel subscribers run per call — costs the product does not have, and that fall mostly on (b), whose request
  // makes many more promises than the floor's. The timed phases run on the server as the product runs it.
  const realFetch = globalThis.fetch;
  const note = (rec: RequestRecord, kind: CallKind, url: string, headers: Record<string, string>) => {
    if (recording && (kind === 'rest' || kind === 'user') && !rec[kind]) rec[kind] = { url, headers };
  };
  const tracedFetch = async (input: string | URL | Request, init?: RequestInit) => {
    const rec = als.getStore();
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const kind = kindOf(url);
    if (rec) {
      const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
      const plain: Record<string, string> = {};
      headers.forEach((value, name) => (plain[name] = value));
      note(rec, kind, url, plain);
    }
    const s = performance.now();
    try {
      return await realFetch(input, init);
    } finally {
      if (rec) rec.calls.push({ kind, at: s - rec.start, ms: performance.now() - s });
    }
  };
  const pending = new WeakMap<object, { rec: RequestRecord; kind: CallKind; s: number }>();
  const onCreate = (message: unknown) => {
    const { request } = message as { request: { origin: string; path: string; headers: string[] } };
    const rec = als.getStore();
    if (!rec || request.headers.some((h, i) => i % 2 === 0 && h.toLowerCase() === 'sec-fetch-mode')) return;
    const url = `${request.origin}${request.path}`;
    const kind = kindOf(url);
    const headers: Record<string, string> = {};
    for (let i = 0; i + 1 < request.headers.length; i += 2) headers[(request.headers[i] ?? '').toLowerCase()] = request.headers[i + 1] ?? '';
    note(rec, kind, url, headers);
    pending.set(request, { rec, kind, s: performance.now() });
  };
  const onHeaders = (message: unknown) => {
    const { request } = message as { request: object };
    const p = pending.get(request);
    if (!p) return;
    pending.delete(request);
    p.rec.calls.push({ kind: p.kind, at: p.s - p.rec.start, ms: performance.now() - p.s });
  };
  let tracing = false;
  const trace = (on: boolean) => {
    if (on === tracing) return;
    tracing = on;
    if (on) {
      globalThis.fetch = tracedFetch;
      diagnostics.subscribe('undici:request:create', onCreate);
      diagnostics.subscribe('undici:request:headers', onHeaders);
    } else {
      globalThis.fetch = realFetch;
      diagnostics.unsubscribe('undici:request:create', onCreate);
      diagnostics.unsubscribe('undici:request:headers', onHeaders);
      als.disable();
    }
  };
  trace(true);

  const { appRouter } = await load<{ appRouter: AnyRouter }>(join(WEB, 'src/server/root.ts'));
  const { createContext } = await load<{ createContext(o: { req: IncomingMessage; res: ServerResponse }): { getSupabase(): unknown; getSession(): Promise<unknown> } }>(join(WEB, 'src/server/trpc.ts'));
  const { verifySession } = await load<{ verifySession(s: unknown): Promise<{ verifiedBy: string; needsSecondFactor: boolean } | null> }>(join(WEB, 'src/lib/supabase/server.ts'));
  const { notesListQuery } = await load<{ notesListQuery(s: unknown, input: unknown): PromiseLike<{ error: unknown; count: number | null }> }>(join(WEB, 'src/server/routers/notes.ts'));

  const timedContext = ({ req, res }: { req: IncomingMessage; res: ServerResponse }) => {
    const s = performance.now();
    const ctx = createContext({ req, res });
    const rec = als.getStore();
    if (rec) rec.contextMs += performance.now() - s;
    return ctx;
  };
  // the product's handler (apps/web/src/server/trpc-handler.ts, as pages/api/trpc/[trpc].ts runs it) with a timed context
  type ApiHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;
  const { createApiHandler, atBasePath } = await load<{
    createApiHandler(o: { router: AnyRouter; createContext: typeof timedContext }): ApiHandler;
    atBasePath(h: ApiHandler, basePath: string): (req: IncomingMessage, res: ServerResponse) => void;
  }>(join(WEB, 'src/server/trpc-handler.ts'));
  const handler = atBasePath(createApiHandler({ router: appRouter, createContext: timedContext }), '/api/trpc/');
  // (d) the floor: the same REST call made by a server in between that does nothing else — undici's request (the
  // cheapest well-kept HTTP client here, the one ctx.db uses), read the body, answer with it — so (d) − (a) is what
  // the extra hop alone costs on this machine.
  const lbUrl = process.env.NEXT_PUBLIC_SUPABASE_URL ?? '';
  const FORWARDED = ['apikey', 'authorization', 'prefer', 'accept', 'accept-profile', 'x-client-info'];
  const floorAgent = new UndiciAgent({ keepAliveTimeout: 10_000 });
  const floor = async (req: IncomingMessage, res: ServerResponse) => {
    const headers: Record<string, string> = {};
    for (const name of FORWARDED) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const answer = await undiciRequest(`${lbUrl}${(req.url ?? '').slice('/floor'.length)}`, { headers, dispatcher: floorAgent });
    const body = await answer.body.text();
    const header = (name: string) => {
      const value = answer.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    };
    res.writeHead(answer.statusCode, { 'content-type': header('content-type') ?? 'application/json', 'content-range': header('content-range') ?? '' });
    res.end(body);
  };
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/floor/')) {
      floor(req, res).catch((error: unknown) => {
        res.statusCode = 502;
        res.end(String(error));
      });
      return;
    }
    if (!tracing) {
      handler(req, res);
      return;
    }
    const rec: RequestRecord = { start: performance.now(), calls: [], contextMs: 0 };
    const url = req.url ?? '';
    res.on('finish', () => {
      const sum = (kind: CallKind) => rec.calls.filter((c) => c.kind === kind).reduce((s, c) => s + c.ms, 0);
      const totalMs = performance.now() - rec.start;
      const first = rec.calls[0];
      const last = rec.calls.at(-1);
      const beforeMs = first ? first.at : totalMs;
      const afterMs = last ? totalMs - last.at - last.ms : 0;
      const inCalls = rec.calls.reduce((s, c) => s + c.ms, 0);
      samples.push({
        totalMs,
        beforeMs,
        contextMs: rec.contextMs,
        betweenMs: first ? totalMs - beforeMs - afterMs - inCalls : 0,
        afterMs,
        userCalls: rec.calls.filter((c) => c.kind === 'user').length,
        userMs: sum('user'),
        restMs: sum('rest'),
      });
      if (recording) recorded.set(url, { rest: rec.rest, user: rec.user });
    });
    als.run(rec, () => handler(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  out({ ready: true, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });

  // The steps alone, one after another (concurrency 1), each on a fresh per-request context as the route makes it.
  async function steps(cookie: string) {
    const fakeRes = { getHeader: () => undefined, setHeader: () => fakeRes, headersSent: false };
    const ctxOf = () => createContext({ req: { headers: { cookie } } as IncomingMessage, res: fakeRes as unknown as ServerResponse });
    const time = async (n: number, fn: (i: number) => unknown) => {
      const ms: number[] = [];
      for (let i = 0; i < n; i++) {
        const s = performance.now();
        const own = await fn(i); // a step that needs setup first returns its own duration
        ms.push(typeof own === 'number' ? own : performance.now() - s);
      }
      ms.sort((x, y) => x - y);
      return { p50: q(ms, 0.5), p99: q(ms, 0.99), mean: mean(ms) };
    };
    type Auth = { auth: { getUser(): Promise<{ error: unknown; data: { user: unknown } }> } };
    // The published signing keys (localbase signs ES256, as hosted Supabase): what getClaims() verifies with.
    const jwksRes = await fetch(`${process.env.NEXT_PUBLIC_SUPABASE_URL}/auth/v1/.well-known/jwks.json`, {
      headers: { apikey: process.env.NEXT_PUBLIC_SUPABASE_ANON_KEY ?? '' },
    });
    const keySet = createLocalJWKSet((await jwksRes.json()) as JSONWebKeySet);
    type Sessioned = { auth: { getSession(): Promise<{ data: { session: { access_token: string } | null } }> } };
    const token = (await (ctxOf().getSupabase() as Sessioned).auth.getSession()).data.session?.access_token ?? '';
    return {
      contextUs: ((await time(500, () => ctxOf())).mean * 1000),
      getUser: await time(200, async () => {
        const r = await (ctxOf().getSupabase() as Auth).auth.getUser();
        if (r.error) throw new Error('getUser failed');
      }),
      verifySession: await time(200, async () => {
        const v = await verifySession(ctxOf().getSupabase());
        if (!v || v.needsSecondFactor) throw new Error('verifySession failed');
      }),
      // what protectedProcedure runs: a token verified before needs no Supabase client (knownRequestSession)
      requestSession: await time(200, async () => {
        if (!(await ctxOf().getSession())) throw new Error('getSession failed');
      }),
      listQuery: await time(200, async (i) => {
        const r = await notesListQuery(ctxOf().getSupabase(), INPUTS[i % INPUTS.length]); // complete inputs: as zod outputs them
        if (r.error || r.count !== NOTES) throw new Error('list query failed');
      }),
      localJwtVerifyUs: (await time(2000, () => jwtVerify(token, keySet, { algorithms: ['ES256', 'RS256'] }))).mean * 1000,
    };
  }

  for await (const line of createInterface({ input: process.stdin })) {
    const cmd = JSON.parse(line) as { record?: boolean; recorded?: boolean; reset?: boolean; stats?: boolean; steps?: string; trace?: boolean; stop?: boolean };
    if (cmd.trace !== undefined) {
      trace(cmd.trace);
      out({ ok: true });
    }
    if (cmd.record !== undefined) {
      recording = cmd.record;
      out({ ok: true });
    }
    if (cmd.recorded) out({ recorded: Object.fromEntries(recorded) });
    if (cmd.reset) {
      samples = [];
      out({ ok: true });
    }
    if (cmd.stats) out({ samples });
    if (cmd.steps) out({ steps: await steps(cmd.steps) });
    if (cmd.stop) break;
  }
  server.close();
  process.exit(0);
}

// ───────────────────────────── parent ─────────────────────────────
interface Child {
  proc: ChildProcess;
  next(): Promise<Record<string, unknown>>;
  send(o: unknown): void;
}

function startChild(role: string, env: Record<string, string> = {}): Child {
  const proc = spawn(process.execPath, [fileURLToPath(import.meta.url), role, '--notes', String(NOTES)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  if (!proc.stdout || !proc.stdin) throw new Error('no pipes to the child');
  const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const stdin = proc.stdin;
  return {
    proc,
    async next() {
      const r = await lines.next();
      if (r.done) throw new Error(`the ${role} child exited early`);
      return JSON.parse(r.value as string) as Record<string, unknown>;
    },
    send: (o) => stdin.write(`${JSON.stringify(o)}\n`),
  };
}

async function stopChild(child: Child): Promise<void> {
  if (child.proc.exitCode !== null) return;
  child.send({ stop: true });
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), 10_000);
  await new Promise((r) => child.proc.once('exit', r));
  clearTimeout(timer);
}

/** The session cookie(s) @supabase/ssr writes on sign-in, as one Cookie header. */
async function signInCookie(url: string, anonKey: string, email: string, password: string): Promise<string> {
  let jar: { name: string; value: string }[] = [];
  const client = createServerClient(url, anonKey, {
    cookies: {
      getAll: () => jar,
      setAll: (cookies) => {
        for (const c of cookies) jar = [...jar.filter((j) => j.name !== c.name), ...(c.value ? [{ name: c.name, value: c.value }] : [])];
      },
    },
  });
  const { error } = await client.auth.signInWithPassword({ email, password });
  if (error) throw new Error(`sign-in failed: ${error.message}`);
  await new Promise((r) => setTimeout(r, 50)); // setAll runs from the auth state listener
  if (!jar.some((c) => /^sb-[a-z0-9-]+-auth-token(\.\d+)?$/.test(c.name))) throw new Error('no session cookie was written');
  return jar.map((c) => `${c.name}=${encodeURIComponent(c.value)}`).join('; ');
}

interface Req {
  path: string;
  headers: Record<string, string>;
}
interface Target {
  origin: URL;
  requests: Req[];
  agent: Agent;
  check: (status: number, body: string, i: number) => string | null;
  /** the next input for sliced runs */
  cursor: number;
}

function get(target: Target, req: Req): Promise<{ status: number; body: string }> {
  return new Promise((resolvePromise, reject) => {
    const r = request(
      { host: target.origin.hostname, port: target.origin.port, path: req.path, method: 'GET', headers: req.headers, agent: target.agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end();
  });
}

interface Acc {
  latencies: number[];
  byInput: number[][];
  /** wall time of the slices (sliced phase) or the sum of the variant's own latencies (paired phase) */
  elapsedMs: number;
}
const newAcc = (t: Target): Acc => ({ latencies: [], byInput: t.requests.map(() => []), elapsedMs: 0 });

/** One request of the target (its input i), checked; the latency is added to acc. */
async function timed(target: Target, i: number, acc: Acc): Promise<number> {
  const req = target.requests[i];
  if (!req) throw new Error('no request');
  const s = performance.now();
  const res = await get(target, req);
  const ms = performance.now() - s;
  const problem = target.check(res.status, res.body, i);
  if (problem) throw new Error(`${target.origin.href}: ${problem}`);
  acc.latencies.push(ms);
  acc.byInput[i]?.push(ms);
  return ms;
}

/** `concurrency` loops for `seconds`, each request the target's next input (a cursor kept across slices). */
async function slice(target: Target, seconds: number, concurrency: number, acc: Acc): Promise<void> {
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) await timed(target, target.cursor++ % target.requests.length, acc);
    }),
  );
  acc.elapsedMs += performance.now() - start;
}

/**
 * Concurrency 1, paired: for `seconds`, one request of each variant after another for the same input (the order
 * rotating each step), so whatever else the machine does at that moment hits all of them alike.
 */
async function paired(targets: Target[], seconds: number, accs: Acc[]): Promise<void> {
  const end = performance.now() + seconds * 1000;
  for (let step = 0; performance.now() < end; step++) {
    for (let k = 0; k < targets.length; k++) {
      const v = (step + k) % targets.length;
      const target = targets[v];
      const acc = accs[v];
      if (!target || !acc) throw new Error('no variant');
      acc.elapsedMs += await timed(target, step % target.requests.length, acc);
    }
  }
}

interface Row {
  name: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  mean: number;
  n: number;
  byPage: { page: number; p50: number }[];
}

async function main(): Promise<void> {
  const log = (m: string) => {
    if (!asJson) console.error(m);
  };
  log(`starting localbase (memory PGlite, supabase/migrations) and inserting ${NOTES} notes for one user…`);
  const lbChild = startChild('--serve-localbase');
  let trpcChild: Child | undefined;
  try {
    const lb = (await lbChild.next()) as { url: string; anonKey: string; jwtSecret: string; email: string; password: string; fillMs: number };
    const cookie = await signInCookie(lb.url, lb.anonKey, lb.email, lb.password);
    // One user sends thousands of requests here: the API's per-caller budget (ADR 014) would refuse most of them.
    trpcChild = startChild('--serve-trpc', {
      NEXT_PUBLIC_SUPABASE_URL: lb.url,
      NEXT_PUBLIC_SUPABASE_ANON_KEY: lb.anonKey,
      FOYER_API_QUERY_LIMIT: 'off',
    });
    const tc = trpcChild;
    const trpc = (await tc.next()) as { url: string };
    log(`filled in ${(lb.fillMs / 1000).toFixed(1)} s; tRPC server (apps/web appRouter + createContext) at ${trpc.url}`);

    // (b) tRPC, checked: 20 notes a page, the right total; recorded: the REST and /user calls each input makes
    const trpcTarget: Target = {
      origin: new URL(trpc.url),
      requests: INPUTS.map((input) => ({ path: trpcPathOf(input), headers: { cookie, accept: '*/*', 'content-type': 'application/json' } })),
      agent: new Agent({ keepAlive: true }),
      cursor: 0,
      check: (status, body) => {
        if (status !== 200) return `status ${status}: ${body.slice(0, 300)}`;
        const data = (JSON.parse(body) as { result?: { data?: { json?: { total?: number; items?: unknown[] } } } }[])[0]?.result?.data?.json;
        return data?.total === NOTES && data.items?.length === Math.min(PAGE_SIZE, NOTES) ? null : `unexpected page: ${body.slice(0, 300)}`;
      },
    };
    tc.send({ record: true });
    await tc.next();
    for (const req of trpcTarget.requests) {
      const r = await get(trpcTarget, req);
      const problem = trpcTarget.check(r.status, r.body, 0);
      if (problem) throw new Error(`notes.list: ${problem}`);
    }
    tc.send({ record: false });
    await tc.next();
    tc.send({ trace: false });
    await tc.next();
    tc.send({ recorded: true });
    const { recorded } = (await tc.next()) as { recorded: Record<string, { rest?: Recorded; user?: Recorded }> };
    const recOf = (req: Req) => recorded[req.path];
    const restRequests = trpcTarget.requests.map((req) => {
      const rest = recOf(req)?.rest;
      if (!rest) throw new Error(`no REST call recorded for ${req.path}`);
      const u = new URL(rest.url);
      return { path: u.pathname + u.search, headers: rest.headers };
    });
    const userCall = recOf(trpcTarget.requests[0] ?? { path: '', headers: {} })?.user;
    if (!userCall) throw new Error('no /auth/v1/user call recorded');
    if (args.includes('--show-requests')) {
      const first = restRequests[0];
      log(`(b) ${trpcTarget.requests[0]?.path} with Cookie: ${cookie.length} characters (${cookie.split('; ').map((c) => c.split('=')[0]).join(', ')})`);
      log(`(a) ${first?.path}\n    headers: ${Object.keys(first?.headers ?? {}).join(', ')}; prefer: ${first?.headers.prefer}`);
      log(`(c) ${userCall.url}\n    headers: ${Object.keys(userCall.headers).join(', ')}`);
    }

    // (a) the REST calls, checked: 200, 20 rows, Content-Range …/total
    const restTarget: Target = {
      origin: new URL(lb.url),
      requests: restRequests,
      agent: new Agent({ keepAlive: true }),
      cursor: 0,
      check: (status, body) => ((status === 200 || status === 206) && (JSON.parse(body) as unknown[]).length === Math.min(PAGE_SIZE, NOTES) ? null : `REST status ${status}: ${body.slice(0, 300)}`),
    };
    // (c) GET /auth/v1/user as auth.getUser() sends it
    const userUrl = new URL(userCall.url);
    const userTarget: Target = {
      origin: userUrl,
      requests: [{ path: userUrl.pathname + userUrl.search, headers: userCall.headers }],
      agent: new Agent({ keepAlive: true }),
      cursor: 0,
      check: (status, body) => (status === 200 ? null : `/user status ${status}: ${body.slice(0, 300)}`),
    };
    // (d) the same REST calls through a do-nothing server in between (the tRPC child's /floor/ route)
    const floorTarget: Target = { ...restTarget, origin: new URL(trpc.url), requests: restRequests.map((r) => ({ ...r, path: `/floor${r.path}` })), agent: new Agent({ keepAlive: true }) };
    const variants: [string, Target][] = [
      ['(a) REST  GET /rest/v1/notes', restTarget],
      ['(b) tRPC  GET /api/trpc/notes.list', trpcTarget],
      ['(c) auth  GET /auth/v1/user', userTarget],
      ['(d) floor the REST call via a bare proxy', floorTarget],
    ];

    log('warming up…');
    for (const [, t] of variants) await slice(t, 1, CONNECTIONS, newAcc(t));

    const targets = variants.map(([, t]) => t);
    const phases: { concurrency: number; rows: Row[]; server: Sample[]; tracedP50: number }[] = [];
    for (const concurrency of [...new Set([1, CONNECTIONS])]) {
      const accs = targets.map(newAcc);
      if (concurrency === 1) {
        log(`concurrency 1: ${ROUNDS * variants.length} s of paired requests (a, b, c, d for the same input, order rotating)…`);
        await paired(targets, ROUNDS * variants.length, accs);
      } else {
        log(`concurrency ${concurrency}: ${2 * ROUNDS} rounds of ${SLICE_S} s per variant, order rotating…`);
        for (let round = 0; round < 2 * ROUNDS; round++)
          for (let k = 0; k < targets.length; k++) {
            const v = (round + k) % targets.length;
            const target = targets[v];
            const acc = accs[v];
            if (!target || !acc) throw new Error('no variant');
            await slice(target, SLICE_S, concurrency, acc);
          }
      }
      // the breakdown: (b) alone on the traced server, as long as (b) ran in the phase, at the same concurrency
      log(`  the breakdown: (b) alone on the traced server…`);
      tc.send({ trace: true });
      await tc.next();
      tc.send({ reset: true });
      await tc.next();
      const traced = newAcc(trpcTarget);
      if (concurrency === 1) await slice(trpcTarget, ROUNDS, 1, traced);
      else for (let round = 0; round < 2 * ROUNDS; round++) await slice(trpcTarget, SLICE_S, concurrency, traced);
      tc.send({ stats: true });
      const { samples } = (await tc.next()) as { samples: Sample[] };
      tc.send({ trace: false });
      await tc.next();
      const tracedP50 = q([...traced.latencies].sort((x, y) => x - y), 0.5);
      const rows = variants.map(([name], v): Row => {
        const a = accs[v] ?? { latencies: [], byInput: [], elapsedMs: 1 };
        const sorted = [...a.latencies].sort((x, y) => x - y);
        // p50 per page (over the three sorts), for the inputs' variants only
        const byPage =
          a.byInput.length === INPUTS.length
            ? PAGES.map((page) => ({ page, p50: q(INPUTS.flatMap((input, i) => (input.page === page ? (a.byInput[i] ?? []) : [])).sort((x, y) => x - y), 0.5) }))
            : [];
        return { name, reqPerSec: (sorted.length / a.elapsedMs) * 1000, p50: q(sorted, 0.5), p99: q(sorted, 0.99), mean: mean(sorted), n: sorted.length, byPage };
      });
      phases.push({ concurrency, rows, server: samples, tracedP50 });
    }
    log('timing the steps alone…');
    tc.send({ steps: cookie });
    const { steps } = (await tc.next()) as {
      steps: {
        contextUs: number;
        getUser: { p50: number; p99: number; mean: number };
        verifySession: { p50: number; p99: number; mean: number };
        requestSession: { p50: number; p99: number; mean: number };
        listQuery: { p50: number; p99: number; mean: number };
        localJwtVerifyUs: number;
      };
    };

    const summary = phases.map((p) => {
      const [a, b, c, d] = p.rows;
      if (!a || !b || !c || !d) throw new Error('missing rows');
      // the median of each part (a few stalls of this shared machine would swamp the means)
      const med = (pick: (x: Sample) => number) => q(p.server.map(pick).sort((x, y) => x - y), 0.5);
      const srv = {
        totalMs: med((x) => x.totalMs),
        userCalls: med((x) => x.userCalls),
        userMs: med((x) => x.userMs),
        restMs: med((x) => x.restMs),
        ownMs: med((x) => x.totalMs - x.userMs - x.restMs),
        beforeMs: med((x) => x.beforeMs),
        contextMs: med((x) => x.contextMs),
        betweenMs: med((x) => x.betweenMs),
        afterMs: med((x) => x.afterMs),
      };
      return {
        concurrency: p.concurrency,
        rows: p.rows,
        ratioP50: b.p50 / a.p50,
        ratioP99: b.p99 / a.p99,
        ratioPerRequest: a.reqPerSec / b.reqPerSec,
        ratioP50ByPage: PAGES.map((page, k) => ({ page, ratio: (b.byPage[k]?.p50 ?? 0) / (a.byPage[k]?.p50 ?? 1) })),
        // the floor: (d)/(a), what any server in between costs here
        floorRatioP50: d.p50 / a.p50,
        floorRatioP50ByPage: PAGES.map((page, k) => ({ page, ratio: (d.byPage[k]?.p50 ?? 0) / (a.byPage[k]?.p50 ?? 1) })),
        server: { ...srv, requests: p.server.length, tracedP50: p.tracedP50, httpHopMs: p.tracedP50 - srv.totalMs },
        // Estimates, not measurements, and only without concurrency (with it, time not spent waiting for a /user
        // answer would be spent waiting for the database instead): (b)'s p50 less the /auth/v1/user time saved.
        estimates:
          p.concurrency === 1
            ? { oneUserCallLessRatio: (b.p50 - srv.userMs / Math.max(1, srv.userCalls)) / a.p50, noUserCallRatio: (b.p50 - srv.userMs) / a.p50 }
            : null,
        target: p.concurrency === 1 ? TARGET_C1 : TARGET_LOAD,
        page1Target: p.concurrency === 1 ? TARGET_PAGE1 : null,
        ok:
          b.p50 / a.p50 <= (p.concurrency === 1 ? TARGET_C1 : TARGET_LOAD) &&
          (p.concurrency !== 1 || (b.byPage[0]?.p50 ?? Infinity) / (a.byPage[0]?.p50 ?? 1) <= TARGET_PAGE1),
      };
    });
    const ok = summary.every((s) => s.ok);
    const report = { notes: NOTES, pageSize: PAGE_SIZE, pages: PAGES, rounds: ROUNDS, targets: { concurrency1: TARGET_C1, page1: TARGET_PAGE1, load: TARGET_LOAD }, phases: summary, steps, ok };

    if (asJson) console.log(JSON.stringify(report, null, 2));
    else {
      console.log(
        `\nnotes.list bench: ${NOTES} notes of one user, pages ${PAGES.join(', ')} of ${PAGE_SIZE} × sort ${SORTS.join(' / ')}, count=exact; ` +
          `concurrency 1: ${ROUNDS * 3} s of paired requests; concurrency ${CONNECTIONS}: ${2 * ROUNDS} rounds of ${SLICE_S} s slices per variant`,
      );
      for (const s of summary) {
        console.log(`\nconcurrency ${String(s.concurrency).padEnd(24)} req/s    p50 ms   p99 ms   mean ms   p50 ms of page ${PAGES.join(' / ')}`);
        for (const r of s.rows)
          console.log(
            `${r.name.padEnd(36)} ${r.reqPerSec.toFixed(0).padStart(6)}   ${r.p50.toFixed(2).padStart(6)}   ${r.p99.toFixed(2).padStart(6)}   ${r.mean.toFixed(2).padStart(6)}   ` +
              r.byPage.map((x) => x.p50.toFixed(2)).join(' / '),
          );
        console.log(
          `(b)/(a): p50 ${s.ratioP50.toFixed(2)}×  (target ≤ ${s.target}${s.page1Target ? `, page 1 ≤ ${s.page1Target}` : ''}) ${s.ok ? 'OK' : 'MISSED'};  p99 ${s.ratioP99.toFixed(2)}×;  time per request (1/req/s) ${s.ratioPerRequest.toFixed(2)}×;  p50 per page ${s.ratioP50ByPage.map((x) => `${x.ratio.toFixed(2)}×`).join(' / ')}`,
        );
        console.log(
          `inside the tRPC server, per notes.list (a traced pass of (b) alone after the phase, p50 ${s.server.tracedP50.toFixed(2)} ms — ` +
            `tracing costs its own time; median of each part over ${s.server.requests}): ${s.server.totalMs.toFixed(2)} ms ≈ ` +
            `${s.server.userCalls.toFixed(1)} × GET /auth/v1/user ${s.server.userMs.toFixed(2)} ms + GET /rest/v1/notes ${s.server.restMs.toFixed(2)} ms + ` +
            `its own work ${s.server.ownMs.toFixed(2)} ms (before the first call ${s.server.beforeMs.toFixed(2)} ms, of it createContext ${s.server.contextMs.toFixed(2)} ms; ` +
            `between the calls ${s.server.betweenMs.toFixed(2)} ms; after the REST answer ${s.server.afterMs.toFixed(2)} ms); ` +
            `the client's p50 is ${s.server.httpHopMs.toFixed(2)} ms more (its HTTP hop to the tRPC server)`,
        );
        console.log(
          `floor (d)/(a): p50 ${s.floorRatioP50.toFixed(2)}×, per page ${s.floorRatioP50ByPage.map((x) => `${x.ratio.toFixed(2)}×`).join(' / ')} — ` +
            `a server in between that only forwards the REST call; tRPC over the floor (b)/(d): p50 ${(s.ratioP50 / s.floorRatioP50).toFixed(2)}×, page 1 ` +
            `${((s.ratioP50ByPage[0]?.ratio ?? 0) / (s.floorRatioP50ByPage[0]?.ratio ?? 1)).toFixed(2)}×`,
        );
      }
      console.log(
        `\nsteps alone (c = 1, a fresh request context each): createContext ${steps.contextUs.toFixed(0)} µs; auth.getUser() p50 ${steps.getUser.p50.toFixed(2)} ms; ` +
          `verifySession (protectedProcedure's check: getSession, getClaims against the cached JWKS, the AAL) p50 ${steps.verifySession.p50.toFixed(2)} ms; ` +
          `the context's getSession (protectedProcedure's check: a token verified before, no client) p50 ${steps.requestSession.p50.toFixed(3)} ms; ` +
          `notesListQuery p50 ${steps.listQuery.p50.toFixed(2)} ms; local ES256 verification of the access token (jose, JWKS) ${steps.localJwtVerifyUs.toFixed(0)} µs`,
      );
      console.log('\nwhere the time goes (tRPC − REST):');
      for (const x of summary) {
        const [a, b] = x.rows;
        if (!a || !b) continue;
        console.log(
          `  concurrency ${x.concurrency}: p50 ${b.p50.toFixed(2)} − ${a.p50.toFixed(2)} = ${(b.p50 - a.p50).toFixed(2)} ms. Before its REST call the procedure makes ` +
            `${x.server.userCalls.toFixed(0)} sequential GET /auth/v1/user round trip(s) (median; verifySession asks the auth server only ` +
            `for HS256 tokens and an aal1 token not seen before): ${x.server.userMs.toFixed(2)} ms` +
            (x.concurrency > 1
              ? ` — localbase answers /user from its cache; under load the call also waits its turn on localbase's HTTP thread (alone, auth.getUser() takes ${steps.getUser.p50.toFixed(2)} ms)`
              : '') +
            `; the server's own work ${x.server.ownMs.toFixed(2)} ms` +
            (x.estimates
              ? `. Estimated p50 ratio with one /user call less: ${x.estimates.oneUserCallLessRatio.toFixed(2)}×, with none: ${x.estimates.noUserCallRatio.toFixed(2)}×.`
              : ' (no estimate here: under load, time not spent waiting for /user answers would be spent queueing for the database).'),
        );
      }
      if (!ok)
        console.log(
          '\nleft (see bench/README.md): the tRPC server\'s own work per request — the extra HTTP hop, tRPC and superjson, ' +
            'the per-request @supabase/ssr client (createContext) and its getSession() calls — now makes the whole difference.',
        );
    }
    process.exitCode = ok ? 0 : 1;
  } finally {
    if (trpcChild) await stopChild(trpcChild);
    await stopChild(lbChild);
  }
}

if (args.includes('--serve-localbase')) await serveLocalbase();
else if (args.includes('--serve-trpc')) await serveTrpc();
else await main();
