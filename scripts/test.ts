// Runs every test suite of the project, one after another, and prints the grand total as the last line:
// `N passed, N failed` (alone on its line; CI reads it). Exits non-zero when anything failed.
//
// Suites: web unit tests, localbase (embedded PGlite), localbase again against a real PostgreSQL server
// (DATABASE_URL path), and the browser tests against the production build.
// Environment:
//   FOYER_SKIP_BUILD=1          the production build is already fresh (CI builds it in its own step)
//   FOYER_TEST_ONLY=a,b         run only these suites (names below), for local iteration
//   LOCALBASE_TEST_DATABASE_URL use this PostgreSQL server instead of starting a throwaway one
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureChromium, ensurePostgres, startThrowawayPostgres } from './lib/system.ts';
import { repoRoot } from './lib/paths.ts';

interface Suite {
  name: string;
  cwd: string;
  config?: string;
  env?: Record<string, string>;
  before?: () => Promise<void> | void;
}

interface Tally {
  passed: number;
  failed: number;
  skipped: number;
}

const resultsDir = join(repoRoot, 'test-results');
mkdirSync(resultsDir, { recursive: true });

let stopPostgres: (() => void) | undefined;

const suites: Suite[] = [
  { name: 'web-unit', cwd: join(repoRoot, 'apps/web') },
  { name: 'localbase', cwd: join(repoRoot, 'packages/localbase') },
  {
    name: 'localbase-postgres',
    cwd: join(repoRoot, 'packages/localbase'),
    before: async () => {
      if (process.env.LOCALBASE_TEST_DATABASE_URL) return;
      ensurePostgres();
      const pg = await startThrowawayPostgres();
      stopPostgres = pg.stop;
      process.env.LOCALBASE_TEST_DATABASE_URL = pg.url;
    },
  },
  {
    name: 'e2e',
    cwd: repoRoot,
    config: 'e2e/vitest.config.ts',
    before: () => {
      ensureChromium();
      if (process.env.FOYER_SKIP_BUILD === '1' && existsSync(join(repoRoot, 'apps/web/.next/BUILD_ID'))) return;
      console.log('\n[test] building the web app (production build) for the browser tests');
      const build = spawnSync('npm', ['run', 'build', '-w', 'apps/web'], { cwd: repoRoot, stdio: 'inherit' });
      if (build.status !== 0) throw new Error('next build failed');
    },
  },
];

const only = process.env.FOYER_TEST_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
const total: Tally = { passed: 0, failed: 0, skipped: 0 };
const lines: string[] = [];

for (const suite of suites) {
  if (only && !only.includes(suite.name)) continue;
  const tally = await runSuite(suite);
  total.passed += tally.passed;
  total.failed += tally.failed;
  total.skipped += tally.skipped;
  lines.push(`${suite.name.padEnd(20)} ${tally.passed} passed, ${tally.failed} failed, ${tally.skipped} skipped`);
}
stopPostgres?.();

console.log('\nTest summary');
for (const line of lines) console.log(`  ${line}`);
console.log(`${total.passed} passed, ${total.failed} failed`);
process.exitCode = total.failed > 0 ? 1 : 0;

async function runSuite(suite: Suite): Promise<Tally> {
  console.log(`\n[test] ── ${suite.name} ──`);
  try {
    await suite.before?.();
  } catch (error) {
    console.error(`[test] ${suite.name}: could not prepare: ${(error as Error).message}`);
    return { passed: 0, failed: 1, skipped: 0 };
  }
  const out = join(resultsDir, `${suite.name}.json`);
  rmSync(out, { force: true });
  const args = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`];
  if (suite.config) args.push('--config', suite.config);
  // The suite's temporary files (data folders, storage folders, key files, browser profiles) go to a folder of its
  // own, removed afterwards: a run never leaves anything in the machine's temp folder, even when a test is killed.
  // Whatever a suite did not clean up itself is a defect of that suite, named and counted as one failure.
  const temp = mkdtempSync(join(tmpdir(), `foyer-test-${suite.name}-`));
  const run = spawnSync('npx', args, {
    cwd: suite.cwd,
    stdio: 'inherit',
    env: { ...process.env, ...suite.env, CI: process.env.CI ?? '', TMPDIR: temp },
  });
  // node-compile-cache: the V8 code cache Node keeps in the temp folder for tools that ask for it (a cache, not a leak)
  const leftBehind = readdirSync(temp).filter((name) => name !== 'node-compile-cache');
  rmSync(temp, { recursive: true, force: true });
  if (!existsSync(out)) {
    console.error(`[test] ${suite.name}: vitest wrote no report (exit ${run.status}); counted as one failure`);
    return { passed: 0, failed: 1, skipped: 0 };
  }
  const report = JSON.parse(readFileSync(out, 'utf8')) as VitestJsonReport;
  const tally: Tally = {
    passed: report.numPassedTests,
    failed: report.numFailedTests,
    skipped: report.numPendingTests + report.numTodoTests,
  };
  // A file that failed to load (syntax error, failing beforeAll) has no failed test of its own: count it once.
  for (const file of report.testResults) {
    const failedTests = file.assertionResults.filter((a) => a.status === 'failed').length;
    if (file.status === 'failed' && failedTests === 0) tally.failed += 1;
  }
  if (run.status !== 0 && tally.failed === 0) tally.failed = 1;
  if (leftBehind.length > 0) {
    console.error(`[test] ${suite.name}: left in its temporary folder after the run: ${leftBehind.join(', ')}; counted as one failure`);
    tally.failed += 1;
  }
  if (tally.passed + tally.failed === 0) {
    console.error(`[test] ${suite.name}: ran no test; counted as one failure`);
    tally.failed = 1;
  }
  return tally;
}

interface VitestJsonReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: { status: string; assertionResults: { status: string }[] }[];
}
