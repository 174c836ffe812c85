// Realtime postgres changes (issue 15, decision 042): how long a committed note takes to reach its subscribers, and
// what the capture costs the writes, measured in one run.
//
//   node bench/realtime-latency.ts [--writes 200] [--duration 4] [--rounds 3] [--database-url postgres://…] [--json]
//
// A child process starts localbase (memory PGlite in its worker thread, or --database-url) with the product's
// supabase/migrations (public.notes in the supabase_realtime publication, RLS "owner: select" + AAL2) and answers
// `publish` / `unpublish` on stdin (ALTER PUBLICATION … ADD / DROP TABLE public.notes). This process signs in users
// with supabase-js and opens the subscribers — each its own supabase-js client and WebSocket, subscribed with the
// app's binding (`*` on public.notes, filter `user_id=eq.<uid>`) — then:
//   latency   --writes inserts of one user's notes through /rest/v1 (one after another, 20 ms apart), with 1, 10 and
//             100 subscribers of that user (all receive every insert: one subscriber group, one RLS check each),
//             and 100 subscribers of 100 different users of which one is the writer (100 groups: each insert is
//             RLS-checked 100 times, delivered once). Per delivery: insert sent → delivered (the REST request is
//             part of it: its own p50 is shown beside), and commit_timestamp (the trigger's clock_timestamp, ms) →
//             delivered.
//   writes/s  the same user inserting notes through /rest/v1 with 10 requests in flight, --rounds × --duration s per
//             variant, variants alternated so a load change hits them alike: published with no subscriber, published
//             with 100 subscribers of that user, and not published at all (no capture trigger) — the last is what
//             "skip the outbox when nobody subscribes" could at best win back.
// No targets: it prints the figures (exit 0 unless something fails).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { args, argValue } from './lib/args.ts';
import { ANON_KEY, freePort } from './lib/local.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_INDEX = join(ROOT, 'packages/localbase/src/index.ts');
const SERVICE_ROLE_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU';
const WRITES = Number(argValue('--writes') ?? 200);
const DURATION_S = Number(argValue('--duration') ?? 4);
const ROUNDS = Number(argValue('--rounds') ?? 3);
const DATABASE_URL = argValue('--database-url');
const asJson = args.includes('--json');
const CONCURRENCY = 10;

const options = {
  port: await freePort(),
  quiet: true,
  ...(DATABASE_URL ? { databaseUrl: DATABASE_URL } : { memory: true }),
  rateLimits: { signInSignUps: 100_000, tokenRefresh: 100_000, tokenVerifications: 100_000 },
};
const childCode = `
import { startLocalbase } from ${JSON.stringify(pathToFileURL(SOURCE_INDEX).href)};
import { createInterface } from 'node:readline';
const lb = await startLocalbase(${JSON.stringify(options)});
console.log('BENCH_READY ' + lb.url);
createInterface({ input: process.stdin }).on('line', async (line) => {
  const sql = line === 'publish' ? 'alter publication supabase_realtime add table public.notes'
    : 'alter publication supabase_realtime drop table public.notes';
  try { await lb.db.query(sql); console.log('BENCH_DONE'); } catch (err) { console.log('BENCH_FAILED ' + err.message); }
});
const stop = async () => { await lb.stop(); process.exit(0); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
`;

function startChild(): Promise<{ child: ChildProcess; url: string; command: (c: string) => Promise<void> }> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', childCode], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  let ready: (url: string) => void = () => {};
  lines.on('line', (line) => {
    if (line.startsWith('BENCH_READY ')) ready(line.slice('BENCH_READY '.length));
    else if (line.startsWith('BENCH_')) waiting.shift()?.(line);
  });
  const command = (c: string) =>
    new Promise<void>((res, rej) => {
      waiting.push((line) => (line === 'BENCH_DONE' ? res() : rej(new Error(line))));
      child.stdin!.write(c + '\n');
    });
  return new Promise((res, rej) => {
    ready = (url) => res({ child, url, command });
    child.once('exit', (code) => rej(new Error(`localbase exited with ${code}`)));
  });
}

const { child, url, command } = await startChild();
const clients: SupabaseClient[] = [];
const client = (): SupabaseClient => {
  const c = createClient(url, ANON_KEY, { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } });
  clients.push(c);
  return c;
};
const admin = createClient(url, SERVICE_ROLE_KEY, { auth: { persistSession: false, autoRefreshToken: false } });

interface User {
  id: string;
  session: { access_token: string };
}
let userNo = 0;
async function newUser(): Promise<User> {
  const email = `bench-${process.pid}-${++userNo}@example.com`;
  const password = 'correct-horse-battery-9';
  const created = await admin.auth.admin.createUser({ email, password, email_confirm: true });
  if (created.error) throw created.error;
  const c = client();
  const signedIn = await c.auth.signInWithPassword({ email, password });
  if (signedIn.error) throw signedIn.error;
  return { id: signedIn.data.user.id, session: signedIn.data.session };
}

/** A client acting as the user with their access token (REST and its own socket), as a signed-in tab does. */
async function as(user: User): Promise<SupabaseClient> {
  const c = createClient(url, ANON_KEY, { accessToken: async () => user.session.access_token });
  clients.push(c);
  return c;
}

type OnInsert = (payload: { commit_timestamp: string; new: Record<string, unknown> }) => void;
let channelNo = 0;
async function subscribeNotes(user: User, onInsert: OnInsert): Promise<() => Promise<void>> {
  const c = await as(user);
  const channel = c
    .channel(`bench-${++channelNo}`)
    .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'notes', filter: `user_id=eq.${user.id}` }, (p) =>
      onInsert(p as unknown as { commit_timestamp: string; new: Record<string, unknown> }),
    );
  await new Promise<void>((res, rej) =>
    channel.subscribe((status, err) => (status === 'SUBSCRIBED' ? res() : status !== 'CLOSED' && rej(err ?? new Error(status)))),
  );
  return async () => {
    await c.removeChannel(channel);
    c.realtime.disconnect();
  };
}

