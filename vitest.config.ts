import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/release/ builds the release archives and installs the npm tarball: `npm run test:release`.
    exclude: ['test/bench/**', 'test/release/**', 'node_modules/**'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e tests spawn the built binary and sandboxes; two cores, so keep parallelism modest.
    maxWorkers: 2,
  },
});
