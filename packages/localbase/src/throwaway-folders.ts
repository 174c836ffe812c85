// The throwaway folders of a memory-mode server (its PGlite data, its storage bytes), in the machine's temp folder.
// Each is named with the pid of the process that made it, so that a later start can delete the folders of processes
// that no longer run: a server killed with SIGKILL, or that crashed, never removed its own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** What each throwaway folder holds, by its name's prefix. */
export const THROWAWAY_PREFIXES = { pglite: 'localbase-mem-', storage: 'localbase-storage-' } as const;
export type ThrowawayKind = keyof typeof THROWAWAY_PREFIXES;

const OWNED = new RegExp(`^(?:${Object.values(THROWAWAY_PREFIXES).join('|')})(\\d+)-`);

let swept = false;

/**
 * A new throwaway folder of this process: `<tmp>/<prefix><pid>-XXXXXX`. The first one a process makes deletes those of
 * processes that no longer run, first.
 */
export function makeThrowawayFolder(kind: ThrowawayKind): string {
  if (!swept) {
    swept = true;
    sweepStaleThrowawayFolders();
  }
  return fs.mkdtempSync(path.join(os.tmpdir(), `${THROWAWAY_PREFIXES[kind]}${process.pid}-`));
}

/** Deletes the throwaway folders (of every kind) of processes that no longer run. */
function sweepStaleThrowawayFolders(): void {
  let entries: string[];
  try {
    entries = fs.readdirSync(os.tmpdir());
  } catch {
    return;
  }
  for (const name of entries) {
    const m = OWNED.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid) continue;
    try {
      process.kill(pid, 0);
      continue; // still running
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EPERM') continue; // someone else's process: running
    }
    fs.rmSync(path.join(os.tmpdir(), name), { recursive: true, force: true });
  }
}