const quantile = (xs: number[], q: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Latency {
  variant: string;
  subscribers: number;
  deliveries: number;
  expected: number;
  sentToDelivered: { p50: number; p99: number };
  commitToDelivered: { p50: number; p99: number };
  insertRequest: { p50: number; p99: number };
}

async function latency(variant: string, writer: User, subscribers: User[]): Promise<Latency> {
  const sentAt = new Map<string, number>();
  const sentToDelivered: number[] = [];
  const commitToDelivered: number[] = [];
  let deliveries = 0;
  const receivers = subscribers.filter((u) => u.id === writer.id).length;
  const stops = await Promise.all(
    subscribers.map((u) =>
      subscribeNotes(u, (p) => {
        const now = performance.now();
        const wall = Date.now();
        const sent = sentAt.get(String(p.new.title));
        deliveries++;
        if (sent !== undefined) sentToDelivered.push(now - sent);
        commitToDelivered.push(wall - Date.parse(p.commit_timestamp));
      }),
    ),
  );
  const w = await as(writer);
  const insertMs: number[] = [];
  for (let i = 0; i < WRITES; i++) {
    const title = `${variant} ${i}`;
    const t0 = performance.now();
    sentAt.set(title, t0);
    const { error } = await w.from('notes').insert({ title });
    if (error) throw new Error(error.message);
    insertMs.push(performance.now() - t0);
    await sleep(20);
  }
  const expected = WRITES * receivers;
  const deadline = Date.now() + 10_000;
  while (deliveries < expected && Date.now() < deadline) await sleep(20);
  await Promise.all(stops.map((s) => s()));
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    variant,
    subscribers: subscribers.length,
    deliveries,
    expected,
    sentToDelivered: { p50: round(quantile(sentToDelivered, 0.5)), p99: round(quantile(sentToDelivered, 0.99)) },
    commitToDelivered: { p50: quantile(commitToDelivered, 0.5), p99: quantile(commitToDelivered, 0.99) },
    insertRequest: { p50: round(quantile(insertMs, 0.5)), p99: round(quantile(insertMs, 0.99)) },
  };
}

/** Inserts for `ms` with CONCURRENCY requests in flight; returns writes per second. */
async function writeFor(w: SupabaseClient, ms: number, tag: string): Promise<number> {
  const end = performance.now() + ms;
  let n = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const { error } = await w.from('notes').insert({ title: `${tag} ${n}` });
        if (error) throw new Error(error.message);
        n++;
      }
    }),
  );
  return n / (ms / 1000);
}

try {
  const writer = await newUser();
  const others = await Promise.all(Array.from({ length: 99 }, () => newUser()));
  const results: Latency[] = [];
  for (const n of [1, 10, 100]) results.push(await latency(`same user ×${n}`, writer, Array.from({ length: n }, () => writer)));
  results.push(await latency('100 users', writer, [writer, ...others]));

  // writes/s: published without subscribers, with 100 subscribers, not published; alternated.
  const w = await as(writer);
  const rates: Record<string, number[]> = { 'published, 0 subscribers': [], 'published, 100 subscribers': [], 'not published': [] };
  let received = 0;
  for (let r = 0; r < ROUNDS; r++) {
    rates['published, 0 subscribers']!.push(await writeFor(w, DURATION_S * 1000, `w0-${r}`));
    const stops = await Promise.all(Array.from({ length: 100 }, () => subscribeNotes(writer, () => received++)));
    rates['published, 100 subscribers']!.push(await writeFor(w, DURATION_S * 1000, `w100-${r}`));
    await Promise.all(stops.map((s) => s()));
    await command('unpublish');
    rates['not published']!.push(await writeFor(w, DURATION_S * 1000, `wn-${r}`));
    await command('publish');
  }
  const writes = Object.entries(rates).map(([variant, xs]) => ({
    variant,
    perSecond: Math.round(xs.reduce((a, b) => a + b, 0) / xs.length),
    rounds: xs.map(Math.round),
  }));

  if (asJson) console.log(JSON.stringify({ latency: results, writes, received }, null, 2));
  else {
    console.log(`realtime postgres changes, ${DATABASE_URL ? 'PostgreSQL' : 'PGlite (worker thread)'}, ${WRITES} inserts per latency variant\n`);
    console.log('| subscribers | deliveries | insert sent → delivered p50 / p99 | commit_timestamp → delivered p50 / p99 | the insert request p50 / p99 |');
    console.log('|---|---|---|---|---|');
    for (const l of results)
      console.log(
        `| ${l.variant} | ${l.deliveries}/${l.expected} | ${l.sentToDelivered.p50} / ${l.sentToDelivered.p99} ms | ${l.commitToDelivered.p50} / ${l.commitToDelivered.p99} ms | ${l.insertRequest.p50} / ${l.insertRequest.p99} ms |`,
      );
    console.log(`\nnotes inserts per second through /rest/v1, ${CONCURRENCY} in flight, ${ROUNDS} × ${DURATION_S} s each, alternated:\n`);
    for (const x of writes) console.log(`  ${x.variant.padEnd(28)} ${x.perSecond}/s  (rounds: ${x.rounds.join(', ')})`);
  }
} finally {
  for (const c of clients) c.realtime.disconnect();
  child.kill('SIGTERM');
}
