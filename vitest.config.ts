import { defineConfig } from 'vitest/config';

// Pure in-process tests (no spawned binary, no process-wide state): their workers run file after
// file without a fresh process and module graph each (about 2 s of start-up per file on a loaded
// 2-core machine). A unit file that mocks a module (vi.mock) or changes process-wide state goes
// in UNIT_ISOLATED instead.
const UNIT = ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts'];
const UNIT_ISOLATED = ['test/unit/io/safe-file.test.ts'];

export default defineConfig({
  test: {
    environment: 'node',
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e tests spawn the built binary and sandboxes; two cores, so keep parallelism modest.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT, exclude: UNIT_ISOLATED, isolate: false } },
      { extends: true, test: { name: 'unit-isolated', include: UNIT_ISOLATED } },
      {
        extends: true,
        test: {
          name: 'process',
          include: ['test/**/*.test.ts'],
          // test/release/ builds the release archives and installs the npm tarball: `npm run test:release`.
          exclude: [...UNIT, 'test/bench/**', 'test/release/**', 'node_modules/**'],
        },
      },
    ],
  },
});
