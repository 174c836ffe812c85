// kill -9 during uploads: the object stays the old one (or absent), nothing torn, nothing orphaned. The server is the
// CLI in a child process on a data folder (PGlite) and, when LOCALBASE_TEST_DATABASE_URL is set, on PostgreSQL.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createClient } from '@supabase/supabase-js';
import { createScratchDatabase, DEMO_SERVICE_KEY, freePort, spawnCli, stopCli, waitReady, type CliProcess } from './cli.ts';
import { emptyMigrationsDir, emptySeedFile, testDatabaseUrl } from './helpers.ts';

const running: CliProcess[] = [];
const cleanup: string[] = [];
const databases: { drop: () => Promise<void> }[] = [];

afterAll(async () => {
  for (const proc of running) await stopCli(proc, 'SIGKILL');
  for (const p of cleanup) await rm(p, { recursive: true, force: true });
  for (const d of databases) await d.drop();
});

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => path.join(d.parentPath, d.name));
}

const targets = [{ name: 'PGlite data folder', pg: false }, ...(testDatabaseUrl ? [{ name: 'PostgreSQL', pg: true }] : [])];

describe.each(targets)('kill -9 mid-upload ($name)', ({ pg }) => {
  it('leaves the old object intact, no row without bytes, and no leftover file after the restart', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'localbase-storage-kill-'));
    const dataDir = path.join(dir, 'data');
    const storageDir = path.join(dir, 'storage');
    cleanup.push(dir, `${dataDir}.signing_keys.json`);
    // on PostgreSQL a database of its own: the suite's shared one must not get this server's bootstrap and migrations
    const scratch = pg ? await createScratchDatabase(testDatabaseUrl as string) : undefined;
    if (scratch) databases.push(scratch);
    const common = ['--storage-dir', storageDir, '--migrations-dir', emptyMigrationsDir, '--seed-file', emptySeedFile, '--quiet'];
    const args = scratch ? ['--database-url', scratch.url, ...common] : ['--data-dir', dataDir, ...common];
    const start = async () => {
      const proc = spawnCli(args, await freePort());
      running.push(proc);
      await waitReady(proc, 90_000);
      return proc;
    };
    const bucket = `kill-${randomBytes(4).toString('hex')}`;

    const first = await start();
    const admin = createClient(first.url, DEMO_SERVICE_KEY, { auth: { persistSession: false } });
    expect((await admin.storage.createBucket(bucket)).error).toBeNull();
    expect((await admin.storage.from(bucket).upload('doc.bin', 'the old bytes')).error).toBeNull();

    // an upsert of doc.bin and an upload of new.bin, each streamed slowly; the server dies while both are under way
    const slowBody = () => {
      let sent = 0;
      return new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((r) => setTimeout(r, 20));
          controller.enqueue(new Uint8Array(64 * 1024).fill(7));
          sent++;
          if (sent > 2000) controller.close();
        },
      });
    };
    const send = (key: string, upsert: boolean) =>
      fetch(`${first.url}/storage/v1/object/${bucket}/${key}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_SERVICE_KEY}`, 'x-upsert': String(upsert), 'content-type': 'application/octet-stream' },
        body: slowBody(),
        duplex: 'half',
      } as RequestInit).catch((e: unknown) => e);
    const uploads = [send('doc.bin', true), send('new.bin', false)];
    // wait until both temporary files hold bytes
    const tmp = path.join(storageDir, 'tmp');
    for (let i = 0; i < 200; i++) {
      const sizes = filesUnder(tmp).map((f) => fs.statSync(f).size);
      if (sizes.length === 2 && sizes.every((s) => s > 0)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(filesUnder(tmp)).toHaveLength(2);
    first.child.kill('SIGKILL');
    await first.exited;
    await Promise.all(uploads);
    const second = await start();
    const admin2 = createClient(second.url, DEMO_SERVICE_KEY, { auth: { persistSession: false } });
    const down = await admin2.storage.from(bucket).download('doc.bin');
    expect(await down.data?.text()).toBe('the old bytes');
    expect((await admin2.storage.from(bucket).exists('new.bin')).data).toBe(false);
    // what is left on disk is exactly the one stored version
    expect(filesUnder(tmp)).toEqual([]);
    const info = await admin2.storage.from(bucket).info('doc.bin');
    const objectFiles = filesUnder(path.join(storageDir, 'objects'));
    expect(objectFiles).toEqual([path.join(storageDir, 'objects', info.data!.id.slice(0, 2), info.data!.id, info.data!.version!)]);

    // a version file without its row (kill -9 after the rename, before the commit) is deleted at the next start
    const stray = path.join(storageDir, 'objects', info.data!.id.slice(0, 2), info.data!.id, randomUUID());
    fs.writeFileSync(stray, 'uncommitted');
    await stopCli(second, 'SIGKILL');
    const third = await start();
    expect(fs.existsSync(stray)).toBe(false);
    const admin3 = createClient(third.url, DEMO_SERVICE_KEY, { auth: { persistSession: false } });
    expect(await (await admin3.storage.from(bucket).download('doc.bin')).data?.text()).toBe('the old bytes');
    await admin3.storage.emptyBucket(bucket);
    await admin3.storage.deleteBucket(bucket);
    await stopCli(third);
  }, 180_000);
});
