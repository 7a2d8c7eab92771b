/**
 * Benchmark of the nightly push (module contract: test/bench/README.md), on every export shape an
 * LMS writes. One generated set of customers (100,000 with about 1,000,000 payments; 10x fewer with
 * --quick), written in each shape:
 *   - one file with a row per payment (export.csv), sorted by customer, and shuffled;
 *   - two files (loans.csv + payments.csv), sorted, and shuffled;
 *   - NDJSON in the batch shape (customers.ndjson: a customer per line, the LMS's own keys).
 * For each shape, measured in this one run, each in its own process:
 *   - the reference: a plain csv-parse `columns: true` pass over the same bytes (for NDJSON, over
 *     the one-file CSV of the same records: there is no CSV of its bytes);
 *   - `customers batch --validate-only`;
 *   - a full `customers batch` to a sandbox in another process (a fresh one per push).
 * Then: the sandbox's own ceiling (ready-made bodies of the same customers, loans and payments,
 * posted with the push's concurrency), and a 50,000-customer push under injected faults.
 *
 * With `--scale` (npm run bench -- --scale): only the two-file push, at 1M, 2M and 5M payments,
 * with time per row and peak RSS for each (linear time and flat memory are the goals).
 *
 * Figures only: nothing here fails on a timing.
 */
import { createWriteStream, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStandIn } from './stand-in.mjs';

const REF = 'csv-parse columns:true';
// The shape the "what you would write instead" script reads (two files, as most LMSs export).
const REFERENCE_SHAPE = 'two files, sorted';
const VALIDATE_GOAL = '>= 1.0x';
const PUSH_GOAL = '>= 0.8x (or ceiling -10%), RSS <= 250 MB';

/** A csv-parse `columns: true` pass over one or more files in one process: the reference. */
function writeBaselineScript(tmpDir, root) {
  const script = join(tmpDir, 'csv-parse-pass.mjs');
  writeFileSync(
    script,
    `import { createReadStream } from 'node:fs';
import { parse } from ${JSON.stringify(join(root, 'node_modules/csv-parse/lib/index.js'))};
let n = 0;
for (const file of process.argv.slice(2)) {
  for await (const _ of createReadStream(file).pipe(parse({ columns: true }))) n++;
}
process.stdout.write(String(n));
`,
  );
  return script;
}

/** The same customers as NDJSON in the batch shape, keyed by the LMS's columns (the fixture mapping applies). */
async function writeNdjson(file, batchShapeLines, options) {
  const out = createWriteStream(file);
  const write = (text) => (out.write(text) ? undefined : new Promise((r) => out.once('drain', r)));
  for (const line of batchShapeLines(options)) await write(line + '\n');
  await new Promise((r) => out.end(r));
}

const bytesOf = (dir, files) => files.reduce((n, f) => n + statSync(join(dir, f)).size, 0);
const mb = (bytes) => `${(bytes / 1e6).toFixed(0)} MB`;
const count = (n) => n.toLocaleString('en-US');
const cpu = (run) => (run.cpuSeconds === null ? '?' : `${run.cpuSeconds.toFixed(2)} s`);

/** A full push to a fresh sandbox; returns the run, its summary and the sandbox's peak RSS. */
async function pushToSandbox({ startSandbox, runCli }, cliArgs, cwd, env, sandboxArgs = []) {
  const sandbox = await startSandbox(sandboxArgs);
  let push;
  let sandboxRss = null;
  try {
    push = await runCli(['customers', 'batch', ...cliArgs, '-o', 'json'], { cwd, env: { ...env, ...sandbox.env } });
  } finally {
    sandboxRss = (await sandbox.stop()).peakRssMb;
  }
  if (push.code !== 0) throw new Error(`push (${cliArgs.join(' ')}) exited ${push.code}: ${push.stderr.slice(-1000)}`);
  return { push, summary: JSON.parse(push.stdout), sandboxRss };
}

/**
 * A full push to the zero-cost stand-in service (test/bench/stand-in.mjs, in this process): the
 * client alone. `command` is the node arguments (leadctl's or the reference script's).
 */
