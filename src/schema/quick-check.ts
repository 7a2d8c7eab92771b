import { isCalendarDate } from './common.js';
import { LEVEL_FIELDS, type FieldKind } from './field-kinds.js';
import { MAX_BATCH_CUSTOMERS } from './loan-performance.js';

/**
 * A quick yes/no for the batch schemas, for the million valid records of a nightly push (checked
 * by the CLI before sending and by the sandbox on receipt): zod costs a few microseconds a record,
 * this a fraction of one. It only ever says "valid" when the schema would
 * (test/unit/schema/quick-check.test.ts compares the two on generated records); on "no", the
 * schema itself is run, and its messages are what people read.
 */

/** The number written by `count` ASCII digits at `at`, or -1. */
function digitsAt(value: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) {
    const d = value.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** `YYYY-MM-DD` at the start of `value`, naming a real day (what the schema's isIsoDate checks, without a regex). */
function calendarDateAt(value: string): boolean {
  if (value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45) return false;
  const year = digitsAt(value, 0, 4);
  const month = digitsAt(value, 5, 2);
  const day = digitsAt(value, 8, 2);
  return year >= 0 && isCalendarDate(year, month, day);
}

/** Same answers as the schema's isIsoDate. */
export function isIsoDateQuick(value: string): boolean {
  return value.length === 10 && calendarDateAt(value);
}

/** Same answers as the schema's isIsoDateTime (`YYYY-MM-DDTHH:mm:ssZ`, a real instant). */
export function isIsoDateTimeQuick(value: string): boolean {
  if (
    value.length !== 20 ||
    value.charCodeAt(10) !== 84 /* T */ ||
    value.charCodeAt(13) !== 58 ||
    value.charCodeAt(16) !== 58 ||
    value.charCodeAt(19) !== 90 /* Z */
  )
    return false;
  const hour = digitsAt(value, 11, 2);
  const minute = digitsAt(value, 14, 2);
  const second = digitsAt(value, 17, 2);
  return hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 59 && calendarDateAt(value);
}

const PAYMENT_REFUSED_IN_BATCH = ['bank_routing_number', 'bank_account_number'];

function fits(kind: FieldKind, value: unknown): boolean {
  switch (kind.type) {
    case 'string':
      return typeof value === 'string';
    // Safe integers only, as the schema: 12345678901234567890 parses to a number that is not it.
    case 'id':
      return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
    case 'cents':
      return typeof value === 'number' && Number.isSafeInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'date':
      return typeof value === 'string' && isIsoDateQuick(value);
    case 'datetime':
      return typeof value === 'string' && isIsoDateTimeQuick(value);
    case 'enum':
      return typeof value === 'string' && kind.values.includes(value);
  }
}

const nonBlank = (value: unknown): boolean => typeof value === 'string' && value.trim() !== '';

/** True only if BatchPaymentSchema accepts the payment. */
export function paymentLooksValid(payment: Record<string, unknown>): boolean {
  for (const key in payment) {
    const value = payment[key];
    if (value === undefined) continue;
    const kind = LEVEL_FIELDS.payment[key];
    if (kind === undefined || !fits(kind, value)) return false;
  }
  return paymentRulesHold(payment);
}

/**
 * True only if BatchPaymentSchema accepts a payment whose fields are all payment fields that fit
 * their kinds (as `fits` says; the mapping's readers vouch for theirs): the fields a batch refuses,
 * and the rules between fields.
 */
export function paymentRulesHold(payment: Record<string, unknown>): boolean {
  for (let i = 0; i < PAYMENT_REFUSED_IN_BATCH.length; i++)
    if (payment[PAYMENT_REFUSED_IN_BATCH[i]!] !== undefined) return false;
  if (!nonBlank(payment.payment_id) || payment.payment_at === undefined) return false;
  if (nonBlank(payment.return_code) && payment.returned_at === undefined) return false;
  if (nonBlank(payment.fail_code) && payment.failed_at === undefined) return false;
  return true;
}

/** True only if BatchLoanSchema accepts the loan (its payments checked separately). */
export function loanLooksValid(loan: Record<string, unknown>): boolean {
  for (const key in loan) {
    const value = loan[key];
    if (value === undefined) continue;
    if (key === 'payments') {
      if (!Array.isArray(value)) return false;
      continue;
    }
    const kind = LEVEL_FIELDS.loan[key];
    if (kind === undefined || !fits(kind, value)) return false;
  }
  if (
    !nonBlank(loan.loan_id) ||
    loan.loan_amount === undefined ||
    loan.applied_at === undefined ||
    loan.is_lead_loan === undefined
  )
    return false;
  if (loan.lead_id === undefined && loan.management_system_id === undefined) return false;
  return true;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** True only if CustomerBatchSchema accepts the whole body. */
export function batchLooksValid(body: unknown): boolean {
  if (!isRecord(body)) return false;
  for (const key in body) if (key !== 'customers') return false;
  const customers = body.customers;
  if (!Array.isArray(customers) || customers.length === 0 || customers.length > MAX_BATCH_CUSTOMERS) return false;
  for (const customer of customers) {
    if (!isRecord(customer)) return false;
    for (const key in customer) if (key !== 'customer_id' && key !== 'loans') return false;
    if (!nonBlank(customer.customer_id)) return false;
    const loans = customer.loans;
    if (!Array.isArray(loans) || loans.length === 0) return false;
    for (const loan of loans) {
      if (!isRecord(loan) || !loanLooksValid(loan)) return false;
      const payments = loan.payments;
      if (payments === undefined) continue;
      for (const payment of payments as unknown[]) if (!isRecord(payment) || !paymentLooksValid(payment)) return false;
    }
  }
  return true;
}
