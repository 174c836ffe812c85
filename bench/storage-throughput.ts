// Storage throughput (issue 14, decisions 036 and 045): a 50 MB object uploaded to and downloaded from localbase's
// /storage/v1, beside a plain copy of the same file on the same disk, measured in one run; and localbase's memory
// during a 200 MB upload.
//
//   node bench/storage-throughput.ts [--rounds 5] [--size-mb 50] [--big-mb 200] [--database-url postgres://…]
//                                    [--dir /path/on/the/disk] [--profile] [--json]
//
// A child process serves localbase from its sources (PGlite in its worker thread on a new data folder, or
// --database-url) with its storage folder inside --dir (default: a new folder under the OS temp dir, which is the
// same ext4 disk as the repository here; the bench prints the file system of each). This process signs a user in
// with supabase-js; a private bucket `bench` has Supabase's usual policies letting authenticated users read and write
// only `<their id>/…` (created with the service key; every upload and download below runs as the user, so RLS
// decides as in an app). Then, interleaved over --rounds rounds (the order rotating each round, so load changes hit
// every variant alike), on one 50 MB file of random bytes:
//   copyFile   fs.copyFile of the file to a new file on the same disk, then fsync of the copy (the kernel copies;
//              on ext4 that is a page-cache copy with no user-space pass over the bytes)
//   stream     pipeline(createReadStream, createWriteStream) of the same file, then fsync: what the storage write
//              does without HTTP (read a stream, write it, fsync) — the upload's baseline
//   upload     POST /storage/v1/object/bench/<uid>/<name> with the user's token, the body streamed by node:http from
//              memory in 1 MiB writes with Content-Length (the client does no disk reads and no hashing, so it is not
//              the bottleneck); timed until the 200 answer (bytes fsynced, row committed)
//   download   GET /storage/v1/object/authenticated/bench/<uid>/<name> with the user's token; the body is read and
//              discarded (counted, not written: the server's side is measured), timed to the last byte
//   cached     the same stream copy without fsync (the copy lands in the page cache)
// MB/s are 10^6 bytes per second (a 50 MB object = 50 × 2^20 bytes). Targets (medians over the rounds): upload ≥ 1/3
// of the stream copy with fsync (the same durable work: read a stream, write a file, fsync it — the storage write
// fsyncs before the row commits, so a copy that skips it measures the page cache, not the disk), download ≥ 1/3 of
// the stream copy without fsync (a download only reads; nothing has to reach the disk); and both ≥ 1/3 of the
// kernel's copy (a1), the "plain file copy" read literally (`cp` copies so). Memory: during one --big-mb upload the child's RSS
// (VmRSS from /proc/<pid>/status, every 50 ms; the PGlite worker thread is in the same process) — the peak rise over
// the idle RSS just before must stay ≤ 64 MB (a bounded streaming pipeline holds a few MiB of chunks; 64 MB leaves
// room for V8's heap growing between collections, and is a third of the object, so whole-object buffering fails it).
// Exit 1 when a target is missed, 2 when the bench cannot run. --profile writes a CPU profile of the child
// (node --cpu-prof) to --dir and prints its heaviest functions.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createInterface } from 'node:readline';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createClient } from '@supabase/supabase-js';
import { args, argValue } from './lib/args.ts';
import { ANON_KEY, freePort } from './lib/local.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_INDEX = join(ROOT, 'packages/localbase/src/index.ts');
const SERVICE_ROLE_KEY =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6InNlcnZpY2Vfcm9sZSIsImV4cCI6MTk4MzgxMjk5Nn0.EGIM96RAZx35lJzdJsyH-qQwv8Hdp7fsn3W0YpN81IU';
const MiB = 1024 * 1024;
const ROUNDS = Number(argValue('--rounds') ?? 5);
const SIZE = Number(argValue('--size-mb') ?? 50) * MiB;
const BIG = Number(argValue('--big-mb') ?? 200) * MiB;
const DATABASE_URL = argValue('--database-url');
const PROFILE = args.includes('--profile');
const asJson = args.includes('--json');
const TARGET_RATIO = 1 / 3;
const MEMORY_BOUND = 64 * MiB;
const BUCKET = 'bench';

