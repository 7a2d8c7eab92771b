// Run by `npm run build` after tsc: bundles tsc's output into dist/leadctl.js and its lazily
// loaded chunks (dist/chunk-*.js), dependencies included, which bin/start.js loads. Measured: a
// `customers batch --validate-only` of the fixture export costs ~30% less CPU than through
// dist/'s 200 modules and their packages' own files, most of it Node resolving and reading files
// one by one; every end-to-end test and every cron run pays that start-up (docs/development.md).
// better-sqlite3 stays a package: it loads a native addon from its own folder.
// The chunks sit directly in dist/, one folder below the package root like src/version.ts, which
// finds the installation's files from there.
import { readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));
for (const name of readdirSync(dist)) {
  if (/^(leadctl|chunk-.*)\.js(\.map)?$/.test(name)) rmSync(dist + name);
}
await build({
  input: { leadctl: `${dist}cli/main.js` },
  platform: 'node',
  external: [/^node:/, 'better-sqlite3'],
  logLevel: 'warn',
  // A module that some load lazily and main.js at once stays in the first chunk: as intended.
  checks: { ineffectiveDynamicImport: false },
  output: { dir: dist, format: 'esm', chunkFileNames: 'chunk-[hash].js', sourcemap: true },
});
