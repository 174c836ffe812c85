import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Browser tests: real Chromium against the production build of apps/web (started once in global-setup.ts).
// One worker, one file at a time: the tests share one server and a 2-core machine, and several measure timers.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    include: ['e2e/**/*.test.ts'],
    globalSetup: ['e2e/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 60_000,
    // One retry for a test that fails on a loaded machine (timers, focus after re-render). A retried pass is
    // printed by Vitest; a test that fails twice fails the run. auth-keyboard's Tab order flaked once under load.
    retry: 1,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
