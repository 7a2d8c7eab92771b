#!/usr/bin/env node
/**
 * Benchmark of the one table reader (src/ingest/table/reader.ts) against csv-parse, the library it
 * stands in for (module contract: test/bench/README.md). A generated LMS payments file of about
 * 300,000 rows (30,000 with --quick; fixtures/lms/generate.mjs) is decoded once into 256 KiB text
 * chunks, then both parsers read the same chunks in ONE process, turn about, five times each:
 *   - TableReader, as every command uses it (arrays of cells, each record's own line ending);
 *   - csv-parse's streaming parser with the options that give the same rows (`record_delimiter`
 *     CRLF/LF/CR, `bom`, `relax_column_count`), fed the same chunks;
 *   - the same with `columns: true` (an object per row: the reference of the other benchmarks).
 * Both must give identical rows (a digest of every cell is compared), else the module throws.
 * The median of each is reported; the ratio is csv-parse's time over TableReader's (higher is
 * better for TableReader). This is the measurement the reader's doc comment cites.
 *
 * Standalone: `node test/bench/table-reader.bench.mjs [--quick] [--json]` (after `npm run build`).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileSync } from 'node:fs';

const REPEATS = 5;

export async function run({ quick, tmpDir, root, runNode, log }) {
  const customers = quick ? 3_000 : 30_000;
  const generator = await import(join(root, 'fixtures/lms/generate.mjs'));
  log(`generating ${customers.toLocaleString('en-US')} customers' payments`);
  const counts = await generator.writeExport({
    out: tmpDir,
    customers,
    seed: 1,
    paymentsPerCustomer: 10,
    shapes: ['separate'],
  });
  const file = join(tmpDir, 'payments.csv');
  const script = join(tmpDir, 'table-vs-csv-parse.mjs');
  writeFileSync(script, measureScript(root));
  log('TableReader and csv-parse, turn about, in one process');
  const r = await runNode([script, file, String(REPEATS)]);
  if (r.code !== 0) throw new Error(`the measuring process exited ${r.code}: ${r.stderr.slice(-1000)}`);
  const m = JSON.parse(r.stdout);
  const rows = m.rows;
  const shape = `${counts.payments.toLocaleString('en-US')} payments (${(m.chars / 1e6).toFixed(1)} M chars) read from memory; median of ${REPEATS}, one process`;
  return [
    {
      name: 'payments CSV: csv-parse stream (same rows)',
      rows,
      seconds: m.csvParse,
      rowsPerSec: rows / m.csvParse,
      ratio: 1,
      ratioTo: 'csv-parse',
      peakRssMb: r.peakRssMb,
      note: `${shape}; RSS is the process's, both parsers`,
    },
    {
      name: 'payments CSV: csv-parse columns:true',
      rows,
      seconds: m.csvParseColumns,
      rowsPerSec: rows / m.csvParseColumns,
      ratio: m.csvParse / m.csvParseColumns,
      ratioTo: 'csv-parse',
      peakRssMb: r.peakRssMb,
      note: 'an object per row keyed by the header (the reference of the other benchmarks)',
    },
    {
      name: 'payments CSV: TableReader',
      rows,
      seconds: m.tableReader,
      rowsPerSec: rows / m.tableReader,
      ratio: m.csvParse / m.tableReader,
      ratioTo: 'csv-parse',
      peakRssMb: r.peakRssMb,
      note: `${(m.csvParse / m.tableReader).toFixed(1)}x csv-parse's speed on the same chunks (${(m.csvParseColumns / m.tableReader).toFixed(1)}x with columns:true); identical rows (digest ${m.digest})`,
    },
  ];
}

function measureScript(root) {
  return `import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { parse } from ${JSON.stringify(join(root, 'node_modules/csv-parse/lib/index.js'))};
import { TableReader } from ${JSON.stringify(join(root, 'dist/ingest/table/reader.js'))};

const [file, repeats] = process.argv.slice(2);
const chunks = [];
for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 })) chunks.push(chunk);

function tableReader(digest) {
  const reader = new TableReader({ delimiter: ',', file });
  let rows = 0;
  const take = (cells) => {
    rows++;
    if (digest) digest.update(cells.join('\\u0000') + '\\u0001');
  };
  for (const chunk of chunks) reader.write(chunk, take);
  reader.end(take);
  return rows;
}

async function csvParse(digest, columns = false) {
  const parser = parse({ delimiter: ',', record_delimiter: ['\\r\\n', '\\n', '\\r'], bom: true, relax_column_count: true, columns });
  let rows = 0;
  const done = new Promise((resolve, reject) => {
    parser.on('readable', () => {
      let cells;
      while ((cells = parser.read()) !== null) {
        rows++;
        if (digest) digest.update(cells.join('\\u0000') + '\\u0001');
      }
    });
    parser.on('error', reject);
    parser.on('end', resolve);
  });
  // Fed as a file stream would feed it: the next chunk once the parser has room.
  for (const chunk of chunks) if (!parser.write(chunk)) await once(parser, 'drain');
  parser.end();
  await done;
  return rows;
}

const a = createHash('sha256');
const b = createHash('sha256');
const rows = tableReader(a);
const rowsB = await csvParse(b);
const digest = a.digest('hex');
if (rows !== rowsB || digest !== b.digest('hex')) {
  process.stderr.write('TableReader and csv-parse read different rows: ' + rows + ' vs ' + rowsB + '\\n');
  process.exit(1);
}
const times = { tableReader: [], csvParse: [], csvParseColumns: [] };
for (let i = 0; i < Number(repeats); i++) {
  let t = performance.now();
  tableReader();
  times.tableReader.push((performance.now() - t) / 1000);
  t = performance.now();
  await csvParse();
  times.csvParse.push((performance.now() - t) / 1000);
  t = performance.now();
  await csvParse(undefined, true);
  times.csvParseColumns.push((performance.now() - t) / 1000);
}
const median = (list) => list.sort((x, y) => x - y)[Math.floor(list.length / 2)];
process.stdout.write(JSON.stringify({
  rows,
  chars: chunks.reduce((n, c) => n + c.length, 0),
  digest: digest.slice(0, 12),
  tableReader: median(times.tableReader),
  csvParse: median(times.csvParse),
  csvParseColumns: median(times.csvParseColumns),
}));
`;
}

// Run directly: the harness with this module alone (nothing happens when run.mjs imports it).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const harness = fileURLToPath(new URL('./run.mjs', import.meta.url));
  const forwarded = process.argv.slice(2).filter((a) => a === '--quick' || a === '--json');
  process.exitCode =
    spawnSync(process.execPath, [harness, '--only', 'table-reader', ...forwarded], { stdio: 'inherit' }).status ?? 1;
}
