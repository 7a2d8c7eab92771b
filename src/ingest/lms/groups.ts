import type { FieldError } from '../mapping/mapping.js';
import type { Origin, Staging, StagedPayment, StagedRow } from './staging.js';

/**
 * Staged rows → one group per customer, in the staging's deterministic order: the customer's
 * loans with their payments, plus what cannot be sent as it stands (payments of a loan that is not
 * there, rows superseded by a later row with the same id). Validation happens later, on groups.
 */

/** A customer as staged: converted fields and problems per object. */
export interface StagedDocumentBody {
  customer_id: string;
  errors?: FieldError[];
  loans: StagedDocumentLoan[];
}
export interface StagedDocumentLoan {
  fields: Record<string, unknown>;
  errors?: FieldError[];
  payments: { fields: Record<string, unknown>; errors?: FieldError[] }[];
}

export interface SourceRecord extends Origin {
  fields: Record<string, unknown>;
  errors: readonly FieldError[];
}

/**
 * The errors of a record whose reader vouches for its fields' kinds (LevelReader.fitting) when it
 * found none: an empty list that also tells the check that only the rules between fields are left
 * to see. Frozen: it is shared.
 */
export const FIELDS_FIT: readonly FieldError[] = Object.freeze([]);

export interface GroupPayment extends SourceRecord {
  paymentId: string;
  /** The payment as sent, when it was already checked valid (staged CSV); `fields` is then empty. */
  json?: string;
}

export interface GroupLoan extends SourceRecord {
  loanId: string;
  payments: GroupPayment[];
}

export interface Duplicate extends Origin {
  level: 'customer' | 'loan' | 'payment';
  customerId: string;
  loanId?: string;
  paymentId?: string;
  /** The record that won (the last one read). */
  winner: Origin;
}

/**
 * A customer's lines as the file has them, before any parsing (streamed CSV only, see
 * first-look.ts), for a first look by the record of what was sent: equal lines under the same
 * headers and mapping give the same payload.
 */
export interface RawCustomer {
  customerId: string;
  /** What the lines mean besides themselves: the files' roles and headers (the same for every customer of a run). */
  context: string;
  /** The customer's lines, in file order, line endings included; held in memory only, never stored or shown. */
  text: string;
  /**
   * Their keyed digest, once the record has computed it (asked about them by the first look): the
   * look then keeps the digest and drops the text ('').
   */
  digest?: string;
}

/** What a customer's lines hold (what it counts when found unchanged: it was clean when recorded). */
export interface RawCounts {
  loans: number;
  payments: number;
}

export interface CustomerGroup {
  customerId: string;
  /** Where the customer was first seen (for customer-level messages). */
  origin: Origin;
  /** Problems of the customer object itself (batch-shape input). */
  errors: readonly FieldError[];
  loans: GroupLoan[];
  orphans: { loanId: string; payments: GroupPayment[] }[];
  duplicates: Duplicate[];
  /** The customer's lines and counts, when the reader was asked for them and the first look is sure of them. */
  raw?: RawCustomer & RawCounts;
  /**
   * Set when the reader was told the raw rows are those recorded as sent: nothing was converted,
   * `loans` and `orphans` are empty, and these are the customer's counts.
   */
  unchanged?: RawCounts;
}

function record(row: StagedRow): SourceRecord {
  return {
    src: row.src,
    row: row.row,
    fields: row.data === null ? {} : (JSON.parse(row.data) as Record<string, unknown>),
    errors: row.errors === null ? [] : (JSON.parse(row.errors) as FieldError[]),
  };
}

const NO_FIELDS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;
const NO_ERRORS: readonly FieldError[] = Object.freeze([]);

/** A staged payment; one checked when staged comes as its JSON, unparsed (see StagedRow.errors). */
function payment(row: StagedPayment): GroupPayment {
  if (row.errors === null && row.data !== null)
    return {
      src: row.src,
      row: row.row,
      fields: NO_FIELDS,
      errors: NO_ERRORS,
      paymentId: row.paymentId,
      json: row.data,
    };
  return { ...record(row), paymentId: row.paymentId };
}