async function pushToStandIn(runNode, nodeArgs, cwd, env) {
  const standIn = await startStandIn({ configDir: env.LEADCTL_CONFIG_DIR });
  try {
    const push = await runNode(nodeArgs, { cwd, env: { ...env, ...standIn.env } });
    if (push.code !== 0)
      throw new Error(`push (${nodeArgs.join(' ')}) exited ${push.code}: ${push.stderr.slice(-1000)}`);
    return { push, summary: JSON.parse(push.stdout), ...standIn.counts() };
  } finally {
    await standIn.stop();
  }
}

/** Request bodies like the push's: `customers` customers of `loans`/`payments` records in all, 1000 per body. */
export function* sandboxBodies(customers, loans, payments, prefix) {
  const loansPer = loans / customers;
  const paymentsPer = payments / loans;
  // Rounded over every loan so far, not a customer's own: the bodies carry exactly `payments` (2% fewer before).
  let loan = 0;
  const paymentsOf = () => Math.round(paymentsPer * (loan + 1)) - Math.round(paymentsPer * loan++);
  for (let start = 0; start < customers; start += 1000) {
    const list = [];
    for (let i = start; i < Math.min(customers, start + 1000); i++) {
      const loanCount = Math.max(1, Math.round(loansPer * (i + 1)) - Math.round(loansPer * i));
      list.push({
        customer_id: `${prefix}${i}`,
        loans: Array.from({ length: loanCount }, (_, l) => ({
          loan_id: `L${l}`,
          lead_id: 123456,
          management_system_id: 7,
          is_lead_loan: l === 0,
          application_type: 'New',
          loan_type: 'Installment',
          loan_status: 'Current',
          loan_amount: 100000,
          funded_amount: 99500,
          first_payment_date: '2026-01-16',
          applied_at: '2026-01-02T03:04:05Z',
          esigned_at: '2026-01-02T04:04:05Z',
          originated_at: '2026-01-02T05:04:05Z',
          payments: Array.from({ length: paymentsOf() }, (_, p) => ({
            payment_id: `P${p}`,
            payment_amount: 12345,
            payment_type: 'Payment',
            payment_mode: 'ACH',
            payment_status: 'Paid',
            principal: 10000,
            interest: 2000,
            fees: 345,
            payment_at: '2026-11-21T00:05:00Z',
          })),
        })),
      });
    }
    yield JSON.stringify({ customers: list });
  }
}

/** The sandbox alone: ready-made bodies posted 4 at a time (the push's default concurrency). */
export async function sandboxCeiling(startSandbox, counts) {
  const server = await startSandbox();
  let seconds;
  let requests = 0;
  let peakRssMb = null;
  try {
    const tokenRes = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: server.clientId,
        client_secret: server.clientSecret,
      }),
    });
    if (!tokenRes.ok) throw new Error(`token request answered ${tokenRes.status}`);
    const { access_token: token } = await tokenRes.json();
    let sentLoans = 0;
    let sentPayments = 0;
    const bodies = [...sandboxBodies(counts.customers, counts.loans, counts.payments, 'S')].map((b) => {
      sentLoans += b.split('"loan_id"').length - 1;
      sentPayments += b.split('"payment_id"').length - 1;
      return Buffer.from(b);
    });
    requests = bodies.length;
    const t0 = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < bodies.length) {
        const body = bodies[next];
        bodies[next++] = undefined;
        const res = await fetch(`${server.baseUrl}/api/v1/loan-performance/batches/customers`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body,
        });
        if (!res.ok) throw new Error(`batch request answered ${res.status}`);
        await res.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    seconds = (performance.now() - t0) / 1000;
    // A ceiling of bodies the sandbox skipped would measure a sandbox that stores nothing.
    const stored = await (
      await fetch(`${server.baseUrl}/_sandbox/stats`, { headers: { authorization: `Bearer ${server.adminToken}` } })
    ).json();
    if (stored.loans !== sentLoans || stored.payments !== sentPayments) {
      throw new Error(
        `the sandbox stored ${stored.loans} loans and ${stored.payments} payments of the ceiling's ${sentLoans} and ${sentPayments}: its bodies are not valid`,
      );
    }
  } finally {
    peakRssMb = (await server.stop()).peakRssMb;
  }
  return { seconds, requests, peakRssMb };
}

