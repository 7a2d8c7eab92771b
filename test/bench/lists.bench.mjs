#!/usr/bin/env node
/**
 * Benchmark of `leadctl lists create` (module contract: test/bench/README.md). A generated file of
 * 1,000,000 SSNs (100,000 with --quick; 5% invalid, 10% duplicates, half typed with dashes),
 * measured in this one run, each in its own child process so its peak RSS is its own:
 *   - the reference: read the file and test each line against an SSN regex (the floor);
 *   - a plain csv-parse `columns: true` pass over the same file (the CLI rows' notes give that ratio too);
 *   - `lists create --validate-only --skip-invalid`;
 *   - `lists create --skip-invalid` uploading to a sandbox in another process.
 * Figures only. The upload row's note says how long the sandbox alone takes to store the same
 * values, so that nobody optimises the wrong side.
 *
 * Standalone: `node test/bench/lists.bench.mjs [--quick] [--json]` (after `npm run build`) runs
 * this module alone through run.mjs (`--only lists`).
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// Cheap measurements are repeated and the median kept: the cores are often shared.
const REPEATS = 3;
const n = (value) => Number(value).toLocaleString('en-US');

export async function run({ quick, tmpDir, root, startSandbox, runNode, runCli, log }) {
  const rows = quick ? 100_000 : 1_000_000;
  const file = join(tmpDir, 'ssns.csv');
  log(`generating ${rows.toLocaleString('en-US')} SSNs`);
  const generated = await generate(file, rows);
  const shape = `${(generated.bytes / 1e6).toFixed(1)} MB; ${generated.invalid.toLocaleString('en-US')} invalid, about ${generated.duplicates.toLocaleString('en-US')} duplicates; median of ${REPEATS}`;

  const baselineScript = join(tmpDir, 'read-regex-pass.mjs');
  writeFileSync(
    baselineScript,
    `import { createReadStream } from 'node:fs';
const re = /^\\d{3}-?\\d{2}-?\\d{4}$/;
let carry = '';
let matched = 0;
for await (const chunk of createReadStream(process.argv[2], { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
  const lines = (carry + chunk).split('\\n');
  carry = lines.pop();
  for (const line of lines) if (re.test(line)) matched++;
}
if (carry && re.test(carry)) matched++;
process.stdout.write(String(matched));
`,
  );
  log('read + regex pass');
  const base = await median(() => checked('read + regex pass', runNode([baselineScript, file])));
  const baseRate = rows / base.seconds;
  const out = [
    {
      name: 'SSN list: read + regex pass',
      rows,
      seconds: base.seconds,
      rowsPerSec: baseRate,
      ratio: 1,
      ratioTo: 'read + regex',
      peakRssMb: base.peakRssMb,
      note: shape,
    },
  ];

  // The issue also asks for the ratio to a plain csv-parse pass over the same file: a row, and a note on each CLI row.
  const csvScript = join(tmpDir, 'csv-parse-pass.mjs');
  writeFileSync(
    csvScript,
    `import { createReadStream } from 'node:fs';
import { parse } from ${JSON.stringify(join(root, 'node_modules/csv-parse/lib/index.js'))};
let n = 0;
for await (const _ of createReadStream(process.argv[2]).pipe(parse({ columns: true }))) n++;
process.stdout.write(String(n));
`,
  );
  log('csv-parse columns:true pass');
  const csv = await median(() => checked('csv-parse pass', runNode([csvScript, file])));
  const csvRate = rows / csv.seconds;
  out.push({
    name: 'SSN list: csv-parse columns:true pass',
    rows,
    seconds: csv.seconds,
    rowsPerSec: csvRate,
    ratio: csvRate / baseRate,
    ratioTo: 'read + regex',
    peakRssMb: csv.peakRssMb,
    note: `the same file; median of ${REPEATS}`,
  });
  const vsCsv = (seconds) => `${(rows / seconds / csvRate).toFixed(2)}x a csv-parse pass`;

  const listArgs = [
    'lists',
    'create',
    '--name',
    'bench',
    '--type',
    'ssn',
    '--skip-invalid',
    '--quiet',
    '-o',
    'json',
    file,
  ];
  const env = { LEADCTL_CONFIG_DIR: join(tmpDir, 'config') };
  log('lists create --validate-only');
  const validate = await median(() =>
    checked('lists create --validate-only', runCli([...listArgs, '--validate-only'], { env })),
  );
  const summary = JSON.parse(validate.stdout);
  out.push({
    name: 'lists create --validate-only',
    rows,
    seconds: validate.seconds,
    rowsPerSec: rows / validate.seconds,
    ratio: rows / validate.seconds / baseRate,
    ratioTo: 'read + regex',
    goal: '>= 0.25x',
    peakRssMb: validate.peakRssMb,
    note: `${vsCsv(validate.seconds)}; exit ${validate.code}: ${n(summary.valid)} valid (${n(summary.normalised)} normalised), ${n(summary.duplicates)} duplicates, ${n(summary.rejected)} rejected, ${n(summary.distinct)} distinct`,
  });

  log('lists create uploading to a sandbox');
  const sandbox = await startSandbox();
  let upload;
  let direct;
  let sandboxRss = null;
  try {
    upload = await checked('lists create (upload)', runCli(listArgs, { env: sandbox.env }));
    direct = await postDirectly(sandbox, file);
  } finally {
    sandboxRss = (await sandbox.stop()).peakRssMb;
  }
  const uploaded = JSON.parse(upload.stdout).uploaded;
  out.push({
    name: 'lists create (upload to a sandbox)',
    rows,
    seconds: upload.seconds,
    rowsPerSec: rows / upload.seconds,
    ratio: rows / upload.seconds / baseRate,
    ratioTo: 'read + regex',
    peakRssMb: upload.peakRssMb,
    note: `${vsCsv(upload.seconds)}; ${uploaded.toLocaleString('en-US')} values sent; the sandbox alone takes ${direct.seconds.toFixed(2)} s to store them (one POST of the same values, HTTP ${direct.status}); sandbox peak RSS ${sandboxRss?.toFixed(0) ?? '?'} MB`,
  });
  return out;
}

/** A measured run must end in 0 (or 4: some rows skipped, which the generated file has by design). */
async function checked(what, running) {
  const r = await running;
  if (r.code !== 0 && r.code !== 4) throw new Error(`${what} exited ${r.code}: ${(r.stderr || r.stdout).slice(-1000)}`);
  return r;
}

