// A memory-mode server keeps its data and its storage bytes in throwaway folders of the machine's temp folder. It
// removes them when it stops; these tests cover the other ends: killed with SIGKILL, and a start that fails.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, spawnCli, stopCli, waitReady, type CliProcess } from './cli.ts';

let temp: string;
const running: CliProcess[] = [];

beforeAll(() => {
  temp = mkdtempSync(path.join(tmpdir(), 'localbase-throwaway-test-'));
});

afterAll(async () => {
  for (const proc of running) await stopCli(proc, 'SIGKILL');
  rmSync(temp, { recursive: true, force: true });
});

/** The throwaway folders in the test's temp folder, by kind, of one process. */
const foldersOf = (pid: number | undefined) =>
  readdirSync(temp).filter((name) => name.startsWith(`localbase-mem-${pid}-`) || name.startsWith(`localbase-storage-${pid}-`));

async function startMemory(port?: number): Promise<CliProcess> {
  const proc = spawnCli(['--memory', '--quiet'], port ?? (await freePort()), { TMPDIR: temp });
  running.push(proc);
  return proc;
}

describe('a memory-mode server', () => {
  it('killed with SIGKILL leaves its folders, and the next memory-mode start deletes them', async () => {
    const killed = await startMemory();
    await waitReady(killed, 90_000);
    const pid = killed.child.pid;
    expect(foldersOf(pid).map((name) => name.replace(/\d+-.*$/, ''))).toEqual(['localbase-mem-', 'localbase-storage-']);
    await stopCli(killed, 'SIGKILL');
    expect(foldersOf(pid)).toHaveLength(2); // nothing could remove them

    const next = await startMemory();
    await waitReady(next, 90_000);
    expect(foldersOf(pid)).toEqual([]);
    expect(foldersOf(next.child.pid)).toHaveLength(2); // its own, while it runs
    await stopCli(next);
    expect(foldersOf(next.child.pid)).toEqual([]);
  }, 180_000);

  it('that cannot start (its port is taken) leaves no folder', async () => {
    const blocker = net.createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', resolve));
    try {
      const refused = await startMemory(port);
      const exit = await refused.exited;
      expect(exit.code).not.toBe(0);
      expect(refused.output()).toMatch(/EADDRINUSE|in use/i);
      // (the test before stopped its server, so any folder here would be this one's)
      expect(readdirSync(temp).filter((name) => name.startsWith('localbase-'))).toEqual([]);
    } finally {
      blocker.close();
    }
  }, 120_000);
});