export async function run(context) {
  if (context.scale) return runScale(context);
  const { quick, tmpDir, root, startSandbox, runNode, runCli, log } = context;
  const customers = quick ? 10_000 : 100_000;
  const generator = await import(join(root, 'fixtures/lms/generate.mjs'));
  const { writeExport, batchShapeLines } = generator;
  const mapping = join(root, 'fixtures/lms/mapping.json');
  const sortedDir = join(tmpDir, 'sorted');
  const shuffledDir = join(tmpDir, 'shuffled');
  log(`generating ${count(customers)} customers in every shape`);
  const counts = await writeExport({ out: sortedDir, customers, seed: 1, paymentsPerCustomer: 10 });
  await writeExport({ out: shuffledDir, customers, seed: 1, paymentsPerCustomer: 10, shuffle: true });
  await writeNdjson(join(sortedDir, 'customers.ndjson'), batchShapeLines, {
    customers,
    seed: 1,
    paymentsPerCustomer: 10,
  });
  const records = `${count(counts.customers)} customers, ${count(counts.loans)} loans, ${count(counts.payments)} payments`;

  const baseline = writeBaselineScript(tmpDir, root);
  const env = { LEADCTL_STATE_DIR: join(tmpDir, 'state'), LEADCTL_CONFIG_DIR: join(tmpDir, 'config') };
  const twoFiles = ['--loans', 'loans.csv', '--payments', 'payments.csv'];
  const shapes = [
    { name: 'one file, sorted', dir: sortedDir, files: ['export.csv'], args: ['export.csv'], rows: counts.rows },
    { name: 'one file, shuffled', dir: shuffledDir, files: ['export.csv'], args: ['export.csv'], rows: counts.rows },
    {
      name: 'two files, sorted',
      dir: sortedDir,
      files: ['loans.csv', 'payments.csv'],
      args: twoFiles,
      rows: counts.loans + counts.payments,
    },
    {
      name: 'two files, shuffled',
      dir: shuffledDir,
      files: ['loans.csv', 'payments.csv'],
      args: twoFiles,
      rows: counts.loans + counts.payments,
    },
    {
      name: 'NDJSON batch shape',
      dir: sortedDir,
      files: ['customers.ndjson'],
      refFiles: ['export.csv'],
      args: ['customers.ndjson'],
      rows: counts.rows,
    },
  ];

  const out = [];
  const pushes = [];
  for (const shape of shapes) {
    const refFiles = shape.refFiles ?? shape.files;
    log(`${shape.name}: csv-parse pass`);
    const base = await runNode([baseline, ...refFiles.map((f) => join(shape.dir, f))]);
    if (base.code !== 0) throw new Error(`csv-parse pass exited ${base.code}: ${base.stderr.slice(0, 500)}`);
    const refRows = Number(base.stdout);
    const input = `${shape.files.join(' + ')}, ${mb(bytesOf(shape.dir, shape.files))}`;
    out.push({
      name: `${shape.name}: csv-parse columns:true pass`,
      rows: refRows,
      seconds: base.seconds,
      rowsPerSec: refRows / base.seconds,
      ratio: 1,
      ratioTo: REF,
      peakRssMb: base.peakRssMb,
      note: shape.refFiles
        ? `over ${refFiles.join(' + ')} (${mb(bytesOf(shape.dir, refFiles))}): the same records as CSV`
        : `${input}: ${records}`,
    });
    // Same records, same bytes: the ratio is the reference's time over this one's.
    const ratio = (seconds) => base.seconds / seconds;

    log(`${shape.name}: customers batch --validate-only`);
    const validate = await runCli(
      ['customers', 'batch', ...shape.args, '--mapping', mapping, '--validate-only', '-o', 'json'],
      { cwd: shape.dir, env },
    );
    if (validate.code !== 0)
      throw new Error(`validate-only (${shape.name}) exited ${validate.code}: ${validate.stderr.slice(-1000)}`);
    const checked = JSON.parse(validate.stdout);
    out.push({
      name: `${shape.name}: --validate-only`,
      rows: shape.rows,
      seconds: validate.seconds,
      rowsPerSec: shape.rows / validate.seconds,
      ratio: ratio(validate.seconds),
      ratioTo: REF,
      goal: VALIDATE_GOAL,
      peakRssMb: validate.peakRssMb,
      note: `${shape.refFiles ? `${input}; ` : ''}${count(checked.customers.valid ?? checked.customers.accepted ?? 0)} customers valid${checked.notes?.length ? `; ${checked.notes.join('; ')}` : ''}`,
    });

    log(`${shape.name}: customers batch to a sandbox`);
    const { push, summary, sandboxRss } = await pushToSandbox(
      { startSandbox, runCli },
      [...shape.args, '--mapping', mapping],
      shape.dir,
      env,
    );
    const row = {
      name: `${shape.name}: full push`,
      rows: shape.rows,
      seconds: push.seconds,
      rowsPerSec: shape.rows / push.seconds,
      ratio: ratio(push.seconds),
      ratioTo: REF,
      goal: PUSH_GOAL,
      peakRssMb: push.peakRssMb,
      note: `${summary.requests.sent} requests, ${summary.retries} retries, ${count(summary.customers.accepted)} customers accepted; sandbox peak RSS ${sandboxRss?.toFixed(0) ?? '?'} MB`,
    };
    pushes.push({ row, base });
    out.push(row);

    log(`${shape.name}: customers batch to the zero-cost stand-in`);
    const alone = await pushToStandIn(
      runNode,
      [context.bin, 'customers', 'batch', ...shape.args, '--mapping', mapping, '-o', 'json'],
      shape.dir,
      { ...env, LEADCTL_STATE_DIR: join(tmpDir, 'state-stand-in') },
    );
    out.push({
      name: `${shape.name}: full push, zero-cost service`,
      rows: shape.rows,
      seconds: alone.push.seconds,
      rowsPerSec: shape.rows / alone.push.seconds,
      ratio: ratio(alone.push.seconds),
      ratioTo: REF,
      goal: PUSH_GOAL,
      peakRssMb: alone.push.peakRssMb,
      note: `the client alone: ${alone.requests - 1} batch requests, ${mb(alone.bodyBytes)} of bodies read and answered {}; ${(push.seconds / alone.push.seconds).toFixed(2)}x the speed of the push to the sandbox; client CPU ${cpu(alone.push)} (to the sandbox: ${cpu(push)})`,
    });

    if (shape.name === REFERENCE_SHAPE) {
      log(`${shape.name}: what you would write instead (csv-parse + luxon + fetch) to the stand-in`);
      const instead = await pushToStandIn(
        runNode,
        [join(root, 'test/bench/write-instead.mjs'), ...twoFiles, '--mapping', mapping],
        shape.dir,
        env,
      );
      if (instead.summary.payments !== counts.payments || instead.summary.loans !== counts.loans)
        throw new Error(`write-instead.mjs sent ${JSON.stringify(instead.summary)} of ${records}`);
      out.push({
        name: `${shape.name}: what you would write instead, zero-cost service`,
        rows: shape.rows,
        seconds: instead.push.seconds,
        rowsPerSec: shape.rows / instead.push.seconds,
        ratio: ratio(instead.push.seconds),
        ratioTo: REF,
        peakRssMb: instead.push.peakRssMb,
        note: `test/bench/write-instead.mjs (csv-parse columns:true + luxon + fetch, the same conversions, no checks): ${instead.summary.requests} requests, ${mb(instead.bodyBytes)} of bodies; leadctl's push to the same service was ${(instead.push.seconds / alone.push.seconds).toFixed(2)}x faster and used ${(instead.push.cpuSeconds / alone.push.cpuSeconds).toFixed(2)}x less CPU (${cpu(instead.push)} against ${cpu(alone.push)})`,
      });
    }
  }

  // The sandbox's own ceiling: the same numbers of customers, loans and payments, in ready-made bodies.
  log('the sandbox alone: ready-made batch bodies');
  const ceiling = await sandboxCeiling(startSandbox, counts);
  out.push({
    name: 'sandbox alone (server ceiling for a push)',
    rows: counts.rows,
    seconds: ceiling.seconds,
    rowsPerSec: counts.rows / ceiling.seconds,
    ratio: shapes[0] && out[0] ? out[0].seconds / ceiling.seconds : null,
    ratioTo: `${REF} (one file, sorted)`,
    peakRssMb: ceiling.peakRssMb,
    note: `${ceiling.requests} ready-made bodies (${records}), 4 in flight: the sandbox's JSON parsing, validation and SQLite writes; no push can beat this. RSS is the sandbox's`,
  });
  for (const { row } of pushes)
    row.note += `; ${((ceiling.seconds / row.seconds) * 100).toFixed(0)}% of the sandbox ceiling's speed`;

  // A push under injected faults (503s and dropped connections): retries must not cost memory.
  const faultCustomers = quick ? 5_000 : 50_000;
  log(`${count(faultCustomers)} customers under injected faults`);
  const faultDir = join(tmpDir, 'faults');
  const faultCounts = await writeExport({
    out: faultDir,
    customers: faultCustomers,
    seed: 2,
    paymentsPerCustomer: 10,
    shapes: ['denormalised'],
  });
  const faults = ['--fail-rate', '0.1', '--reset-rate', '0.02', '--random-seed', '42'];
  const faulted = await pushToSandbox(
    { startSandbox, runCli },
    ['export.csv', '--mapping', mapping, '--chunk-size', '250'],
    faultDir,
    env,
    faults,
  );
  out.push({
    name: `one file, sorted: full push under faults`,
    rows: faultCounts.rows,
    seconds: faulted.push.seconds,
    rowsPerSec: faultCounts.rows / faulted.push.seconds,
    ratio: null,
    ratioTo: null,
    goal: 'RSS <= 250 MB',
    peakRssMb: faulted.push.peakRssMb,
    note: `${count(faultCustomers)} customers, --chunk-size 250; sandbox ${faults.join(' ')}: ${faulted.summary.requests.sent} requests, ${faulted.summary.retries} retries, ${count(faulted.summary.customers.accepted)} accepted, ${faulted.summary.customers.not_sent ?? 0} not sent`,
  });
  return out;
}

