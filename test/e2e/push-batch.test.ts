import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorLines, runBinary } from '../helpers/binary.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { batchShapeLines, writeExport } from '../../fixtures/lms/generate.mjs';
import { dumpLoanPerformance, FIXTURES, MAPPING, pushEnv, sleep, spawnBinary } from './push-helpers.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-push-'));
let counts: { customers: number; loans: number; payments: number };
/** A sandbox without faults for the first test (which counts what it holds) and the last. */
let plain: TestSandbox;
/** A tenth of `export`, for the tests that push it in ten times smaller chunks: the same requests. */
let small: { customers: number; loans: number; payments: number };

beforeAll(async () => {
  counts = await writeExport({
    out: join(work, 'export'),
    customers: 2500,
    seed: 5,
    paymentsPerCustomer: 4,
    shuffle: true,
  });
  plain = await startSandboxProcess();
  small = await writeExport({
    out: join(work, 'small'),
    customers: 250,
    seed: 5,
    paymentsPerCustomer: 4,
    shuffle: true,
  });
});
afterAll(async () => {
  await plain?.stop();
  rmSync(work, { recursive: true, force: true });
});

const batchRequests = (stats: any): number =>
  stats.requests.by_route['POST /api/v1/loan-performance/batches/customers'] ?? 0;

