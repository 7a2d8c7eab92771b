/**
 * Benchmark of the nightly push (module contract: test/bench/README.md). A generated LMS export of
 * about 1,000,000 payments (100,000 customers; 10x fewer with --quick), one row per payment, in the
 * fixture's LMS format, measured in this one run:
 *   - the reference: a plain csv-parse `columns: true` pass over the same file;
 *   - `customers batch --validate-only` with the fixture mapping;
 *   - a full `customers batch` to a sandbox in another process.
 * Figures only. The last note says how much of the push is the sandbox parsing request bodies,
 * so that nobody optimises the wrong side.
 */
import { writeFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export async function run({ quick, tmpDir, root, startSandbox, runNode, runCli, log }) {
  const customers = quick ? 10_000 : 100_000;
  const { writeExport } = await import(join(root, 'fixtures/lms/generate.mjs'));
  const mapping = join(root, 'fixtures/lms/mapping.json');
  log(`generating an export of ${customers.toLocaleString('en-US')} customers`);
  const counts = await writeExport({ out: tmpDir, customers, seed: 1, paymentsPerCustomer: 10, shapes: ['denormalised'] });
  const file = join(tmpDir, 'export.csv');
  const mb = (statSync(file).size / 1e6).toFixed(0);
  const rows = counts.rows;
  const shape = `${rows.toLocaleString('en-US')} rows (${counts.payments.toLocaleString('en-US')} payments, ${counts.customers.toLocaleString('en-US')} customers), ${mb} MB`;

  // The reference, in its own process so its memory is its own.
  const baselineScript = join(tmpDir, 'csv-parse-pass.mjs');
  writeFileSync(
    baselineScript,
    `import { createReadStream } from 'node:fs';
import { parse } from ${JSON.stringify(join(root, 'node_modules/csv-parse/lib/index.js'))};
let n = 0;
for await (const _ of createReadStream(process.argv[2]).pipe(parse({ columns: true }))) n++;
process.stdout.write(String(n));
`,
  );
  log('csv-parse columns:true pass');
  const base = await runNode([baselineScript, file]);
  if (base.code !== 0) throw new Error(`csv-parse pass exited ${base.code}: ${base.stderr.slice(0, 500)}`);
  const baseRate = rows / base.seconds;
  const out = [
    { name: 'csv-parse columns:true pass', rows, seconds: base.seconds, rowsPerSec: baseRate, ratio: 1, ratioTo: 'csv-parse columns:true', peakRssMb: base.peakRssMb, note: shape },
  ];

  const env = { LEADCTL_STATE_DIR: join(tmpDir, 'state'), LEADCTL_CONFIG_DIR: join(tmpDir, 'config') };
  log('customers batch --validate-only');
  const validate = await runCli(['customers', 'batch', 'export.csv', '--mapping', mapping, '--validate-only', '-o', 'json'], { cwd: tmpDir, env });
  if (validate.code !== 0) throw new Error(`validate-only exited ${validate.code}: ${validate.stderr.slice(-1000)}`);
  out.push({
    name: 'customers batch --validate-only',
    rows,
    seconds: validate.seconds,
    rowsPerSec: rows / validate.seconds,
    ratio: rows / validate.seconds / baseRate,
    ratioTo: 'csv-parse columns:true',
    goal: '>= 0.8x, RSS < 400 MB',
    peakRssMb: validate.peakRssMb,
    note: 'sorted by customer, so streamed: mapping (dollars, codes, Chicago datetimes), checks, chunking',
  });

  // The same rows in scattered order take the other way in: staging in a temporary SQLite file.
  log('customers batch --validate-only on the rows shuffled (staged)');
  const shuffledDir = join(tmpDir, 'shuffled');
  await writeExport({ out: shuffledDir, customers, seed: 1, paymentsPerCustomer: 10, shapes: ['denormalised'], shuffle: true });
  const staged = await runCli(['customers', 'batch', 'export.csv', '--mapping', mapping, '--validate-only', '-o', 'json'], { cwd: shuffledDir, env });
  if (staged.code !== 0) throw new Error(`validate-only (shuffled) exited ${staged.code}: ${staged.stderr.slice(-1000)}`);
  out.push({
    name: 'customers batch --validate-only, rows shuffled',
    rows,
    seconds: staged.seconds,
    rowsPerSec: rows / staged.seconds,
    ratio: rows / staged.seconds / baseRate,
    ratioTo: 'csv-parse columns:true',
    goal: 'RSS < 400 MB',
    peakRssMb: staged.peakRssMb,
    note: 'any row order: staged in a temporary SQLite file and read back by customer',
  });

  log('customers batch to a sandbox');
  const sandbox = await startSandbox();
  let push;
  let sandboxRss = null;
  try {
    push = await runCli(['customers', 'batch', 'export.csv', '--mapping', mapping, '-o', 'json'], { cwd: tmpDir, env: { ...env, ...sandbox.env } });
  } finally {
    sandboxRss = (await sandbox.stop()).peakRssMb;
  }
  if (push.code !== 0) throw new Error(`push exited ${push.code}: ${push.stderr.slice(-1000)}`);
  const summary = JSON.parse(push.stdout);

  // The server's share: JSON.parse of bodies like the ones sent (the sandbox also validates and writes SQLite).
  const makeBody = (prefix) =>
    JSON.stringify({
      customers: Array.from({ length: 1000 }, (_, i) => ({
        customer_id: `${prefix}${i}`,
        loans: [{ loan_id: 'L', management_system_id: 7, is_lead_loan: true, loan_amount: 100000, applied_at: '2026-01-02T03:04:05Z', payments: Array.from({ length: 10 }, (_, p) => ({ payment_id: `P${p}`, payment_amount: 12345, payment_type: 'Payment', payment_mode: 'ACH', payment_status: 'Paid', principal: 10000, interest: 2000, fees: 345, payment_at: '2026-11-21T00:05:00Z' })) }],
      })),
    });
  const body = makeBody('');
  const started = performance.now();
  for (let i = 0; i < 10; i++) JSON.parse(body);
  const parseSeconds = ((performance.now() - started) / 10 / 1000) * summary.requests.sent;
  out.push({
    name: 'customers batch (full push to a sandbox)',
    rows,
    seconds: push.seconds,
    rowsPerSec: rows / push.seconds,
    ratio: rows / push.seconds / baseRate,
    ratioTo: 'csv-parse columns:true',
    goal: '>= 0.6x, RSS < 400 MB',
    peakRssMb: push.peakRssMb,
    note: `${summary.requests.sent} requests, ${summary.retries} retries; sandbox peak RSS ${sandboxRss?.toFixed(0) ?? '?'} MB; JSON.parse of the bodies alone ≈ ${parseSeconds.toFixed(1)} s of server time (plus its validation and SQLite writes, on the same cores)`,
  });

  // The sandbox on its own: ready-made bodies of the same size posted with the push's concurrency,
  // so the server's ceiling is a figure of its own rather than a guess.
  log('the sandbox alone: ready-made batch bodies');
  const server = await startSandbox();
  let serverSeconds;
  const requests = Math.max(1, Math.round(rows / 10_000));
  try {
    const tokenRes = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: server.clientId, client_secret: server.clientSecret }),
    });
    if (!tokenRes.ok) throw new Error(`token request answered ${tokenRes.status}`);
    const { access_token: token } = await tokenRes.json();
    const bodies = Array.from({ length: requests }, (_, r) => makeBody(`S${r}-`));
    const t0 = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < bodies.length) {
        const res = await fetch(`${server.baseUrl}/api/v1/loan-performance/batches/customers`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: bodies[next++],
        });
        if (!res.ok) throw new Error(`batch request answered ${res.status}`);
        await res.arrayBuffer();
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    serverSeconds = (performance.now() - t0) / 1000;
  } finally {
    await server.stop();
  }
  out.push({
    name: 'sandbox alone (server ceiling for the push)',
    rows: requests * 10_000,
    seconds: serverSeconds,
    rowsPerSec: (requests * 10_000) / serverSeconds,
    ratio: (requests * 10_000) / serverSeconds / baseRate,
    ratioTo: 'csv-parse columns:true',
    peakRssMb: null,
    note: `${requests} ready-made bodies of 1000 customers × 10 payments, 4 in flight: JSON parsing, validation and SQLite writes of the sandbox; the full push cannot beat this`,
  });
  return out;
}
