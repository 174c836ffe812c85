import { defineConfig } from 'vitest/config';

// Unit tests of the /rest/v1 groundwork (parser, schema cache, relationship resolution), beside the code.
// Run: cd packages/localbase && npx vitest run --root src/rest
// (The package's vitest.config.ts only includes test/**; adding 'src/**/*.test.ts' there would pick these up too.)
export default defineConfig({
  // keep vite's cache out of src/rest (the root is this folder when run with --root src/rest)
  cacheDir: '../../node_modules/.vite',
  test: {
    include: ['**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