const loadBefore = readFileSync('/proc/loadavg', 'utf8').trim();
const dir = argValue('--dir') ? resolve(argValue('--dir')!) : await fs.mkdtemp(join(os.tmpdir(), 'storage-bench-'));
await fs.mkdir(dir, { recursive: true });
const say = (s: string): void => {
  if (!asJson) console.log(s);
};

// ── localbase in a child process ─────────────────────────────────────────────────────────────────
const options = {
  port: await freePort(),
  quiet: true,
  ...(DATABASE_URL ? { databaseUrl: DATABASE_URL } : { dataDir: join(dir, 'data') }),
  storageDir: join(dir, 'storage'),
  storageFileSizeLimit: Math.max(SIZE, BIG) + MiB,
  rateLimits: { signInSignUps: 100_000, tokenRefresh: 100_000, tokenVerifications: 100_000 },
};
const childCode = `
import { startLocalbase } from ${JSON.stringify(pathToFileURL(SOURCE_INDEX).href)};
import { createInterface } from 'node:readline';
const lb = await startLocalbase(${JSON.stringify(options)});
console.log('BENCH_READY ' + lb.url);
createInterface({ input: process.stdin }).on('line', async (line) => {
  try { await lb.db.exec(JSON.parse(line)); console.log('BENCH_DONE'); } catch (err) { console.log('BENCH_FAILED ' + err.message); }
});
const stop = async () => { await lb.stop(); process.exit(0); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
`;

