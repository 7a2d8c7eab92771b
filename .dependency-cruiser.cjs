/**
 * leadctl's layers, checked by `npm run check` (docs/development.md draws the same graph).
 * Each folder of src/ may import only the folders listed for it; everything may import the base
 * (errors.ts, io/, version.ts, suggest.ts, redact.ts), which imports nothing of the app. No cycles anywhere.
 */
const BASE = ['src/errors\\.ts$', 'src/io/', 'src/version\\.ts$', 'src/suggest\\.ts$', 'src/redact\\.ts$'];

/** folder -> the folders it may import besides itself and the base */
const ALLOWED = {
  cli: ['jobs', 'api', 'config', 'ingest', 'output', 'schema', 'sandbox/index\\.ts$'],
  jobs: ['api', 'config', 'ingest', 'output', 'schema', 'sandbox/index\\.ts$'],
  output: ['ingest', 'schema'],
  config: ['api', 'schema'],
  api: ['schema'],
  ingest: ['schema'],
  sandbox: ['schema'],
  schema: [],
  io: [],
};

const layerRules = Object.entries(ALLOWED).map(([folder, may]) => ({
  name: `layer-${folder}`,
  comment: `src/${folder}/ may import only ${may.length ? may.join(', ') : 'nothing of the app'} besides the base`,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: {
    path: '^src/',
    pathNot: [`^src/${folder}/`, ...BASE.map((b) => `^${b}`), ...may.map((m) => `^src/${m}`)],
  },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'a cycle between modules: one of them belongs lower, or a function should be passed in',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'base-imports-nothing',
      comment: 'errors.ts, io/, version.ts, suggest.ts and redact.ts are the base: they import nothing of the app but each other',
      severity: 'error',
      from: { path: BASE.map((b) => `^${b}`) },
      to: { path: '^src/', pathNot: BASE.map((b) => `^${b}`) },
    },
    {
      name: 'not-to-test',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^test/' },
    },
    {
      name: 'undici-by-its-parts',
      comment:
        "undici's code is imported by src/api/undici.ts alone, file by file (its index loads all of undici at start-up); elsewhere `import type` from 'undici'",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/api/undici\\.ts$' },
      to: { path: 'node_modules/undici/', dependencyTypesNot: ['type-only'] },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
