import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
import { dumpLoanPerformance, FIXTURES, pushEnv } from './push-helpers.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-single-'));
const dataDir = join(work, 'sandbox');
let sandbox: TestSandbox;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandboxProcess(['--data-dir', dataDir]);
  env = pushEnv(sandbox);
});
afterAll(async () => {
  await sandbox.stop();
  rmSync(work, { recursive: true, force: true });
});

const rejectsOf = (path: string) => parse(readFileSync(path, 'utf8'), { columns: true }) as Record<string, string>[];

describe('single upserts, end to end', () => {
  it('customers push: one JSON record from stdin, with its lead loan', async () => {
    const record = {
      customer_id: '100101',
      lead_loan: {
        loan_id: 'LN-1001',
        lead_id: 500101,
        loan_amount: 50000,
        applied_at: '2026-03-06T16:15:00Z',
        loan_status: 'current',
      },
    };
    const res = await runBinary(['customers', 'push', '-', '-o', 'json'], { env, input: JSON.stringify(record) });
    expect(res.code).toBe(0);
    const summary = JSON.parse(res.stdout);
    expect(summary).toMatchObject({ command: 'customers push', status: 'completed', requests: { sent: 1 } });
    expect(summary.customers).toMatchObject({ read: 1, accepted: 1 });
    expect(await sandbox.stats()).toMatchObject({ customers: 1, loans: 1 });
  });

  it('loans push: the LMS loans file through the mapping; loans of unknown customers are rejected by the service', async () => {
    const rejects = join(work, 'loans-rejects.csv');
    const res = await runBinary(
      ['loans', 'push', 'loans.csv', '--mapping', 'mapping.json', '--rejects', rejects, '-o', 'json'],
      { env, cwd: FIXTURES },
    );
    expect(res.code).toBe(4);
    const summary = JSON.parse(res.stdout);
    // 14 rows: one without a customer, one duplicate, two invalid, nine for customers the service does not know.
    expect(summary.loans).toMatchObject({ read: 14, valid: 10, sent: 10, accepted: 1, rejected: 12, duplicates: 1 });
    const lines = rejectsOf(rejects);
    expect(
      lines
        .filter((l) => /does not know customer/.test(l.reason ?? ''))
        .map((l) => l.loan_id)
        .sort(),
    ).toEqual(['LN-1002', 'LN-1003', 'LN-1004', 'LN-1005', 'LN-1006', 'LN-1007', 'LN-1009', 'LN-1011', 'LN-1012']);
    expect(lines.find((l) => l.loan_id === 'LN-1008')).toMatchObject({ field: 'loan_amount', row: '7' });
    const stored = dumpLoanPerformance(dataDir).loans as any[];
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      loan_id: 'LN-1001',
      loan_status: 'Current',
      management_system_id: 7,
      applied_at: '2026-03-06T16:15:00Z',
      is_lead_loan: 1,
    });
  });

  it('payments push: bank numbers allowed, refused locally when malformed, exit 4', async () => {
    const file = join(work, 'payments.csv');
    writeFileSync(
      file,
      [
        'customer_id,loan_id,management_system_id,payment_id,payment_amount,payment_status,bank_routing_number,bank_account_number,payment_at',
        '100101,LN-1001,7,T-7001,15000,paid,021000021,123456789012,2026-03-20T15:00:00Z',
        '100101,LN-1001,7,T-7002,15000,Paid,02100002,123456789012,2026-04-03T15:00:00Z',
        '100101,LN-1001,7,T-7003,,Returned,021000021,999,2026-04-17T15:00:00Z',
        '100101,LN-9999,7,T-7004,100,Paid,,,2026-04-17T15:00:00Z',
      ].join('\n') + '\n',
    );
    const rejects = join(work, 'payments-rejects.csv');
    const res = await runBinary(['payments', 'push', file, '--rejects', rejects, '--concurrency', '2', '-o', 'json'], {
      env,
    });
    expect(res.code).toBe(4);
    expect(res.stdout).not.toContain('123456789012');
    const summary = JSON.parse(res.stdout);
    expect(summary.payments).toMatchObject({ read: 4, valid: 3, accepted: 2, rejected: 2 });
    const lines = rejectsOf(rejects);
    expect(lines.map((l) => [l.row, l.payment_id, l.field]).sort()).toEqual([
      ['3', 'T-7002', 'bank_routing_number'],
      ['5', 'T-7004', ''],
    ]);
    const stored = (dumpLoanPerformance(dataDir).payments as any[]).map((p) => [
      p.payment_id,
      p.payment_status,
      p.bank_routing_number,
    ]);
    expect(stored).toEqual([
      ['T-7001', 'Paid', '021000021'],
      ['T-7003', 'Returned', '021000021'],
    ]);
  });

  it('validate-only sends nothing', async () => {
    const posts = (stats: any) =>
      Object.entries(stats.requests.by_route as Record<string, number>)
        .filter(([route]) => route.startsWith('POST'))
        .reduce((n, [, c]) => n + c, 0);
    const before = posts(await sandbox.stats());
    const res = await runBinary(
      [
        'loans',
        'push',
        'loans.csv',
        '--mapping',
        'mapping.json',
        '--validate-only',
        '--rejects',
        join(work, 'v.csv'),
        '-o',
        'json',
      ],
      { env, cwd: FIXTURES },
    );
    expect(res.code).toBe(4);
    expect(JSON.parse(res.stdout)).toMatchObject({ status: 'validated_with_rejects', validate_only: true });
    expect(posts(await sandbox.stats())).toBe(before);
  });
});