/** `--scale`: the two-file push at 1M, 2M and 5M payments (100k, 200k, 500k customers); 10x fewer with --quick. */
async function runScale({ quick, tmpDir, root, startSandbox, runNode, runCli, log }) {
  const { writeExport } = await import(join(root, 'fixtures/lms/generate.mjs'));
  const mapping = join(root, 'fixtures/lms/mapping.json');
  const baseline = writeBaselineScript(tmpDir, root);
  const env = { LEADCTL_STATE_DIR: join(tmpDir, 'state'), LEADCTL_CONFIG_DIR: join(tmpDir, 'config') };
  const out = [];
  let first;
  for (const millions of [1, 2, 5]) {
    const customers = (millions * 100_000) / (quick ? 10 : 1);
    const dir = join(tmpDir, `scale-${millions}`);
    log(`scale: generating ${count(customers)} customers (two files)`);
    const counts = await writeExport({
      out: dir,
      customers,
      seed: millions,
      paymentsPerCustomer: 10,
      shapes: ['separate'],
    });
    const rows = counts.loans + counts.payments;
    const base = await runNode([baseline, join(dir, 'loans.csv'), join(dir, 'payments.csv')]);
    if (base.code !== 0) throw new Error(`csv-parse pass exited ${base.code}: ${base.stderr.slice(0, 500)}`);
    log(`scale: two-file push of ${count(counts.payments)} payments`);
    const { push, summary, sandboxRss } = await pushToSandbox(
      { startSandbox, runCli },
      ['--loans', 'loans.csv', '--payments', 'payments.csv', '--mapping', mapping],
      dir,
      env,
    );
    const usPerRow = (push.seconds / rows) * 1e6;
    first ??= { usPerRow, rss: push.peakRssMb };
    out.push({
      name: `scale: two files, ${count(counts.payments)} payments: full push`,
      rows,
      seconds: push.seconds,
      rowsPerSec: rows / push.seconds,
      ratio: base.seconds / push.seconds,
      ratioTo: REF,
      goal: 'time/row and RSS flat',
      peakRssMb: push.peakRssMb,
      note: `${usPerRow.toFixed(2)} µs/row (${((usPerRow / first.usPerRow) * 100).toFixed(0)}% of the first), RSS ${((push.peakRssMb / first.rss) * 100).toFixed(0)}% of the first; ${summary.requests.sent} requests; ${mb(bytesOf(dir, ['loans.csv', 'payments.csv']))}; sandbox peak RSS ${sandboxRss?.toFixed(0) ?? '?'} MB`,
    });
    const { rmSync } = await import('node:fs');
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stderr.write('run through test/bench/run.mjs: node test/bench/run.mjs --only push [--quick] [--scale]\n');
}
