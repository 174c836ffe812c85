import fs from 'node:fs';
import path from 'node:path';
import { besideDataFolder } from '../data-folder.ts';

export class DataDirLockedError extends Error {
  readonly pid: number;
  constructor(lockFile: string, pid: number, advice = 'Stop that process first, or use another --data-dir.') {
    super(`The data folder is already in use by another localbase process (pid ${pid}). ${advice} Lock file: ${lockFile}`);
    this.name = 'DataDirLockedError';
    this.pid = pid;
  }
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed process whose parent has not reaped it yet (a zombie) still answers kill(pid, 0).
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    // Gone meanwhile (Linux), or no procfs at all (macOS): then trust kill().
    return !fs.existsSync('/proc/self/stat');
  }
}

export interface DirLock {
  readonly file: string;
  release(): void;
}

/**
 * Takes an exclusive lock on a data folder: a file `<dir>.lock` holding our pid, created with O_EXCL.
 * A lock whose pid is no longer alive is stale and is taken over. Throws DataDirLockedError otherwise.
 */
export function lockDataDir(dataDir: string): DirLock {
  const file = besideDataFolder(dataDir).lock;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      let released = false;
      return {
        file,
        release() {
          if (released) return;
          released = true;
          try {
            if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.unlinkSync(file);
          } catch {
            /* already gone */
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let pid: number;
      try {
        pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
      } catch {
        continue; // removed meanwhile: retry
      }
      if (pid === process.pid) throw new DataDirLockedError(file, pid);
      if (pidAlive(pid)) throw new DataDirLockedError(file, pid);
      // Stale lock (process gone, or an empty file left by a crash between open and write): remove and retry.
      try {
        fs.unlinkSync(file);
      } catch {
        /* someone else removed it */
      }
    }
  }
  throw new Error(`Could not take the lock ${file}`);
}
