// Runs beside localbase and the web app in `npm run dev` / `npm start`: waits until both answer, then prints where
// to go and how to sign in as the demo user of supabase/seed.sql. It stays alive afterwards (concurrently's
// --kill-others stops everything when any part exits) and gives up quietly after two minutes.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './lib/paths.ts';

const webHost = process.env.HOST ?? '127.0.0.1';
const webURL = `http://${webHost === '0.0.0.0' ? '127.0.0.1' : webHost}:${process.env.PORT ?? '3000'}`;
const backendURL = process.env.NEXT_PUBLIC_SUPABASE_URL ?? `http://127.0.0.1:${process.env.LOCALBASE_PORT ?? '54321'}`;

/** The demo account named in the seed file's header (`--   email: …` / `--   password: …`), if any. */
export function demoAccount(seedSql: string): { email: string; password: string } | null {
  const email = /^--\s+email:\s+(\S+)/m.exec(seedSql)?.[1];
  const password = /^--\s+password:\s+(\S+)/m.exec(seedSql)?.[1];
  return email && password ? { email, password } : null;
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return response.status < 500;
  } catch {
    return false;
  }
}

async function main(): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if ((await answers(`${backendURL}/auth/v1/health`)) && (await answers(`${webURL}/`))) {
      let seed = '';
      try {
        seed = readFileSync(join(repoRoot, 'supabase', 'seed.sql'), 'utf8');
      } catch {
        // no seed file: no demo account to mention
      }
      const demo = demoAccount(seed);
      const lines = [
        '',
        `  Foyer is ready: ${webURL}`,
        demo ? `  Demo sign-in:   ${demo.email} / ${demo.password}  (30 notes, from supabase/seed.sql)` : null,
        `  Or sign up; confirmation and sign-in mails land in ${backendURL}/mailbox`,
        '',
      ].filter((line) => line !== null);
      console.log(lines.join('\n'));
      break;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  // Stay up: concurrently stops the other processes when one of them exits.
  setInterval(() => {}, 1 << 30);
}

process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
await main();
