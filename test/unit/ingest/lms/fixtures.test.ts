import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { stageExport, type BatchInput } from '../../../../src/ingest/lms/inputs.js';
import type { RowProblem } from '../../../../src/ingest/lms/rows.js';
import { loadMapping } from '../../../../src/ingest/mapping/mapping.js';
import { Staging } from '../../../../src/ingest/lms/staging.js';
import type { CustomerGroup } from '../../../../src/ingest/lms/groups.js';
import { InputError } from '../../../../src/errors.js';

const dir = fileURLToPath(new URL('../../../../fixtures/lms/', import.meta.url));
const open: Staging[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

async function stage(inputs: BatchInput[]) {
  const mapping = await loadMapping('mapping.json', dir);
  const staging = new Staging();
  open.push(staging);
  const problems: RowProblem[] = [];
  const staged = await stageExport({
    inputs,
    mapping,
    problems: (p) => problems.push(p),
    io: { stdin: process.stdin, cwd: dir },
    staging,
  });
  const groups = [...staged.groups()];
  return { staged, groups, problems, sources: staging.sources };
}

const SEPARATE: BatchInput[] = [
  { path: 'loans.csv', role: 'loans' },
  { path: 'payments.csv', role: 'payments' },
];
const DENORMALISED: BatchInput[] = [{ path: 'export.csv', role: 'auto' }];

/** The converted content of every group, keyed by ids: what both shapes must agree on. */
function content(groups: CustomerGroup[]) {
  const out: Record<string, unknown> = {};
  for (const g of groups) {
    for (const loan of g.loans) {
      out[`${g.customerId}/${loan.loanId}`] = loan.fields;
      for (const p of loan.payments) out[`${g.customerId}/${loan.loanId}/${p.paymentId}`] = p.fields;
    }
  }
  return out;
}

describe('the LMS fixture export', () => {
  it('reads the separate loans and payments files', async () => {
    const { staged, groups, problems, sources } = await stage(SEPARATE);
    expect(staged.rowsRead).toBe(14 + 24);
    expect(groups.map((g) => g.customerId)).toEqual([
      '100101',
      '100102',
      '100103',
      '100104',
      '100105',
      '100106',
      '100107',
      '100108',
      '100109',
      '100110',
      '100111',
    ]);
    expect(problems.map((p) => [sources[p.src], p.row, p.field ?? p.reason])).toEqual([
      ['loans.csv', 9, 'customer_id'],
      ['payments.csv', 25, 'has 14 columns; the header has 15'],
    ]);
    const orphan = groups.find((g) => g.customerId === '100111')!;
    expect(orphan.loans).toEqual([]);
    expect(orphan.orphans.map((o) => [o.loanId, o.payments.map((p) => p.paymentId)])).toEqual([
      ['LN-9999', ['T-5090']],
    ]);
    const duplicates = groups.flatMap((g) => g.duplicates).map((d) => [d.level, sources[d.src], d.row, d.winner.row]);
    expect(duplicates).toEqual([
      ['loan', 'loans.csv', 2, 4],
      ['payment', 'payments.csv', 3, 5],
    ]);
  });

  it('reads the one-row-per-payment file, with a loan without payments', async () => {
    const { staged, groups, problems, sources } = await stage(DENORMALISED);
    expect(staged.rowsRead).toBe(25);
    expect(groups).toHaveLength(10);
    expect(problems.map((p) => [sources[p.src], p.row, p.level])).toEqual([
      ['export.csv', 8, 'payment'],
      ['export.csv', 26, 'payment'],
    ]);
    const c103 = groups.find((g) => g.customerId === '100103')!;
    expect(c103.loans.map((l) => [l.loanId, l.payments.length])).toEqual([
      ['LN-1003', 1],
      ['LN-1004', 0],
    ]);
  });

  it('gives the same records from both shapes', async () => {
    const a = content((await stage(SEPARATE)).groups);
    const b = content((await stage(DENORMALISED)).groups);
    expect(b).toEqual(a);
    expect(Object.keys(a)).toHaveLength(12 + 21); // 22 payment rows, one of them a duplicate
  });

  it('converts money, codes and Chicago times across both DST changes', async () => {
    const all = content((await stage(DENORMALISED)).groups);
    expect(all['100101/LN-1001/T-5001']).toMatchObject({
      payment_at: '2026-03-08T07:59:00Z',
      payment_type: 'First Payment',
      payment_amount: 15000,
    });
    expect(all['100101/LN-1001/T-5002']).toMatchObject({ payment_at: '2026-03-08T08:01:00Z' });
    expect(all['100102/LN-1002/T-5003']).toMatchObject({ payment_at: '2026-11-01T06:30:00Z' });
    expect(all['100102/LN-1002/T-5004']).toMatchObject({ payment_at: '2026-11-01T08:30:00Z' });
    expect(all['100102/LN-1002/T-5005']).toMatchObject({
      payment_at: '2026-11-21T00:05:00Z',
      payment_amount: 100000,
      fees: 2450,
      payment_type: 'Payoff',
      payment_mode: 'Western Union',
    });
    expect(all['100102/LN-1002']).toMatchObject({
      loan_status: 'Paid In Full',
      loan_amount: 125000,
      applied_at: '2026-10-15T23:05:00Z',
      first_payment_date: '2026-11-01',
    });
    expect(all['100110/LN-1012/T-5021']).toMatchObject({ payment_amount: -2500, principal: -2500 });
    expect(all['100109/LN-1011/T-5019']).toMatchObject({ payment_amount: 5500 });
  });

  it('refuses a file that lacks mapped columns, naming them (exit 2)', async () => {
    const err = await stage([{ path: 'payments.csv', role: 'auto' }]).catch((e) => e);
    expect(err).toBeInstanceOf(InputError);
    expect(err.exitCode).toBe(2);
    expect(err.message).toMatch(/payments\.csv, row 1: lacks the mapped columns "Lead ID" \(loan\.lead_id\)/);
  });
});
