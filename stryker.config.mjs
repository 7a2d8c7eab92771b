// Mutation testing (StrykerJS) over the folders whose tests must be strong: `npm run mutation`
// (all four, long) or `npm run mutation:quick` (the table reader and writer). Results in
// docs/development.md; the HTML report in reports/mutation/.
const folders = {
  table: 'src/ingest/table/**/*.ts',
  api: 'src/api/**/*.ts',
  delta: 'src/jobs/delta/**/*.ts',
  push: 'src/jobs/push/**/*.ts',
};
const only = process.env.MUTATE_FOLDERS?.split(',').filter(Boolean);

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'test/mutation/vitest.config.ts' },
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: only ? only.map((name) => folders[name]) : Object.values(folders),
  coverageAnalysis: 'perTest',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 2),
  timeoutMS: 20_000,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
