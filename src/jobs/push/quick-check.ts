import { LEVEL_FIELDS, type FieldKind } from '../../ingest/mapping/fields.js';
import { isCalendarDate } from '../../schema/common.js';

/**
 * A quick yes/no for the batch loan and payment schemas, for the million valid records of a
 * nightly push: zod costs a few microseconds a record, this a fraction of one. It only ever says
 * "valid" when the schema would (test/unit/jobs/push/quick-check.test.ts compares the two on
 * generated records); on "no", the schema itself is run, and its messages are what people read.
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

const PAYMENT_REFUSED_IN_BATCH = new Set(['bank_routing_number', 'bank_account_number']);

function fits(kind: FieldKind, value: unknown): boolean {
  switch (kind.type) {
    case 'string':
      return typeof value === 'string';
    case 'id':
      return typeof value === 'number' && Number.isInteger(value) && value > 0;
    case 'cents':
      return typeof value === 'number' && Number.isInteger(value);
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
    if (kind === undefined || PAYMENT_REFUSED_IN_BATCH.has(key) || !fits(kind, value)) return false;
  }
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
