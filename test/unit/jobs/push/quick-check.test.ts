import { describe, expect, it } from 'vitest';
import {
  isIsoDateQuick,
  isIsoDateTimeQuick,
  loanLooksValid,
  paymentLooksValid,
} from '../../../../src/jobs/push/quick-check.js';
import { isIsoDate, isIsoDateTime } from '../../../../src/schema/common.js';
import {
  BatchLoanSchema,
  BatchPaymentSchema,
  LOAN_STATUSES,
  PAYMENT_MODES,
} from '../../../../src/schema/loan-performance.js';

let seed = 99;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;

/** Values of every shape the converters or a JSON file could produce, good and bad. */
const VALUES: unknown[] = [
  undefined,
  undefined,
  undefined,
  null,
  '',
  '  ',
  'x',
  'T-1',
  0,
  1,
  -5,
  12345,
  1.5,
  2 ** 53,
  true,
  false,
  [],
  {},
  '2026-11-21T00:05:00Z',
  '2026-02-30T00:00:00Z',
  '2026-11-21 00:05:00',
  '2026-11-21',
  '2026-13-01',
  'Paid',
  'paid',
  'Paid In Full',
  'Current',
  'ACH',
  'Money Gram',
  'Payment',
  'Payoff',
  'New',
  'Payday',
  'Line Of Credit',
  ...LOAN_STATUSES,
  ...PAYMENT_MODES,
];

function randomObject(fields: string[], required: Record<string, unknown[]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    if (random() < 0.35) continue;
    // Mostly plausible values for the field, sometimes anything at all.
    out[f] = random() < 0.7 && required[f] ? pick(required[f]!) : pick(VALUES);
  }
  if (random() < 0.05) out[pick(['colour', 'customer_id', 'loans', 'payment'])] = pick(VALUES);
  return out;
}

const PAYMENT_FIELDS = [
  'payment_id',
  'payment_amount',
  'payment_type',
  'payment_mode',
  'payment_status',
  'principal',
  'interest',
  'fees',
  'return_code',
  'returned_at',
  'fail_code',
  'failed_at',
  'payment_at',
  'bank_routing_number',
  'bank_account_number',
];
const LOAN_FIELDS = [
  'loan_id',
  'lead_id',
  'management_system_id',
  'is_lead_loan',
  'application_type',
  'loan_type',
  'loan_status',
  'loan_amount',
  'funded_amount',
  'first_payment_date',
  'applied_at',
  'esigned_at',
  'withdrawn_at',
  'originated_at',
];
const dt = ['2026-11-21T00:05:00Z', '2025-01-01T12:00:00Z'];
const PLAUSIBLE: Record<string, unknown[]> = {
  payment_id: ['T-1', 'P9'],
  payment_amount: [100, -250, 0],
  payment_type: ['Payment', 'Payoff'],
  payment_mode: ['ACH', 'Money Gram'],
  payment_status: ['Paid', 'Returned'],
  principal: [10],
  interest: [5],
  fees: [0],
  return_code: ['R01', ''],
  returned_at: dt,
  fail_code: ['NSF', ' '],
  failed_at: dt,
  payment_at: dt,
  loan_id: ['L1'],
  lead_id: [1, 42],
  management_system_id: [7],
  is_lead_loan: [true, false],
  application_type: ['New'],
  loan_type: ['Installment'],
  loan_status: ['Current', 'Paid In Full'],
  loan_amount: [50000],
  funded_amount: [49000],
  first_payment_date: ['2026-12-04'],
  applied_at: dt,
  esigned_at: dt,
  withdrawn_at: dt,
  originated_at: dt,
};

describe('the quick checks never call valid what the schemas refuse', () => {
  it('payments: agrees with BatchPaymentSchema on 50,000 generated records', () => {
    let valid = 0;
    for (let i = 0; i < 50_000; i++) {
      const payment = randomObject(PAYMENT_FIELDS, PLAUSIBLE);
      const zod = BatchPaymentSchema.safeParse(payment).success;
      expect(paymentLooksValid(payment), JSON.stringify(payment)).toBe(zod);
      if (zod) valid++;
    }
    expect(valid).toBeGreaterThan(200);
  });

  it('loans: agrees with BatchLoanSchema on 50,000 generated records', () => {
    let valid = 0;
    for (let i = 0; i < 50_000; i++) {
      const loan = randomObject(LOAN_FIELDS, PLAUSIBLE);
      const zod = BatchLoanSchema.safeParse(loan).success;
      expect(loanLooksValid(loan), JSON.stringify(loan)).toBe(zod);
      if (zod) valid++;
    }
    expect(valid).toBeGreaterThan(200);
  });
});

describe('the quick ISO date checks', () => {
  it("answer as the schema's own checks do, on near-misses of every kind", () => {
    const alphabet = '0123456789-:TZ ١x';
    const bases = [
      '2026-11-21T00:05:00Z',
      '2024-02-29T23:59:59Z',
      '2023-02-29T00:00:00Z',
      '2026-12-31T24:00:00Z',
      '2026-11-21',
      '2000-02-29',
      '1900-02-29',
      '0000-01-01',
    ];
    let datesValid = 0;
    let timesValid = 0;
    for (let n = 0; n < 20000; n++) {
      let value = pick(bases);
      const edits = Math.floor(random() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * (value.length + 1));
        const roll = random();
        const c = alphabet[Math.floor(random() * alphabet.length)]!;
        if (roll < 0.6) value = value.slice(0, at) + c + value.slice(at + 1);
        else if (roll < 0.8) value = value.slice(0, at) + c + value.slice(at);
        else value = value.slice(0, at) + value.slice(at + 1);
      }
      expect(isIsoDateQuick(value), value).toBe(isIsoDate(value));
      expect(isIsoDateTimeQuick(value), value).toBe(isIsoDateTime(value));
      if (isIsoDate(value)) datesValid++;
      if (isIsoDateTime(value)) timesValid++;
    }
    expect(datesValid).toBeGreaterThan(500);
    expect(timesValid).toBeGreaterThan(500);
  });
});
