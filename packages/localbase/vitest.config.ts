import { defineConfig } from 'vitest/config';

// One localbase server per test file (beforeAll). A PGlite memory instance costs ~300-700 MB, so at most two
// files run at once. Tests within a file run in order (they share the file's server).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
  },
});
