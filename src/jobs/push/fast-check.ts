import { LEVEL_FIELDS, type FieldKind } from '../../ingest/mapping-fields.js';
import { isIsoDate, isIsoDateTime } from '../../schema/common.js';

/**
 * A quick yes/no for the batch loan and payment schemas, for the million valid records of a
 * nightly push: zod costs a few microseconds a record, this a fraction of one. It only ever says
 * "valid" when the schema would (test/unit/jobs/push-fast-check.test.ts compares the two on
 * generated records); on "no", the schema itself is run, and its messages are what people read.
 */

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
      return typeof value === 'string' && isIsoDate(value);
    case 'datetime':
      return typeof value === 'string' && isIsoDateTime(value);
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
  if (!nonBlank(loan.loan_id) || loan.loan_amount === undefined || loan.applied_at === undefined || loan.is_lead_loan === undefined) return false;
  if (loan.lead_id === undefined && loan.management_system_id === undefined) return false;
  return true;
}