function startChild(): Promise<{ child: ChildProcess; url: string; sql: (s: string) => Promise<void> }> {
  const flags = PROFILE ? ['--cpu-prof', '--cpu-prof-dir', dir] : [];
  const child = spawn(process.execPath, [...flags, '--input-type=module', '-e', childCode], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  let ready: (url: string) => void = () => {};
  lines.on('line', (line) => {
    if (line.startsWith('BENCH_READY ')) ready(line.slice('BENCH_READY '.length));
    else if (line.startsWith('BENCH_')) waiting.shift()?.(line);
  });
  const sql = (s: string) =>
    new Promise<void>((res, rej) => {
      waiting.push((line) => (line === 'BENCH_DONE' ? res() : rej(new Error(line))));
      child.stdin!.write(JSON.stringify(s) + '\n');
    });
  return new Promise((res, rej) => {
    ready = (url) => res({ child, url, sql });
    child.once('exit', (code) => rej(new Error(`localbase exited with ${code}`)));
  });
}

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

function fileSystemOf(path: string): string {
  try {
    return execFileSync('df', ['--output=source,fstype', path], { encoding: 'utf8' }).trim().split('\n').pop()!.replace(/\s+/, ' ');
  } catch {
    return '?';
  }
}

let child: ChildProcess | undefined;
try {
  const started = await startChild();
  child = started.child;
  const { url, sql } = started;
  const admin = createClient(url, SERVICE_ROLE_KEY, { auth: { persistSession: false, autoRefreshToken: false } });
  const email = `bench-${process.pid}@example.com`;
  const password = 'correct-horse-battery-9';
  const created = await admin.auth.admin.createUser({ email, password, email_confirm: true });
  if (created.error) throw created.error;
  const user = createClient(url, ANON_KEY, { auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false } });
  const signedIn = await user.auth.signInWithPassword({ email, password });
  if (signedIn.error) throw signedIn.error;
  const uid = signedIn.data.user.id;
  const token = signedIn.data.session.access_token;
  const made = await admin.storage.createBucket(BUCKET, { public: false });
  if (made.error) throw made.error;
  await sql(`
    create policy "bench read own folder" on storage.objects for select to authenticated
      using (bucket_id = '${BUCKET}' and (storage.foldername(name))[1] = (select auth.uid()::text));
    create policy "bench write own folder" on storage.objects for insert to authenticated
      with check (bucket_id = '${BUCKET}' and (storage.foldername(name))[1] = (select auth.uid()::text));
    create policy "bench delete own files" on storage.objects for delete to authenticated
      using (bucket_id = '${BUCKET}' and owner_id = (select auth.uid()::text));`);

  const host = new URL(url);
  /** POST of `body` (sent from memory in 1 MiB writes) as the user; resolves with the answer's status and text. */
  const upload = (key: string, body: Buffer): Promise<{ status: number; text: string }> =>
    new Promise((res, rej) => {
      const req = http.request(
        {
          host: host.hostname,
          port: host.port,
          method: 'POST',
          path: `/storage/v1/object/${BUCKET}/${uid}/${key}`,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'content-length': body.length },
        },
        (answer) => {
          let text = '';
          answer.setEncoding('utf8');
          answer.on('data', (c: string) => (text += c));
          answer.on('end', () => res({ status: answer.statusCode ?? 0, text }));
        },
      );
      req.on('error', rej);
      let off = 0;
      const write = (): void => {
        while (off < body.length) {
          const end = Math.min(off + MiB, body.length);
          const more = req.write(body.subarray(off, end));
          off = end;
          if (!more) return void req.once('drain', write);
        }
        req.end();
      };
      write();
    });
  /**
   * GET as the user; the body is counted and discarded. The client is a bare socket reading into one reused 1 MiB
   * buffer (net's `onread`): node:http's reader allocated a buffer per read and parsed each one, and on these two
   * cores it became the slower side once localbase sent files from reused buffers (ADR 179) — the bench measured its
   * own client. This one reads the head (status, Content-Length) and then only counts bytes.
   */
  const readBuffer = Buffer.allocUnsafe(MiB);
  const download = (key: string): Promise<number> =>
    new Promise((res, rej) => {
      const path = `/storage/v1/object/authenticated/${BUCKET}/${uid}/${key}`;
      let head = '';
      let length = -1;
      let n = 0;
      /** Ends the download (with an error when one is given); false tells net to stop reading. */
      const finish = (err?: Error): false => {
        socket.destroy();
        if (err) rej(err);
        else res(n);
        return false;
      };
      const readHead = (size: number): number | Error | null => {
        head += readBuffer.toString('latin1', 0, size);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return head.length < 64 * 1024 ? null : new Error('download: no end of head');
        const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1];
        if (status !== '200') return new Error(`download: ${status ?? head.slice(0, 40)}`);
        const declared = /\r\ncontent-length: *(\d+)/i.exec(head.slice(0, end))?.[1];
        if (declared === undefined) return new Error('download: no Content-Length');
        length = Number(declared);
        return size - (head.length - end - 4); // where the body starts in this read
      };
      const socket = net.connect({
        host: host.hostname,
        port: Number(host.port),
        onread: {
          buffer: readBuffer,
          callback: (size) => {
            let from = 0;
            if (length < 0) {
              const read = readHead(size);
              if (read === null) return true;
              if (read instanceof Error) return finish(read);
              from = read;
            }
            n += size - from;
            if (n > length) return finish(new Error(`download: ${n} bytes for Content-Length ${length}`));
            return n === length ? finish() : true;
          },
        },
      });
      socket.on('connect', () =>
        socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host.host}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`),
      );
      socket.on('error', rej);
      socket.on('end', () => (length < 0 || n < length) && rej(new Error(`download: closed after ${n} of ${length} bytes`)));
    });
  const remove = async (key: string): Promise<void> => {
    const { error } = await user.storage.from(BUCKET).remove([`${uid}/${key}`]);
    if (error) throw error;
  };

  const source = join(dir, 'source.bin');
  const payload = randomBytes(SIZE);
  await fs.writeFile(source, payload);
  const fsync = async (file: string): Promise<void> => {
    const fh = await fs.open(file, 'r+');
    await fh.sync();
    await fh.close();
  };

  say(`storage throughput: ${SIZE / MiB} MiB object, ${ROUNDS} rounds, ${DATABASE_URL ? 'PostgreSQL' : 'PGlite'}`);
  say(`  bench folder ${dir} (${fileSystemOf(dir)}); repository ${ROOT} (${fileSystemOf(ROOT)})`);
  say(`  load before: ${loadBefore}`);

  type Variant = 'copyFile' | 'stream' | 'cached' | 'upload' | 'download';
  const seconds: Record<Variant, number[]> = { copyFile: [], stream: [], cached: [], upload: [], download: [] };
  let uploaded = 0;
  const stored = new Set<string>();
  const run: Record<Variant, (round: number) => Promise<void>> = {
    async copyFile(round) {
      const dest = join(dir, `copy-${round}.bin`);
      await fs.copyFile(source, dest);
      await fsync(dest);
    },
    async stream(round) {
      const dest = join(dir, `stream-${round}.bin`);
      await pipeline(createReadStream(source), createWriteStream(dest));
      await fsync(dest);
    },
    async cached(round) {
      await pipeline(createReadStream(source), createWriteStream(join(dir, `cached-${round}.bin`)));
    },
    async upload(round) {
      const r = await upload(`up-${round}.bin`, payload);
      if (r.status !== 200) throw new Error(`upload: ${r.status} ${r.text}`);
      uploaded = round;
      stored.add(`up-${round}.bin`);
    },
    async download() {
      const n = await download(`up-${uploaded}.bin`);
      if (n !== SIZE) throw new Error(`download: ${n} bytes instead of ${SIZE}`);
    },
  };
  // round 0 is a warm-up (not counted): the first upload also creates folders and warms the JIT
  const order: Variant[] = ['copyFile', 'stream', 'cached', 'upload', 'download'];
  for (let round = 0; round <= ROUNDS; round++) {
    const rotated = order.map((_, i) => order[(i + round) % order.length]!);
    for (const v of rotated) {
      const t0 = performance.now();
      await run[v](round);
      const s = (performance.now() - t0) / 1000;
      if (round > 0) seconds[v].push(s);
    }
    for (const f of [`copy-${round}.bin`, `stream-${round}.bin`, `cached-${round}.bin`]) await fs.rm(join(dir, f), { force: true });
    // keep only the newest object (the next round's download may come before its upload)
    for (const k of [...stored].filter((k) => k !== `up-${uploaded}.bin`)) {
      await remove(k);
      stored.delete(k);
    }
  }
  const median = (xs: number[]): number => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  const mbps = (s: number): number => SIZE / 1e6 / s;
  const result = Object.fromEntries(
    order.map((v) => [v, { medianMBps: mbps(median(seconds[v])), roundsMBps: seconds[v].map(mbps) }]),
  ) as Record<Variant, { medianMBps: number; roundsMBps: number[] }>;
  // The targets' baselines: an upload is judged against the stream copy with fsync (the same durable work: read a
  // stream, write a file, fsync it), a download against the stream copy without fsync (read the file, hand the bytes
  // on; nothing has to reach the disk).
  const vs = (v: 'upload' | 'download') => ({
    copyFile: result[v].medianMBps / result.copyFile.medianMBps,
    stream: result[v].medianMBps / result.stream.medianMBps,
    cached: result[v].medianMBps / result.cached.medianMBps,
  });
  const ratios = { upload: vs('upload'), download: vs('download') };

  // ── memory during one big upload ─────────────────────────────────────────────────────────────
  const big = randomBytes(BIG);
  await new Promise((r) => setTimeout(r, 500));
  const pid = child.pid!;
  const idleSamples: number[] = [];
  for (let i = 0; i < 10; i++) {
    idleSamples.push(rssOf(pid));
    await new Promise((r) => setTimeout(r, 50));
  }
  const idle = median(idleSamples);
  let peak = idle;
  let samples = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssOf(pid));
    samples++;
  }, 50);
  const tBig = performance.now();
  const bigAnswer = await upload('big.bin', big);
  const bigSeconds = (performance.now() - tBig) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, rssOf(pid));
  if (bigAnswer.status !== 200) throw new Error(`big upload: ${bigAnswer.status} ${bigAnswer.text}`);
  await remove('big.bin');
  const memory = { objectMB: BIG / 1e6, idleMB: idle / 1e6, peakMB: peak / 1e6, riseMB: (peak - idle) / 1e6, samples, uploadMBps: BIG / 1e6 / bigSeconds };

  const loadAfter = readFileSync('/proc/loadavg', 'utf8').trim();
  const missed: string[] = [];
  if (ratios.upload.stream < TARGET_RATIO) missed.push(`upload ${ratios.upload.stream.toFixed(2)}× of the stream copy with fsync (target ≥ 0.33×)`);
  if (ratios.download.cached < TARGET_RATIO) missed.push(`download ${ratios.download.cached.toFixed(2)}× of the stream copy without fsync (target ≥ 0.33×)`);
  // The literal reading, "a plain file copy" as `cp` makes it (the kernel's copy, (a1)): both also ≥ 1/3 of it.
  if (ratios.upload.copyFile < TARGET_RATIO) missed.push(`upload ${ratios.upload.copyFile.toFixed(2)}× of fs.copyFile with fsync (target ≥ 0.33×)`);
  if (ratios.download.copyFile < TARGET_RATIO) missed.push(`download ${ratios.download.copyFile.toFixed(2)}× of fs.copyFile with fsync (target ≥ 0.33×)`);
  if (peak - idle > MEMORY_BOUND) missed.push(`RSS rose ${memory.riseMB.toFixed(1)} MB during the ${BIG / MiB} MiB upload (bound ${MEMORY_BOUND / MiB} MiB)`);

  if (asJson) {
    console.log(JSON.stringify({ sizeBytes: SIZE, rounds: ROUNDS, database: DATABASE_URL ? 'postgres' : 'pglite', result, ratios, memory, loadBefore, loadAfter, missed }, null, 2));
  } else {
    const row = (name: string, v: Variant, note: string) =>
      say(`  ${name.padEnd(34)} ${result[v].medianMBps.toFixed(0).padStart(6)} MB/s   rounds ${result[v].roundsMBps.map((x) => x.toFixed(0)).join(' ')}${note}`);
    say('');
    row('(a1) fs.copyFile + fsync', 'copyFile', '');
    row('(a2) stream copy + fsync', 'stream', '');
    row('(a3) stream copy, no fsync', 'cached', '');
    const of = (r: { copyFile: number; stream: number; cached: number }) =>
      `   ${r.stream.toFixed(2)}× (a2), ${r.cached.toFixed(2)}× (a3), ${r.copyFile.toFixed(2)}× (a1)`;
    row('(b) upload through /storage/v1', 'upload', of(ratios.upload));
    row('(c) download through /storage/v1', 'download', of(ratios.download));
    say(`  targets: (b) ≥ 0.33× of (a2), the same durable work; (c) ≥ 0.33× of (a3), nothing made durable; both ≥ 0.33× of (a1), the kernel's copy`);
    say('');
    say(
      `  memory during a ${BIG / MiB} MiB upload (${memory.uploadMBps.toFixed(0)} MB/s): idle RSS ${memory.idleMB.toFixed(1)} MB, peak ${memory.peakMB.toFixed(1)} MB, ` +
        `rise ${memory.riseMB.toFixed(1)} MB (bound ${MEMORY_BOUND / MiB} MiB, ${samples} samples)`,
    );
    say(`  load after: ${loadAfter}`);
    say(missed.length ? `\nMISSED: ${missed.join('; ')}` : '\nall targets met');
  }
  await stopChild(child);
  child = undefined;
  if (PROFILE) await printProfile(dir);
  if (!argValue('--dir') && !PROFILE) await fs.rm(dir, { recursive: true, force: true });
  process.exitCode = missed.length ? 1 : 0;
} catch (err) {
  console.error('storage bench failed:', err);
  if (child) await stopChild(child);
  if (!argValue('--dir') && !PROFILE) await fs.rm(dir, { recursive: true, force: true });
  process.exitCode = 2;
}

