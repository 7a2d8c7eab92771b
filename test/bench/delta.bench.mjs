/**
 * Benchmark of `customers batch --changed-only` (module contract: test/bench/README.md). A
 * generated two-file LMS export of about 1,000,000 payments (100,000 customers; 10x fewer with
 * --quick) is pushed with --full; then 1% of its customers change (their loan status) and the
 * changed export is pushed with --changed-only. Both pairs run twice: against a sandbox in another
 * process (which counts request bodies) and against the zero-cost stand-in service
 * (test/bench/stand-in.mjs, the client alone), each with a record of its own. Rows: the four
 * pushes, the ratio of each --changed-only push to its --full push in wall time, and in the notes
 * the client's CPU time (user + system: what a shared machine moves least) and its ratio, the
 * bytes sent and the load average when it ran. Figures only.
 */
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { startStandIn } from './stand-in.mjs';

const CHANGED_EVERY = 100; // 1% of customers

/** Flips the loan status of the first loan of every 100th customer of `from` into `to` (about 10 MB: read whole). */
async function changeOnePercent(root, from, to) {
  const { parse } = await import(join(root, 'node_modules/csv-parse/lib/sync.js'));
  const { stringify } = await import(join(root, 'node_modules/csv-stringify/lib/sync.js'));
  const rows = parse(readFileSync(from), { columns: true });
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
  writeFileSync(to, stringify(rows, { header: true, columns: Object.keys(rows[0]) }));
  return changed;
}

const cpu = (run) => (run.cpuSeconds === null ? '?' : `${run.cpuSeconds.toFixed(2)} s`);
const load = () => loadavg()[0].toFixed(2);
const mib = (n) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

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
  copyFileSync(join(tmpDir, 'loans.csv'), join(tmpDir, 'loans-before.csv'));
  const changed = await changeOnePercent(root, join(tmpDir, 'loans.csv'), join(tmpDir, 'loans-after.csv'));
  const args = (loans, mode) => [
    'customers',
    'batch',
    '--loans',
    loans,
    '--payments',
    'payments.csv',
    '--mapping',
    mapping,
    '-o',
    'json',
    mode,
  ];

  /** The --full push of the export, then the --changed-only push of it with 1% changed; `sent()` counts request bytes. */
  async function pair(service, env, sent) {
    log(`delta (${service}): customers batch --full`);
    const before = await sent();
    const fullLoad = load();
    const full = await runCli(args('loans-before.csv', '--full'), { cwd: tmpDir, env });
    if (full.code !== 0) throw new Error(`--full push exited ${full.code}: ${full.stderr.slice(-1000)}`);
    const middle = await sent();
    log(`delta (${service}): ${changed} customers changed; customers batch --changed-only`);
    const deltaLoad = load();
    const delta = await runCli(args('loans-after.csv', '--changed-only'), { cwd: tmpDir, env });
    if (delta.code !== 0) throw new Error(`--changed-only push exited ${delta.code}: ${delta.stderr.slice(-1000)}`);
    const after = await sent();
    return {
      full,
      delta,
      fullLoad,
      deltaLoad,
      fullBytes: middle - before,
      deltaBytes: after - middle,
      fullSummary: JSON.parse(full.stdout),
      deltaSummary: JSON.parse(delta.stdout),
    };
  }

  const sandbox = await startSandbox();
  let onSandbox;
  try {
    const stats = async () =>
      (
        await (
          await fetch(`${sandbox.baseUrl}/_sandbox/stats`, {
            headers: { authorization: `Bearer ${sandbox.adminToken}` },
          })
        ).json()
      ).requests.body_bytes;
    onSandbox = await pair('sandbox', { LEADCTL_STATE_DIR: join(tmpDir, 'state-sandbox'), ...sandbox.env }, stats);
  } finally {
    await sandbox.stop();
  }

  const standIn = await startStandIn({ configDir: join(tmpDir, 'config-stand-in') });
  let alone;
  try {
    alone = await pair(
      'stand-in',
      { LEADCTL_STATE_DIR: join(tmpDir, 'state-stand-in'), ...standIn.env },
      async () => standIn.counts().bodyBytes,
    );
  } finally {
    await standIn.stop();
  }

  const rowsOf = (label, p) => [
    {
      name: `customers batch --full, two files, ${label}`,
      rows,
      seconds: p.full.seconds,
      cpuSeconds: p.full.cpuSeconds,
      rowsPerSec: rows / p.full.seconds,
      ratio: 1,
      ratioTo: `the --full push (${label})`,
      peakRssMb: p.full.peakRssMb,
      note: `${shape}; sent ${p.fullSummary.customers.sent.toLocaleString('en-US')} customers, ${mib(p.fullBytes)} of request bodies; client CPU ${cpu(p.full)}; load average ${p.fullLoad}`,
    },
    {
      name: `customers batch --changed-only, 1% changed, ${label}`,
      rows,
      seconds: p.delta.seconds,
      cpuSeconds: p.delta.cpuSeconds,
      rowsPerSec: rows / p.delta.seconds,
      // A time: lower is better (seconds ÷ the full push's seconds).
      ratio: p.delta.seconds / p.full.seconds,
      ratioTo: `the --full push (${label}, time)`,
      goal: label === 'sandbox' ? '<= 0.25x time, <= 0.05x bytes' : '<= 0.125x time',
      peakRssMb: p.delta.peakRssMb,
      note: `${changed.toLocaleString('en-US')} customers changed; sent ${p.deltaSummary.customers.sent.toLocaleString('en-US')} customers (${p.deltaSummary.customers.unchanged.toLocaleString('en-US')} unchanged), ${mib(p.deltaBytes)} of request bodies: ${(p.fullBytes / Math.max(1, p.deltaBytes)).toFixed(0)}x fewer bytes; ${(p.full.seconds / p.delta.seconds).toFixed(1)}x faster in wall time, ${(p.full.cpuSeconds / p.delta.cpuSeconds).toFixed(1)}x less client CPU (${cpu(p.delta)} against ${cpu(p.full)}); load average ${p.deltaLoad}`,
    },
  ];
  return [...rowsOf('sandbox', onSandbox), ...rowsOf('zero-cost stand-in', alone)];
}
