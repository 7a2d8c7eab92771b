import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The tiers a mutation run uses: unit and property tests, in process (no built binary, no sandbox).
// MUTATION_TESTS=glob,glob narrows them (a quicker run whose score is a lower bound): the table
// reader is read by nearly every push test, which makes each of its surviving mutants cost a minute.
const only = process.env.MUTATION_TESTS?.split(',').filter(Boolean);

export default defineConfig({
  resolve: {
    alias: [{ find: /^fast-check$/, replacement: fileURLToPath(new URL('./fast-check-capped.ts', import.meta.url)) }],
  },
  test: {
    include: only ?? ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts'],
    // Stryker runs tests in worker threads, where process.umask() cannot be set; and in a copy of
    // the tree without dist/, where doctor's cron-path check finds no built leadctl.
    exclude: ['test/unit/io/safe-file.test.ts', 'test/unit/jobs/run-files.test.ts', 'test/cmd/doctor.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