/** Groups of flat (CSV) input. */
export function* flatGroups(staging: Staging): Generator<CustomerGroup> {
  for (const customer of staging.customers()) {
    const duplicates: Duplicate[] = [];
    const loans: GroupLoan[] = customer.loans.map((loan) => {
      for (const old of loan.superseded) {
        duplicates.push({
          level: 'loan',
          src: old.src,
          row: old.row,
          customerId: customer.customerId,
          loanId: loan.loanId,
          winner: { src: loan.src, row: loan.row },
        });
      }
      return {
        ...record(loan),
        loanId: loan.loanId,
        payments: loan.payments.map(payment),
      };
    });
    for (const d of customer.duplicatePayments) {
      duplicates.push({
        level: 'payment',
        src: d.row.src,
        row: d.row.row,
        customerId: customer.customerId,
        loanId: d.loanId,
        paymentId: d.row.paymentId,
        winner: { src: d.winner.src, row: d.winner.row },
      });
    }
    const orphans = customer.orphans.map((o) => ({ loanId: o.loanId, payments: o.payments.map(payment) }));
    const first = [...loans, ...orphans.flatMap((o) => o.payments)].reduce<Origin | undefined>(
      (best, r) =>
        best === undefined || r.src < best.src || (r.src === best.src && r.row < best.row)
          ? { src: r.src, row: r.row }
          : best,
      undefined,
    );
    yield {
      customerId: customer.customerId,
      origin: first ?? { src: 0, row: 0 },
      errors: [],
      loans,
      orphans,
      duplicates,
    };
  }
}

/** Groups of staged batch-shape (JSON) input: a customer is its last document. */
export function* documentGroups(staging: Staging): Generator<CustomerGroup> {
  for (const doc of staging.documents()) {
    const body = JSON.parse(doc.data!) as StagedDocumentBody;
    yield documentGroup(doc.customerId, { src: doc.src, row: doc.row }, body, doc.superseded);
  }
}

/**
 * A customer of batch-shape input, from its body (staged, or as read from a sorted file); loans
 * and payments repeated inside it: the last wins. `superseded`: earlier documents of the customer.
 */
export function documentGroup(
  customerId: string,
  origin: Origin,
  body: StagedDocumentBody,
  superseded: readonly Origin[] = [],
): CustomerGroup {
  const duplicates: Duplicate[] = superseded.map((old) => ({
    level: 'customer',
    src: old.src,
    row: old.row,
    customerId,
    winner: origin,
  }));
  const loans: GroupLoan[] = [];
  const loanAt = new Map<string, number>();
  for (const loan of body.loans) {
    const loanId = typeof loan.fields.loan_id === 'string' ? loan.fields.loan_id : '';
    const payments: GroupPayment[] = [];
    const paymentAt = new Map<string, number>();
    for (const payment of loan.payments) {
      const paymentId = typeof payment.fields.payment_id === 'string' ? payment.fields.payment_id : '';
      const entry: GroupPayment = { ...origin, fields: payment.fields, errors: payment.errors ?? [], paymentId };
      const previous = paymentId === '' ? undefined : paymentAt.get(paymentId);
      if (previous !== undefined) {
        duplicates.push({ level: 'payment', ...origin, customerId, loanId, paymentId, winner: origin });
        payments[previous] = entry;
      } else {
        if (paymentId !== '') paymentAt.set(paymentId, payments.length);
        payments.push(entry);
      }
    }
    const entry: GroupLoan = { ...origin, fields: loan.fields, errors: loan.errors ?? [], loanId, payments };
    const previous = loanId === '' ? undefined : loanAt.get(loanId);
    if (previous !== undefined) {
      duplicates.push({ level: 'loan', ...origin, customerId, loanId, winner: origin });
      loans[previous] = entry;
    } else {
      if (loanId !== '') loanAt.set(loanId, loans.length);
      loans.push(entry);
    }
  }
  return { customerId, origin, errors: body.errors ?? [], loans, orphans: [], duplicates };
}
