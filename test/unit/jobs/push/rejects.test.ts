import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { reasonKind, RejectsWriter } from '../../../../src/jobs/push/rejects.js';
import { renderReasons } from '../../../../src/jobs/push/summary.js';

const dir = mkdtempSync(join(tmpdir(), 'leadctl-reasons-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('rejects grouped by reason', () => {
  it('a kind of reason leaves out the values of the record', () => {
    expect(reasonKind('payment_amount', '"$12.345" has a fraction of a cent (column "Trans Amt")')).toBe(
      'payment_amount: … has a fraction of a cent (column …)',
    );
    expect(reasonKind('payment_amount', '"$0.001" has a fraction of a cent (column "Trans Amt")')).toBe(
      'payment_amount: … has a fraction of a cent (column …)',
    );
    expect(reasonKind(undefined, 'has 26 columns; the header has 27')).toBe('has … columns; the header has …');
    expect(reasonKind(undefined, 'not sent: loan LN-1008 was rejected')).toBe('not sent: loan … was rejected');
    expect(reasonKind('customer_id', 'required')).toBe('customer_id: required');
  });

  it('counts every reject under its kind, most frequent first, with the first record as the example', () => {
    const w = new RejectsWriter(join(dir, 'r.csv'), dir, ['export.csv'], false);
    for (const row of [4, 9, 12])
      w.add({
        src: 0,
        row,
        level: 'payment',
        customerId: 'C1',
        loanId: `LN-${row}`,
        paymentId: `P${row}`,
        reason: `not sent: loan LN-${row} was rejected`,
      });
    w.add({
      src: 0,
      row: 2,
      level: 'loan',
      customerId: 'C2',
      loanId: 'LN-2',
      field: 'loan_amount',
      reason: '"abc" is not an amount in dollars (like $1,234.56) (column "Principal")',
    });
    const reasons = w.reasons();
    expect(reasons.map((r) => [r.count, r.reason])).toEqual([
      [3, 'not sent: loan … was rejected'],
      [1, 'loan_amount: … is not an amount in dollars (like …) (column …)'],
    ]);
    expect(reasons[0]!.example).toEqual({
      source_file: 'export.csv',
      row: 4,
      customer_id: 'C1',
      loan_id: 'LN-4',
      payment_id: 'P4',
      field: null,
      reason: 'not sent: loan LN-4 was rejected',
    });
    const text = renderReasons(reasons).join('\n');
    expect(text).toBe(
      [
        'rejected, by reason (first of each):',
        '  3  not sent: loan … was rejected',
        '       e.g. export.csv row 4 (customer C1, loan LN-4, payment P4): not sent: loan LN-4 was rejected',
        '  1  loan_amount: … is not an amount in dollars (like …) (column …)',
        '       e.g. export.csv row 2 (customer C2, loan LN-2): "abc" is not an amount in dollars (like $1,234.56) (column "Principal")',
      ].join('\n'),
    );
  });

  it('shows ten kinds and counts the rest in one line', () => {
    const reasons = Array.from({ length: 13 }, (_, i) => ({
      reason: `r${i}`,
      count: 13 - i,
      example: {
        source_file: 'f.csv',
        row: i,
        customer_id: null,
        loan_id: null,
        payment_id: null,
        field: null,
        reason: `r${i}`,
      },
    }));
    const lines = renderReasons(reasons);
    expect(lines.at(-1)).toBe('   6  more, for 3 other reasons (in the rejects file)');
  });
});
