// What an operator sees when --data-dir points at something that is not a localbase data folder: a file, a folder
// of their own files, a damaged database. `start` and `db reset` stop with exit code 1 and a message naming the
// folder and what to do, and touch nothing in it (before: "[object Object]", the database written among the files,
// `db reset` deleting them all, or PGlite's "Aborted(). Build with -sASSERTIONS for more info.").
// Also: a --port out of range is refused before anything is opened.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalbase } from '../src/index.ts';
import { freePort, runCli, spawnCli, stopCli, type CliProcess } from './cli.ts';
import { emptyMigrationsDir, emptySeedFile, removeDataFolder } from './helpers.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'localbase-data-folder-checks-'));
const running: CliProcess[] = [];
afterAll(async () => {
  for (const proc of running) await stopCli(proc, 'SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** `localbase start` on dataDir until it exits or answers; one that answers is stopped and reported as started. */
async function startOutcome(dataDir: string): Promise<{ code: number | null; output: string; started: boolean }> {
  const proc = spawnCli(['--quiet', '--data-dir', dataDir, '--migrations-dir', emptyMigrationsDir, '--seed-file', emptySeedFile], await freePort());
  running.push(proc);
  const deadline = Date.now() + 90_000;
  let exit: { code: number | null } | undefined;
  void proc.exited.then((e) => (exit = e));
  while (!exit && Date.now() < deadline) {
    const up = await fetch(`${proc.url}/auth/v1/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) {
      await stopCli(proc);
      return { code: null, output: proc.output(), started: true };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const { code } = await proc.exited;
  return { code, output: proc.output(), started: false };
}

const listing = (dir: string): string[] => fs.readdirSync(dir).sort();

describe('a --data-dir that is not a localbase data folder', { timeout: 120_000 }, () => {
  it('a file: start exits 1 saying it is not a folder, and leaves the file as it was', async () => {
    const file = path.join(tmp, 'a-file');
    fs.writeFileSync(file, 'mine');
    const r = await startOutcome(file);
    expect(r.started, r.output).toBe(false);
    expect(r.code).toBe(1);
    expect(r.output).toContain(file);
    expect(r.output).toMatch(/is not a folder/);
    expect(r.output).not.toContain('[object Object]');
    expect(fs.readFileSync(file, 'utf8')).toBe('mine');
  });

  it('a folder of other files: start exits 1 naming one of them and writes nothing into the folder', async () => {
    const dir = path.join(tmp, 'project');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'precious');
    const r = await startOutcome(dir);
    expect(r.started, r.output).toBe(false);
    expect(r.code).toBe(1);
    expect(r.output).toContain(dir);
    expect(r.output).toContain('notes.txt');
    expect(listing(dir)).toEqual(['notes.txt']);
  });

  it('a folder of other files: db reset exits 1 and deletes nothing', () => {
    const dir = path.join(tmp, 'project-reset');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'precious');
    const r = runCli(['db', 'reset', '--data-dir', dir, '--port', '9', '--migrations-dir', emptyMigrationsDir, '--seed-file', emptySeedFile]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toContain(dir);
    expect(r.stderr).toContain('notes.txt');
    expect(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('precious');
    expect(listing(dir)).toEqual(['notes.txt']);
  });

  it('a damaged database: start exits 1 naming the folder and what to do, not a bare WASM abort', async () => {
    const dir = path.join(tmp, 'damaged');
    const lb = await startLocalbase({ dataDir: dir, port: 0, quiet: true, migrationsDir: emptyMigrationsDir, seedFile: emptySeedFile });
    await lb.stop();
    fs.writeFileSync(path.join(dir, 'global', 'pg_control'), '');
    const r = await startOutcome(dir);
    expect(r.started, r.output).toBe(false);
    expect(r.code).toBe(1);
    expect(r.output).toContain(`the data folder ${dir} could not be opened`);
    expect(r.output).toMatch(/damaged/);
    removeDataFolder(dir);
  });

  it('a database left half-written by a first start that was killed is still taken (no foreign files in it)', async () => {
    const dir = path.join(tmp, 'half-written');
    fs.mkdirSync(path.join(dir, 'base'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'pg_wal'));
    fs.writeFileSync(path.join(dir, 'postgresql.conf'), '');
    const r = await startOutcome(dir);
    expect(r.started, r.output).toBe(true);
    removeDataFolder(dir);
  });
});

describe('a --port out of range', () => {
  it('stops start at once with exit 1 and the allowed range, before any data folder is made', () => {
    for (const port of ['99999', '1.5', '65536']) {
      const dir = path.join(tmp, `port-${port}`);
      const r = runCli(['start', '--port', port, '--data-dir', dir, '--migrations-dir', emptyMigrationsDir, '--seed-file', emptySeedFile]);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stderr).toContain(`--port must be a whole number from 0 to 65535, got "${port}"`);
      expect(fs.existsSync(dir)).toBe(false);
    }
    const env = runCli(['start', '--data-dir', path.join(tmp, 'port-env')], { LOCALBASE_PORT: '70000' });
    expect(env.code).toBe(1);
    expect(env.stderr).toContain('--port must be a whole number from 0 to 65535, got "70000"');
  });
});

describe('a --port another program holds', () => {
  it('stops start at once with exit 1, before any data folder is made or migrated', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((holder.address() as net.AddressInfo).port);
      const dir = path.join(tmp, 'port-taken');
      const r = runCli(['start', '--port', port, '--data-dir', dir, '--migrations-dir', emptyMigrationsDir, '--seed-file', emptySeedFile]);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stderr).toContain(`port ${port} is already in use`);
      expect(fs.existsSync(dir)).toBe(false);
    } finally {
      holder.close();
    }
  });
});

describe('a yes/no environment variable', () => {
  it('with a word it does not know stops the command with exit 1, naming the variable and the words it takes', () => {
    const dir = path.join(tmp, 'switch-unknown');
    const r = runCli(['db', 'reset', '--data-dir', dir, '--migrations-dir', emptyMigrationsDir, '--seed-file', emptySeedFile], { LOCALBASE_DISABLE_SIGNUP: 'sure' });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toContain('LOCALBASE_DISABLE_SIGNUP must be 1, true, yes or on (or 0, false, no, off), got "sure"');
    expect(fs.existsSync(dir)).toBe(false);
  });
});
