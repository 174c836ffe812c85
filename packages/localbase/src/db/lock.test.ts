import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir } from './lock.ts';

const dirs: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'lb-lock-'));
  dirs.push(d);
  return path.join(d, 'data');
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('lockDataDir', () => {
  it('refuses a second lock on the same folder, naming the holder pid, until released', () => {
    const dir = tmp();
    const lock = lockDataDir(dir);
    expect(fs.readFileSync(lock.file, 'utf8')).toBe(String(process.pid));
    let err: unknown;
    try {
      lockDataDir(dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DataDirLockedError);
    expect((err as DataDirLockedError).pid).toBe(process.pid);
    expect((err as Error).message).toContain(`pid ${process.pid}`);
    lock.release();
    expect(fs.existsSync(lock.file)).toBe(false);
    lockDataDir(dir).release();
  });

  it('takes over a stale lock whose process is gone', () => {
    const dir = tmp();
    // A pid that certainly existed and has exited: a finished child process.
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const deadPid = Number(child.stdout.toString());
    fs.writeFileSync(dir + '.lock', String(deadPid));
    const lock = lockDataDir(dir);
    expect(fs.readFileSync(lock.file, 'utf8')).toBe(String(process.pid));
    lock.release();
  });
});
