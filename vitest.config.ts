import { defineConfig } from 'vitest/config';
import { reporters } from './test/helpers/reporters.js';

// Every tier runs file after file in a worker without a fresh process and module graph each
// (about 2 s of start-up per file on a loaded 2-core machine; the unit tier took 2.5x less CPU,
// twelve e2e files 20% less). A file that mocks a module (vi.mock) or changes process-wide state
// for good goes in ISOLATED instead. Measurements: docs/development.md.
const SHARED = [
  'test/unit/**/*.test.ts',
  'test/property/**/*.test.ts',
  'test/cmd/**/*.test.ts',
  'test/contract/**/*.test.ts',
];
// hardening.test.ts: its sandboxes' socket timeouts once never fired in a shared worker on Node 22
// (a connection that sent nothing stayed open for 60 s) and always do in a worker of their own.
// raw.test.ts mocks the CSV conversion (vi.mock) to count it; batch-line-sort.test.ts the line sort;
// journal-sync.test.ts and batch-journal-sync.test.ts node:fs's fsyncSync.
const ISOLATED = [
  'test/unit/jobs/push/journal-sync.test.ts',
  'test/unit/jobs/push/batch-journal-sync.test.ts',
  'test/unit/io/safe-file.test.ts',
  'test/contract/hardening.test.ts',
  'test/unit/jobs/delta/raw.test.ts',
  'test/unit/jobs/push/batch-line-sort.test.ts',
];

export default defineConfig({
  test: {
    environment: 'node',
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    setupFiles: ['test/setup/scratch.ts'],
    reporters: reporters(),
    // e2e tests spawn the built binary and sandboxes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'shared', include: SHARED, exclude: ISOLATED, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
      {
        extends: true,
        test: {
          name: 'process',
          include: ['test/**/*.test.ts'],
          // The files spawn the binary and sandboxes and signal those, never their own worker.
          isolate: false,
          // test/release/ builds the release archives and installs the npm tarball: `npm run test:release`.
          exclude: [...SHARED, ...ISOLATED, 'test/bench/**', 'test/release/**', 'node_modules/**'],
        },
      },
    ],
  },
});
