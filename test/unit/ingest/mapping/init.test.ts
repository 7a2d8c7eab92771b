import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { starterMapping } from '../../../../src/ingest/mapping/init.js';
import { parseMapping } from '../../../../src/ingest/mapping/mapping.js';

describe('starterMapping', () => {
  const file = {
    name: 'export.csv',
    header: [
      'Customer ID',
      'loan-id',
      'Loan Amount',
      'Applied At',
      'Is Lead Loan',
      'Loan Status',
      'PAYMENT_ID',
      'Payment Amount',
      'Payment At',
      'Branch',
    ],
    rows: [
      ['1', 'L1', '$1,250.00', '11/20/2026 6:05 PM', 'Y', 'PIF', 'P1', '$10.00', '11/21/2026 9:00 AM', 'North'],
      ['2', 'L2', '$300.00', '3/8/2026 3:01 AM', 'N', 'current', 'P2', '$20.00', '3/9/2026 9:00 AM', 'South'],
    ],
  };

  it('matches API field names up to case, spaces and punctuation, and guesses units and formats from the sample', () => {
    const starter = starterMapping([file], 'America/Chicago');
    expect(starter.mapping).toMatchObject({
      money: 'dollars',
      datetime_format: ['M/d/yyyy h:mm a'],
      source_time_zone: 'America/Chicago',
      customer: { customer_id: 'Customer ID' },
      loan: {
        loan_id: 'loan-id',
        loan_amount: 'Loan Amount',
        applied_at: 'Applied At',
        is_lead_loan: 'Is Lead Loan',
        loan_status: { column: 'Loan Status', values: { PIF: '' } },
      },
      payment: { payment_id: 'PAYMENT_ID', payment_amount: 'Payment Amount', payment_at: 'Payment At' },
    });
    expect(starter.unmatched).toEqual(['Branch']);
    expect(starter.codesToFill).toEqual({ 'loan.loan_status': ['PIF'] });
    expect(starter.missingRequired).toEqual(['loan.lead_id or loan.management_system_id (a {"const": …} will do)']);
  });

  it('writes the delimiter the files were read with, unless a comma; says so when they differ', () => {
    expect(starterMapping([file]).mapping.csv).toBeUndefined();
    expect(starterMapping([{ ...file, delimiter: ',' }]).mapping.csv).toBeUndefined();
    expect(starterMapping([{ ...file, delimiter: ';' }]).mapping.csv).toEqual({ delimiter: ';' });
    const mixed = starterMapping([
      { ...file, delimiter: ';', role: 'loans' },
      { ...file, name: 'payments.csv', delimiter: '\t', role: 'payments' },
    ]);
    expect(mixed.mapping.csv).toBeUndefined();
    expect(mixed.notes.join('\n')).toContain('split by different delimiters (";", "\\t")');
  });

  it('writes a mapping that loads once the codes are filled in', () => {
    const starter = starterMapping([file], 'America/Chicago');
    const json = JSON.parse(JSON.stringify(starter.mapping));
    json.loan.loan_status.values.PIF = 'Paid In Full';
    json.loan.management_system_id = { const: 7 };
    expect(() => parseMapping(json, 'starter.json')).not.toThrow();
  });

  it('asks for the time zone when local datetimes were found and none was given', () => {
    const starter = starterMapping([file]);
    expect(starter.mapping.source_time_zone).toBe('UTC');
    expect(starter.notes.join('\n')).toMatch(/source_time_zone/);
  });

  describe('several files', () => {
    const lms = (name: string) => {
      const [header, ...rows] = readFileSync(
        fileURLToPath(new URL(`../../../../fixtures/lms/${name}`, import.meta.url)),
        'utf8',
      )
        .trim()
        .split('\n')
        .map((line) => line.split(','));
      return { name, header: header!, rows };
    };

    it('keeps a loans file\'s columns out of the payment section: "Principal" of loans.csv is the loan amount', () => {
      const starter = starterMapping([lms('loans.csv'), lms('payments.csv')], 'America/Chicago');
      expect(starter.mapping.payment).toEqual({ return_code: 'Return Code', fail_code: 'Fail Code' });
      expect(starter.mapping.loan).toMatchObject({ lead_id: 'Lead ID' });
      expect(starter.unmatched).toContain('Principal');
      expect(starter.notes).toContain(
        '"Principal" in loans.csv looks like payment.principal, but loans.csv is the loans file (by most of its columns; say otherwise with --loans/--payments): not mapped; map it by hand if it is right',
      );
    });

    it("follows the roles given, and keeps a payments file's own name for a loan id", () => {
      const loans = {
        name: 'a.csv',
        header: ['Customer ID', 'Loan ID', 'Loan Amount', 'Principal'],
        rows: [],
        role: 'loans' as const,
      };
      const payments = {
        name: 'b.csv',
        header: ['Customer ID', 'LOAN_ID', 'Payment ID', 'Principal'],
        rows: [],
        role: 'payments' as const,
      };
      const starter = starterMapping([payments, loans]);
      expect(starter.mapping.customer).toEqual({ customer_id: 'Customer ID' });
      expect(starter.mapping.loan).toEqual({ loan_id: 'Loan ID', loan_amount: 'Loan Amount' });
      expect(starter.mapping.payment).toEqual({ payment_id: 'Payment ID', principal: 'Principal', loan_id: 'LOAN_ID' });
      expect(starter.unmatched).toEqual(['Principal']);
      expect(starter.notes.join('\n')).toContain(
        '"Principal" in a.csv looks like payment.principal, but a.csv is the loans file: not mapped',
      );
    });
  });
});
