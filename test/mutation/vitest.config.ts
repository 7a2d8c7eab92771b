import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The tiers a mutation run uses: unit and property tests, in process (no built binary, no sandbox).
export default defineConfig({
  resolve: {
    alias: [{ find: /^fast-check$/, replacement: fileURLToPath(new URL('./fast-check-capped.ts', import.meta.url)) }],
  },
  test: {
    include: ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts'],
    // Stryker runs tests in worker threads, where process.umask() cannot be set.
    exclude: ['test/unit/io/safe-file.test.ts', 'test/unit/jobs/run-files.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
