import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { reporters } from '../helpers/reporters.js';

// `npm run test:release`: the self-contained release and the npm tarball, built and installed as a
// server and a user would. Not part of `npm test` (docs/development.md says why): run once in CI, on
// the pinned Node 24, as its own step of .ci/run.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/release/**/*.test.ts'],
    environment: 'node',
    reporters: reporters(),
    pool: 'forks',
    // The two files build archives and install packages: one at a time on two cores.
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 1_200_000,
  },
});
