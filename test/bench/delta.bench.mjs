/**
 * Benchmark of `customers batch --changed-only` (module contract: test/bench/README.md). A
 * generated two-file LMS export of about 1,000,000 payments (100,000 customers; 10x fewer with
 * --quick) is pushed with --full to a sandbox in another process; then 1% of its customers change
 * (their loan status) and the export is pushed again with --changed-only. Rows: both pushes, with
 * the bytes each sent (the sandbox counts request bodies), and the ratios of the second to the
 * first. Figures only.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CHANGED_EVERY = 100; // 1% of customers

/** Flips the loan status of the first loan of every 100th customer in loans.csv (about 10 MB: read whole). */
async function changeOnePercent(root, loansFile) {
  const { parse } = await import(join(root, 'node_modules/csv-parse/lib/sync.js'));
  const { stringify } = await import(join(root, 'node_modules/csv-stringify/lib/sync.js'));
  const rows = parse(readFileSync(loansFile), { columns: true });
  const seen = new Set();
  let changed = 0;
  for (const row of rows) {
    const customer = row['Cust No'];
    if (!seen.has(customer) && seen.size % CHANGED_EVERY === 0) {
      row['Loan Status'] = row['Loan Status'] === 'PIF' ? 'CUR' : 'PIF';
      changed++;
    }
    seen.add(customer);
  }
  writeFileSync(loansFile, stringify(rows, { header: true, columns: Object.keys(rows[0]) }));
  return changed;
}

export async function run({ quick, tmpDir, root, startSandbox, runCli, log }) {
  const customers = quick ? 10_000 : 100_000;
  const { writeExport } = await import(join(root, 'fixtures/lms/generate.mjs'));
  const mapping = join(root, 'fixtures/lms/mapping.json');
  log(`delta: generating a two-file export of ${customers.toLocaleString('en-US')} customers`);
  const counts = await writeExport({ out: tmpDir, customers, seed: 3, paymentsPerCustomer: 10, shapes: ['separate'] });
  const rows = counts.loans + counts.payments;
  const mb = ((statSync(join(tmpDir, 'loans.csv')).size + statSync(join(tmpDir, 'payments.csv')).size) / 1e6).toFixed(
    0,
  );
  const shape = `${counts.payments.toLocaleString('en-US')} payments, ${counts.customers.toLocaleString('en-US')} customers, ${mb} MB in two files`;
  const env = { LEADCTL_STATE_DIR: join(tmpDir, 'state') };
  const args = [
    'customers',
    'batch',
    '--loans',
    'loans.csv',
    '--payments',
    'payments.csv',
    '--mapping',
    mapping,
    '-o',
    'json',
  ];

  const sandbox = await startSandbox();
  const stats = async () =>
    (
      await (
        await fetch(`${sandbox.baseUrl}/_sandbox/stats`, { headers: { authorization: `Bearer ${sandbox.adminToken}` } })
      ).json()
    ).requests.body_bytes;
  let full;
  let delta;
  let changed;
  let fullBytes;
  let deltaBytes;
  try {
    const cliEnv = { ...env, ...sandbox.env };
    log('delta: customers batch --full');
    const before = await stats();
    full = await runCli([...args, '--full'], { cwd: tmpDir, env: cliEnv });
    if (full.code !== 0) throw new Error(`--full push exited ${full.code}: ${full.stderr.slice(-1000)}`);
    fullBytes = (await stats()) - before;

    changed = await changeOnePercent(root, join(tmpDir, 'loans.csv'));
    log(`delta: ${changed} customers changed; customers batch --changed-only`);
    const middle = await stats();
    delta = await runCli([...args, '--changed-only'], { cwd: tmpDir, env: cliEnv });
    if (delta.code !== 0) throw new Error(`--changed-only push exited ${delta.code}: ${delta.stderr.slice(-1000)}`);
    deltaBytes = (await stats()) - middle;
  } finally {
    await sandbox.stop();
  }
  const fullSummary = JSON.parse(full.stdout);
  const deltaSummary = JSON.parse(delta.stdout);
  const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return [
    {
      name: 'customers batch --full, two files',
      rows,
      seconds: full.seconds,
      rowsPerSec: rows / full.seconds,
      ratio: 1,
      ratioTo: 'the --full push',
      peakRssMb: full.peakRssMb,
      note: `${shape}; sent ${fullSummary.customers.sent.toLocaleString('en-US')} customers, ${mib(fullBytes)} of request bodies`,
    },
    {
      name: 'customers batch --changed-only, 1% changed',
      rows,
      seconds: delta.seconds,
      rowsPerSec: rows / delta.seconds,
      // A time: lower is better (seconds ÷ the full push's seconds).
      ratio: delta.seconds / full.seconds,
      ratioTo: 'the --full push (time)',
      goal: '<= 0.25x time, <= 0.05x bytes',
      peakRssMb: delta.peakRssMb,
      note: `${changed.toLocaleString('en-US')} customers changed; sent ${deltaSummary.customers.sent.toLocaleString('en-US')} customers (${deltaSummary.customers.unchanged.toLocaleString('en-US')} unchanged), ${mib(deltaBytes)} of request bodies: ${(fullBytes / Math.max(1, deltaBytes)).toFixed(0)}x fewer bytes, ${(full.seconds / delta.seconds).toFixed(1)}x faster`,
    },
  ];
}