function stopChild(c: ChildProcess): Promise<void> {
  return new Promise((res) => {
    if (c.exitCode !== null) return res();
    c.once('exit', () => res());
    c.kill('SIGTERM');
  });
}

/** The child's CPU profile: self time per function (top 25) and per file (top 10). */
async function printProfile(folder: string): Promise<void> {
  const names = (await fs.readdir(folder)).filter((n) => n.endsWith('.cpuprofile'));
  for (const name of names) {
    const prof = JSON.parse(await fs.readFile(join(folder, name), 'utf8')) as {
      nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
      samples: number[];
      timeDeltas: number[];
    };
    const self = new Map<number, number>();
    prof.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
    const byFn = new Map<string, number>();
    const byFile = new Map<string, number>();
    let total = 0;
    for (const n of prof.nodes) {
      const us = self.get(n.id) ?? 0;
      total += us;
      const file = n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/packages\//, '') || '(native)';
      const fn = `${n.callFrame.functionName || '(anonymous)'} ${file}:${n.callFrame.lineNumber + 1}`;
      byFn.set(fn, (byFn.get(fn) ?? 0) + us);
      byFile.set(file, (byFile.get(file) ?? 0) + us);
    }
    console.log(`\nCPU profile ${join(folder, name)}: ${(total / 1e6).toFixed(1)} s sampled`);
    for (const [fn, us] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${(us / 1e3).toFixed(0).padStart(7)} ms  ${fn}`);
    console.log('  by file:');
    for (const [f, us] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`  ${(us / 1e3).toFixed(0).padStart(7)} ms  ${f}`);
  }
}