describe('customers batch against the sandbox', () => {
  it('sends 2,500 customers in 3 chunks, and the sandbox holds exactly what was sent', async () => {
    const sandbox = plain;
    const env = pushEnv(sandbox);
    const res = await runBinary(
      ['customers', 'batch', '--loans', 'loans.csv', '--payments', 'payments.csv', '--mapping', MAPPING, '-o', 'json'],
      { env, cwd: join(work, 'export') },
    );
    expect(res.stderr).not.toMatch(/Error/);
    expect(res.code).toBe(0);
    const summary = JSON.parse(res.stdout);
    expect(summary).toMatchObject({
      status: 'completed',
      requests: { total: 3, sent: 3 },
      exit_code: 0,
      rejects_file: null,
    });
    expect(summary.customers).toMatchObject({
      read: 2500,
      valid: 2500,
      sent: 2500,
      accepted: 2500,
      rejected: 0,
      not_sent: 0,
    });
    expect(summary.payments.accepted).toBe(counts.payments);
    expect(summary.accounting).toMatchObject({ balanced: true, customers: { read: 2500, accounted_for: 2500 } });
    const stats = await sandbox.stats();
    expect(batchRequests(stats)).toBe(3);
    expect(stats).toMatchObject({ customers: 2500, loans: counts.loans, payments: counts.payments });
  });

  it('splits a request the service refuses as too large (413) and loses nothing', async () => {
    // Each 100-customer chunk is halved three times (17 refusals in all, as 2,500 customers in
    // chunks of 1,000 under 256 KiB had); far smaller bodies took hundreds to prove the same.
    const sandbox = await startSandboxProcess(['--max-body', String(24 * 1024)]);
    try {
      const env = pushEnv(sandbox);
      const res = await runBinary(
        [
          'customers',
          'batch',
          '--loans',
          'loans.csv',
          '--payments',
          'payments.csv',
          '--mapping',
          MAPPING,
          '--chunk-size',
          '100',
          '-o',
          'json',
        ],
        { env, cwd: join(work, 'small') },
      );
      expect(res.code).toBe(0);
      const summary = JSON.parse(res.stdout);
      expect(summary.customers).toMatchObject({ read: 250, accepted: 250, rejected: 0, not_sent: 0 });
      expect(summary.requests.sent).toBeGreaterThan(3);
      expect(JSON.stringify(summary.notes)).toContain('HTTP 413');
      expect(await sandbox.stats()).toMatchObject({ customers: 250, loans: small.loans, payments: small.payments });
    } finally {
      await sandbox.stop();
    }
  });

  it('pushes the fixture export: the valid records arrive, the rejects file lists exactly the broken rows', async () => {
    const expectedBroken = {
      'export.csv': [2, 3, 7, 8, 10, 11, 15, 21, 24, 26],
      separate: [
        ['loans.csv', 2],
        ['loans.csv', 5],
        ['loans.csv', 7],
        ['loans.csv', 9],
        ['payments.csv', 3],
        ['payments.csv', 6],
        ['payments.csv', 8],
        ['payments.csv', 9],
        ['payments.csv', 10],
        ['payments.csv', 12],
        ['payments.csv', 13],
        ['payments.csv', 16],
        ['payments.csv', 24],
        ['payments.csv', 25],
      ],
    };
    const dumps = [];
    for (const shape of ['denormalised', 'separate'] as const) {
      const dataDir = mkdtempSync(join(work, `sandbox-${shape}-`));
      const sandbox = await startSandboxProcess(['--data-dir', dataDir]);
      const rejects = join(work, `rejects-${shape}.csv`);
      try {
        const files =
          shape === 'denormalised' ? ['export.csv'] : ['--loans', 'loans.csv', '--payments', 'payments.csv'];
        const res = await runBinary(
          ['customers', 'batch', ...files, '--mapping', 'mapping.json', '--rejects', rejects, '-o', 'json'],
          { env: pushEnv(sandbox), cwd: FIXTURES },
        );
        expect(res.code).toBe(4);
        const summary = JSON.parse(res.stdout);
        expect(summary.status).toBe('completed_with_rejects');
        expect(summary.payments).toMatchObject({ valid: 14, accepted: 14, duplicates: 1 });
        expect(summary.loans).toMatchObject({ valid: 10, accepted: 10 });
        expect(summary.customers).toMatchObject({ valid: 9, accepted: 9 });
        const stats = await sandbox.stats();
        expect(stats).toMatchObject({ customers: 9, loans: 10, payments: 14 });
        const lines = parse(readFileSync(rejects, 'utf8'), { columns: true }) as Record<string, string>[];
        if (shape === 'denormalised') {
          expect([...new Set(lines.map((l) => Number(l.row)))].sort((a, b) => a - b)).toEqual(
            expectedBroken['export.csv'],
          );
        } else {
          const rows = [...new Set(lines.map((l) => `${l.source_file}:${l.row}`))].sort();
          expect(rows).toEqual(expectedBroken.separate.map(([f, r]) => `${f}:${r}`).sort());
        }
        for (const line of lines) expect(line.reason).not.toBe('');
        // The summary groups them by reason: the counts add up to the rejects file, one example each.
        expect(summary.reasons.reduce((n: number, r: { count: number }) => n + r.count, 0)).toBe(lines.length);
        expect(summary.reasons[0]).toMatchObject({ reason: 'not sent: loan … was rejected', count: 3 });
        expect(summary.reasons[0].example).toMatchObject({
          row: expect.any(Number),
          loan_id: expect.any(String),
          reason: expect.stringMatching(/^not sent: loan LN-\d+ was rejected$/),
        });
      } finally {
        await sandbox.stop();
      }
      dumps.push(dumpLoanPerformance(dataDir));
    }
    expect(dumps[1]).toEqual(dumps[0]);
    const payment = (dumps[0]!.payments as any[]).find((p) => p.payment_id === 'T-5003');
    expect(payment).toMatchObject({
      payment_at: '2026-11-01T06:30:00Z',
      payment_amount: 12500,
      payment_mode: 'Debit Card',
    });
  });

  // This test and the next have their own sandbox and state folder and mostly wait (Retry-After,
  // latency): side by side.
  it.concurrent('completes with nothing lost when the network fails one request in five', async () => {
    const sandbox = await startSandboxProcess(['--fail-rate', '0.2', '--reset-rate', '0.05', '--random-seed', '42']);
    try {
      const res = await runBinary(
        ['customers', 'batch', 'export.csv', '--mapping', MAPPING, '--chunk-size', '10', '-o', 'json'],
        { env: pushEnv(sandbox), cwd: join(work, 'small') },
      );
      expect(res.code).toBe(0);
      const summary = JSON.parse(res.stdout);
      expect(summary.customers).toMatchObject({ accepted: 250, not_sent: 0 });
      expect(summary.retries).toBeGreaterThan(0);
      const stats = await sandbox.stats();
      expect(stats).toMatchObject({ customers: 250, loans: small.loans, payments: small.payments });
      expect(stats.faults['503']).toBeGreaterThan(0);
    } finally {
      await sandbox.stop();
    }
  });

  it.concurrent('refuses a second push to the same profile while one is running', async () => {
    // 25 requests of a second each, one at a time: the first run outlasts the second's start on any machine.
    const sandbox = await startSandboxProcess(['--latency', '1000']);
    try {
      const env = pushEnv(sandbox);
      const first = spawnBinary(
        ['customers', 'batch', 'export.csv', '--mapping', MAPPING, '--chunk-size', '10', '--concurrency', '1'],
        env,
        join(work, 'small'),
      );
      // Wait until the first run holds the lock (it takes it before reading the export).
      const lockFile = join(env.LEADCTL_STATE_DIR!, 'locks', 'default.lock');
      for (let i = 0; i < 600 && !existsSync(lockFile); i++) await sleep(50);
      expect(existsSync(lockFile)).toBe(true);
      // Last night's rejects, report and metrics: the refused run does nothing, so it touches none of them.
      const kept = mkdtempSync(join(work, 'kept-'));
      const lastNight = 'source_file,row,customer_id,loan_id,payment_id,field,reason\nexport.csv,7,C7,,,ssn,bad\n';
      writeFileSync(join(kept, 'rejects.csv'), lastNight);
      writeFileSync(join(kept, 'run.prom'), 'leadctl_run_success 1\n');
      const second = await runBinary(
        [
          'customers',
          'batch',
          'export.csv',
          '--mapping',
          MAPPING,
          '--rejects',
          join(kept, 'rejects.csv'),
          '--metrics-file',
          join(kept, 'run.prom'),
          '--report',
          join(kept, 'run.html'),
        ],
        { env, cwd: join(work, 'small') },
      );
      expect(second.code).toBe(7);
      expect(errorLines(second.stderr)).toMatch(/another push is running for profile "default" \(process \d+/);
      expect(readFileSync(join(kept, 'rejects.csv'), 'utf8')).toBe(lastNight);
      expect(readFileSync(join(kept, 'run.prom'), 'utf8')).toBe('leadctl_run_success 1\n');
      expect(readdirSync(kept).sort()).toEqual(['rejects.csv', 'run.prom']);
      first.kill('SIGTERM');
      const end = await first.exited;
      expect(end.code).toBe(143);
      expect(JSON.parse(first.output().stdout)).toMatchObject({ status: 'interrupted', exit_code: 143 });
    } finally {
      await sandbox.stop();
    }
  });

  it('streams a sorted NDJSON export and stages a shuffled one: the sandbox holds the same either way', async () => {
    const lines: string[] = [...batchShapeLines({ customers: 150, seed: 9, paymentsPerCustomer: 3 })];
    const dir = mkdtempSync(join(work, 'ndjson-'));
    writeFileSync(join(dir, 'sorted.ndjson'), `${lines.join('\n')}\n`);
    // The last 30 customers in reverse order: out of order at the 122nd line, after a request went.
    const shuffledLines = [...lines.slice(0, 120), ...lines.slice(120).reverse()];
    writeFileSync(join(dir, 'shuffled.ndjson'), `${shuffledLines.join('\n')}\n`);
    const dumps = [];
    const summaries = [];
    for (const file of ['sorted.ndjson', 'shuffled.ndjson']) {
      const dataDir = mkdtempSync(join(work, 'sandbox-ndjson-'));
      const sandbox = await startSandboxProcess(['--data-dir', dataDir]);
      try {
        const res = await runBinary(
          ['customers', 'batch', file, '--mapping', MAPPING, '--chunk-size', '100', '-o', 'json'],
          {
            env: pushEnv(sandbox),
            cwd: dir,
          },
        );
        expect(res.code).toBe(0);
        summaries.push(JSON.parse(res.stdout));
      } finally {
        await sandbox.stop();
      }
      dumps.push(dumpLoanPerformance(dataDir));
    }
    const [sorted, shuffled] = summaries;
    expect(sorted.notes ?? []).toEqual([]);
    expect(sorted.customers).toMatchObject({ read: 150, accepted: 150, rejected: 0 });
    expect(sorted.requests).toMatchObject({ total: 2, sent: 2 });
    // Found out of order after the first request went: sent again from the staging.
    expect(shuffled.notes).toEqual([
      expect.stringMatching(
        /^shuffled\.ndjson is not sorted by customer \(row 122: customer \d+ comes after \d+\); it was staged instead, and the 1 request\(s\) already sent were sent again/,
      ),
    ]);
    expect(shuffled.customers).toMatchObject({ read: 150, accepted: 150, rejected: 0 });
    expect(dumps[0]!.customers).toHaveLength(150);
    expect(dumps[1]).toEqual(dumps[0]);
  });

  it('exits 2 naming the file when a mapped column is missing, and 3 on bad credentials', async () => {
    const sandbox = plain;
    const env = pushEnv(sandbox);
    const missing = await runBinary(['customers', 'batch', 'payments.csv', '--mapping', 'mapping.json'], {
      env,
      cwd: FIXTURES,
    });
    expect(missing.code).toBe(2);
    expect(errorLines(missing.stderr)).toMatch(/payments\.csv, row 1: lacks the mapped columns "Lead ID"/);
    const badAuth = await runBinary(['customers', 'batch', 'export.csv', '--mapping', 'mapping.json'], {
      env: { ...env, LEADCTL_CLIENT_SECRET: 'wrong' },
      cwd: FIXTURES,
    });
    expect(badAuth.code).toBe(3);
  });
});
