import { describe, expect, it } from 'vitest';
import { isIsoDate, isIsoDateTime } from '../../../src/schema/common.js';
import {
  BatchLoanSchema,
  BatchPaymentSchema,
  CustomerBatchSchema,
  LOAN_STATUSES,
  MAX_BATCH_CUSTOMERS,
  PAYMENT_MODES,
} from '../../../src/schema/loan-performance.js';
import {
  batchLooksValid,
  isIsoDateQuick,
  isIsoDateTimeQuick,
  loanLooksValid,
  paymentLooksValid,
} from '../../../src/schema/quick-check.js';

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
  // Integers past 2^53 (a mis-mapped column, a JSON file): whole numbers to JS, not the number written.
  payment_amount: [100, -250, 0, 2 ** 53, Number('12345678901234567890')],
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
  lead_id: [1, 42, 2 ** 53 + 2],
  management_system_id: [7],
  is_lead_loan: [true, false],
  application_type: ['New'],
  loan_type: ['Installment'],
  loan_status: ['Current', 'Paid In Full'],
  loan_amount: [50000, 1e20],
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

let batchSeed = 7;
const batchRandom = () => (batchSeed = (batchSeed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

const payment = (id: string) => ({ payment_id: id, payment_amount: 100, payment_at: '2026-11-21T00:05:00Z' });
const loan = (id: string, payments: unknown[] = [payment('P1'), payment('P2')]) => ({
  loan_id: id,
  lead_id: 42,
  is_lead_loan: true,
  loan_amount: 50_000,
  applied_at: '2026-01-02T03:04:05Z',
  payments,
});
const customer = (id: string) => ({ customer_id: id, loans: [loan('L1'), loan('L2', [])] });
const small = (id: string) => ({ customer_id: id, loans: [loan('L1', [])] });

type Body = Record<string, any>;

/** One change a client or a hostile sender could make to a valid body, at the levels only the batch check sees. */
const MUTATIONS: ((body: Body) => void)[] = [
  (b) => (b.extra = 1),
  (b) => (b.customers = {}),
  (b) => (b.customers = []),
  (b) => (b.customers = Array.from({ length: MAX_BATCH_CUSTOMERS + 1 }, (_, i) => small(`C${i}`))),
  (b) => (b.customers = Array.from({ length: MAX_BATCH_CUSTOMERS }, (_, i) => small(`C${i}`))),
  (b) => delete b.customers,
  (b) => (b.customers[0] = null),
  (b) => (b.customers[0] = ['C1']),
  (b) => (b.customers[0].colour = 'red'),
  (b) => delete b.customers[0].customer_id,
  (b) => (b.customers[0].customer_id = '  '),
  (b) => (b.customers[0].customer_id = 17),
  (b) => (b.customers[0].customer_id = 'spaces inside are fine'),
  (b) => delete b.customers[0].loans,
  (b) => (b.customers[0].loans = []),
  (b) => (b.customers[0].loans = {}),
  (b) => (b.customers[0].loans[0] = 'L1'),
  (b) => delete b.customers[0].loans[0].loan_id,
  (b) => delete b.customers[0].loans[0].payments,
  (b) => (b.customers[0].loans[0].payments = []),
  (b) => (b.customers[0].loans[0].payments = 'P1'),
  (b) => (b.customers[0].loans[0].payments[0] = null),
  (b) => (b.customers[0].loans[0].payments[1] = [payment('P3')]),
  (b) => delete b.customers[0].loans[0].payments[0].payment_at,
  (b) => (b.customers[0].loans[0].payments[0].bank_account_number = '123'),
  (b) => (b.customers[0].loans[1].is_lead_loan = 'yes'),
  () => {},
];

describe('the batch quick check', () => {
  it('agrees with CustomerBatchSchema on valid bodies and on every kind of change at the batch level', () => {
    let valid = 0;
    let refused = 0;
    for (let i = 0; i < 2000; i++) {
      const body: Body = { customers: [customer('C1'), customer('C2')] };
      for (let m = 1 + Math.floor(batchRandom() * 2); m > 0; m--) {
        try {
          MUTATIONS[Math.floor(batchRandom() * MUTATIONS.length)]!(body);
        } catch {
          // A change that no longer applies (e.g. customers already replaced): the body is what it is.
        }
      }
      const zod = CustomerBatchSchema.safeParse(body).success;
      expect(batchLooksValid(body), JSON.stringify(body).slice(0, 300)).toBe(zod);
      if (zod) valid++;
      else refused++;
    }
    expect(valid).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it('refuses what is not a batch at all', () => {
    for (const body of [null, undefined, 'customers', 42, [], [{ customers: [customer('C1')] }]]) {
      expect(batchLooksValid(body)).toBe(false);
      expect(CustomerBatchSchema.safeParse(body).success).toBe(false);
    }
  });
});