async function median(measure) {
  const results = [];
  for (let i = 0; i < REPEATS; i++) results.push(await measure());
  results.sort((a, b) => a.seconds - b.seconds);
  return results[Math.floor(REPEATS / 2)];
}

/** The sandbox's share: the same distinct valid values in one POST, without leadctl. */
async function postDirectly(sandbox, file) {
  const valid = /^(?!000|666|9)\d{3}(?!00)\d{2}(?!0000)\d{4}$/;
  const items = [
    ...new Set(
      readFileSync(file, 'utf8')
        .split('\n')
        .map((l) => l.replace(/-/g, ''))
        .filter((v) => valid.test(v)),
    ),
  ];
  const token = await fetch(`${sandbox.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: sandbox.clientId,
      client_secret: sandbox.clientSecret,
    }),
  }).then((r) => r.json());
  const body = JSON.stringify({ name: 'bench direct', type: 'Social Security Numbers', list: items });
  const started = performance.now();
  const res = await fetch(`${sandbox.baseUrl}/api/v1/lead-management/lists`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token.access_token}`,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body,
  });
  await res.arrayBuffer();
  return { seconds: (performance.now() - started) / 1000, status: res.status };
}

/** Deterministic data (a linear congruential generator), so runs compare. */
async function generate(file, rows) {
  let seed = 42;
  const random = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 4294967296;
  };
  const validSsn = () => {
    const area = 1 + Math.floor(random() * 665); // 001-665: never 000, 666 or 9xx
    const group = 1 + Math.floor(random() * 99);
    const serial = 1 + Math.floor(random() * 9999);
    return String(area).padStart(3, '0') + String(group).padStart(2, '0') + String(serial).padStart(4, '0');
  };
  const invalidSsn = () => {
    const kind = Math.floor(random() * 4);
    if (kind === 0) return '000' + validSsn().slice(3);
    if (kind === 1) return '9' + validSsn().slice(1);
    if (kind === 2) return validSsn().slice(1); // 8 digits
    return validSsn().slice(0, 5) + 'X' + validSsn().slice(6);
  };
  const format = (ssn) => (random() < 0.5 ? `${ssn.slice(0, 3)}-${ssn.slice(3, 5)}-${ssn.slice(5)}` : ssn);
  const out = createWriteStream(file);
  const seen = [];
  let invalid = 0;
  let duplicates = 0;
  let bytes = 0;
  let chunk = 'SSN\n';
  for (let i = 0; i < rows; i++) {
    const r = random();
    let value;
    if (r < 0.05) {
      value = invalidSsn();
      invalid++;
    } else if (r < 0.15 && seen.length > 0) {
      value = seen[Math.floor(random() * seen.length)];
      duplicates++;
    } else {
      value = validSsn();
      if (seen.length < 200_000) seen.push(value);
    }
    chunk += format(value) + '\n';
    if (chunk.length > 1 << 16) {
      bytes += chunk.length;
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  bytes += chunk.length;
  out.end(chunk);
  await once(out, 'finish');
  // Random picks can collide with earlier valid values too: the CLI's own counts are the truth.
  return { invalid, duplicates, bytes };
}

// Run directly: the harness with this module alone (nothing happens when run.mjs imports it).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const harness = fileURLToPath(new URL('./run.mjs', import.meta.url));
  const forwarded = process.argv.slice(2).filter((a) => a === '--quick' || a === '--json');
  process.exitCode =
    spawnSync(process.execPath, [harness, '--only', 'lists', ...forwarded], { stdio: 'inherit' }).status ?? 1;
}
