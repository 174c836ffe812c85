// What a fresh machine of our kind lacks for the tests, installed from Debian's packages when we are root,
// or a stop at once with the exact command to run when we are not. Never a silent skip.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const chromiumPath = '/usr/bin/chromium';
const isRoot = process.getuid?.() === 0;

function aptInstall(pkg: string): void {
  const command = `apt-get update && apt-get install -y ${pkg}`;
  if (!isRoot) {
    throw new Error(`${pkg} is not installed. Run as root: ${command}`);
  }
  console.log(`[setup] ${pkg} is missing; installing it: ${command}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', pkg]]) {
    const run = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (run.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${run.status})`);
  }
}

export function ensureChromium(): void {
  if (!existsSync(chromiumPath)) aptInstall('chromium');
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumPath} still missing after installing chromium`);
}

/** The bin folder of the newest Debian PostgreSQL server, or undefined. */
function postgresBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], 'bin') : undefined;
}

export function ensurePostgres(): void {
  if (!postgresBin()) aptInstall('postgresql');
  if (!postgresBin()) throw new Error('PostgreSQL server binaries still missing after installing postgresql');
}

async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a throwaway PostgreSQL server on a free loopback port with its data in a temporary folder.
 * PostgreSQL refuses to run as root, so as root it runs as Debian's `postgres` user.
 */
export async function startThrowawayPostgres(): Promise<{ url: string; stop: () => void }> {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL server found');
  const dir = mkdtempSync(join(tmpdir(), 'foyer-pg-'));
  const dataDir = join(dir, 'data');
  const port = await freePort();
  let asUser: string[] = [];
  if (isRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
    asUser = ['runuser', '-u', 'postgres', '--'];
  }
  const run = (cmd: string, args: string[]): void => {
    const full = [...asUser, join(bin, cmd), ...args];
    const result = spawnSync(full[0]!, full.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    if (result.status !== 0) {
      throw new Error(`${cmd} failed: ${result.stderr.toString() || result.stdout.toString()}`);
    }
  };
  run('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  run('pg_ctl', [
    '-D', dataDir, '-w', '-l', join(dir, 'log'), 'start',
    '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
  ]);
  const stop = (): void => {
    try {
      run('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  console.log(`[setup] throwaway PostgreSQL on 127.0.0.1:${port}`);
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop };
}
