import { BatchLoanSchema, BatchPaymentSchema } from '../../schema/loan-performance.js';
import { formatZodIssues, type FormattableIssue } from '../../schema/common.js';
import { loanLooksValid, paymentLooksValid, paymentRulesHold } from './quick-check.js';
import type { FieldError } from '../../ingest/mapping/mapping.js';
import { FIELDS_FIT, type CustomerGroup, type GroupLoan, type SourceRecord } from '../../ingest/lms/groups.js';
import type { Origin } from '../../ingest/lms/staging.js';
import type { CustomerDigest } from '../delta/record.js';

/**
 * A customer group → what can be sent, and a reject for everything that cannot, with the
 * service's skip semantics: a bad payment is dropped from its loan, a bad loan (with its payments)
 * from its customer, and a customer is dropped only when no loan is left. The shared schemas
 * decide field rules, so "valid here" is "valid there".
 */

export type RecordLevel = 'customer' | 'loan' | 'payment';

export interface Reject extends Origin {
  level: RecordLevel;
  customerId: string;
  loanId?: string;
  paymentId?: string;
  field?: string;
  reason: string;
  /** Set for a record superseded by a later one with the same id (a duplicate, rather than refused). */
  supersededBy?: Origin;
}

/** Where each object of a customer's JSON came from, index for index, to place the service's skips. */
export interface CustomerTrace extends Origin {
  customerId: string;
  loans: { loanId: string; origin: Origin; payments: PaymentsTrace }[];
}

/**
 * A loan's payments as sent, index for index: where each was read, in an array of rows and one
 * file for all (an array of files only when they differ). Not their ids: a skipped payment's id is
 * read back from its customer's JSON in the request's body (`paymentIdsFrom`). A trace lives until
 * its request is answered, long enough for the collector to promote it: with an object a payment
 * and their ids, traces were a quarter of everything it promoted in a push.
 */
export interface PaymentsTrace {
  src: number | number[];
  rows: number[];
}

/** Where the trace's `k`th payment was read. */
export function paymentOrigin(trace: PaymentsTrace, k: number): Origin {
  return { src: typeof trace.src === 'number' ? trace.src : trace.src[k]!, row: trace.rows[k]! };
}

export interface ValidCustomer {
  customerId: string;
  /**
   * The batch customer object, serialised once (its length is the byte budget's measure). The
   * chunker moves it into its request's body and clears it here: read it then with `customerJson`.
   */
  json: string | undefined;
  loans: number;
  payments: number;
  trace: CustomerTrace;
  /** Keyed digests of the customer, set when the run keeps the record of what was sent (`--changed-only`, `--full`). */
  digest?: CustomerDigest;
}

/** What is sent of a customer, loan by loan: its fields and its payments' JSON (for a digest of it; not kept). */
export interface SentPayload {
  loans: { fields: Record<string, unknown>; payments: string[] }[];
}

export interface GroupResult {
  valid?: ValidCustomer;
  payload?: SentPayload;
  rejects: Reject[];
  /** Records seen in the group (duplicates included), by level. */
  seen: LevelCounts;
  /** Records refused (each once, however many problems it has), by level. */
  rejected: LevelCounts;
  /** Records superseded by a later one with the same id, by level. */
  duplicates: LevelCounts;
}

export interface LevelCounts {
  customers: number;
  loans: number;
  payments: number;
}

export const zeroCounts = (): LevelCounts => ({ customers: 0, loans: 0, payments: 0 });
const plural = { customer: 'customers', loan: 'loans', payment: 'payments' } as const;

const FIELD_ORDER_LOAN = ['loan_id', 'lead_id', 'management_system_id', 'is_lead_loan'];

function problemsOf(record: SourceRecord, issues: { path: string; message: string }[]): FieldError[] {
  const converted = new Set(record.errors.map((e) => e.field));
  // A value that failed conversion is absent to the schema, which then calls it "required": say it once.
  const fromSchema = issues.filter((i) => !converted.has(i.path)).map((i) => ({ field: i.path, reason: i.message }));
  return [...record.errors, ...fromSchema];
}

/** The shared schema's verdict, in words; only run when the quick check had doubts (or conversion failed). */
function schemaProblems(
  record: SourceRecord,
  schema: { safeParse(value: unknown): { success: boolean; error?: { issues: readonly FormattableIssue[] } } },
  value: unknown,
): FieldError[] {
  const check = schema.safeParse(value);
  return problemsOf(record, check.success ? [] : formatZodIssues(check.error!));
}

function describeColumn(error: FieldError): string {
  return error.column && error.column !== error.field ? ` (column "${error.column}")` : '';
}

export function validateGroup(group: CustomerGroup): GroupResult {
  const rejects: Reject[] = [];
  const customerId = group.customerId;
  const seen = { customers: 1, loans: 0, payments: 0 };
  const rejected = zeroCounts();
  const duplicates = zeroCounts();

  for (const d of group.duplicates) {
    seen[plural[d.level]]++;
    duplicates[plural[d.level]]++;
    const idField = d.level === 'customer' ? 'customer_id' : d.level === 'loan' ? 'loan_id' : 'payment_id';
    rejects.push({
      level: d.level,
      src: d.src,
      row: d.row,
      customerId,
      loanId: d.loanId,
      paymentId: d.paymentId,
      field: idField,
      reason: `duplicate ${idField}`,
      supersededBy: d.winner,
    });
  }
  for (const orphan of group.orphans) {
    for (const p of orphan.payments) {
      seen.payments++;
      rejected.payments++;
      rejects.push({
        level: 'payment',
        src: p.src,
        row: p.row,
        customerId,
        loanId: orphan.loanId,
        paymentId: p.paymentId,
        field: 'loan_id',
        reason: `loan ${orphan.loanId} of customer ${customerId} is not in the input`,
      });
    }
  }

  const customerProblems = group.errors;
  // The customer's JSON, piece by piece, joined once (each payment's text is copied once more, not three times).
  const parts: string[] = [];
  let loansOut = 0;
  const trace: CustomerTrace = { customerId, src: group.origin.src, row: group.origin.row, loans: [] };
  const payload: SentPayload = { loans: [] };
  let paymentsOut = 0;
  let loanProblemsSeen = false;

  for (const loan of group.loans) {
    seen.loans++;
    seen.payments += loan.payments.length;
    if (customerProblems.length) {
      rejectLoanAndPayments(rejects, customerId, loan, `not sent: customer ${customerId} was rejected`);
      rejected.loans++;
      rejected.payments += loan.payments.length;
      continue;
    }
    const loanProblems =
      loan.errors.length === 0 && loanLooksValid(loan.fields)
        ? []
        : schemaProblems(loan, BatchLoanSchema, { ...loan.fields, payments: [] });
    if (loanProblems.length) {
      loanProblemsSeen = true;
      rejected.loans++;
      rejected.payments += loan.payments.length;
      for (const problem of loanProblems) {
        rejects.push({
          level: 'loan',
          src: loan.src,
          row: loan.row,
          customerId,
          loanId: loan.loanId || undefined,
          field: problem.field || undefined,
          reason: problem.reason + describeColumn(problem),
        });
      }
      for (const p of loan.payments) {
        rejects.push({
          level: 'payment',
          src: p.src,
          row: p.row,
          customerId,
          loanId: loan.loanId || undefined,
          paymentId: p.paymentId || undefined,
          reason: `not sent: loan ${loan.loanId || '(no id)'} was rejected`,
        });
      }
      continue;
    }
    const paymentJson: string[] = [];
    const paymentTrace: PaymentsTrace = { src: 0, rows: [] };
    for (const payment of loan.payments) {
      if (payment.json !== undefined) {
        // Checked when it was staged: its JSON is ready.
        paymentJson.push(payment.json);
        tracePayment(paymentTrace, payment);
        continue;
      }
      // Fields whose reader vouches for their kinds (FIELDS_FIT) are only looked at together.
      const looksValid =
        payment.errors === FIELDS_FIT
          ? paymentRulesHold(payment.fields)
          : payment.errors.length === 0 && paymentLooksValid(payment.fields);
      const problems = looksValid ? [] : schemaProblems(payment, BatchPaymentSchema, payment.fields);
      if (problems.length) {
        rejected.payments++;
        for (const problem of problems) {
          rejects.push({
            level: 'payment',
            src: payment.src,
            row: payment.row,
            customerId,
            loanId: loan.loanId,
            paymentId: payment.paymentId || undefined,
            field: problem.field || undefined,
            reason: problem.reason + describeColumn(problem),
          });
        }
        continue;
      }
      paymentJson.push(JSON.stringify(payment.fields));
      tracePayment(paymentTrace, payment);
    }
    parts.push(loansOut++ === 0 ? '' : ',', loanHead(loan.fields));
    for (let i = 0; i < paymentJson.length; i++) parts.push(i === 0 ? '' : ',', paymentJson[i]!);
    parts.push(']}');
    payload.loans.push({ fields: loan.fields, payments: paymentJson });
    paymentsOut += paymentJson.length;
    trace.loans.push({ loanId: loan.loanId, origin: { src: loan.src, row: loan.row }, payments: paymentTrace });
  }

  if (customerProblems.length) {
    for (const problem of customerProblems) {
      rejects.push({
        level: 'customer',
        src: group.origin.src,
        row: group.origin.row,
        customerId,
        field: problem.field || undefined,
        reason: problem.reason + describeColumn(problem),
      });
    }
    rejected.customers++;
    return { rejects, seen, rejected, duplicates };
  }
  if (loansOut === 0) {
    const reason =
      group.loans.length === 0
        ? group.orphans.length
          ? 'no loan in the input (only payments)'
          : 'must hold at least one loan'
        : loanProblemsSeen
          ? 'not sent: none of its loans could be sent'
          : 'no loan to send';
    rejects.push({
      level: 'customer',
      src: group.origin.src,
      row: group.origin.row,
      customerId,
      field: 'loans',
      reason,
    });
    rejected.customers++;
    return { rejects, seen, rejected, duplicates };
  }
  parts.push(']}');
  const json = `{"customer_id":${JSON.stringify(customerId)},"loans":[${parts.join('')}`;
  return {
    valid: { customerId, json, loans: loansOut, payments: paymentsOut, trace },
    payload,
    rejects,
    seen,
    rejected,
    duplicates,
  };
}

function tracePayment(trace: PaymentsTrace, payment: Origin): void {
  const k = trace.rows.push(payment.row) - 1;
  if (k === 0) trace.src = payment.src;
  else if (typeof trace.src !== 'number') trace.src.push(payment.src);
  else if (trace.src !== payment.src) trace.src = [...Array<number>(k).fill(trace.src), payment.src];
}

function rejectLoanAndPayments(rejects: Reject[], customerId: string, loan: GroupLoan, reason: string): void {
  rejects.push({ level: 'loan', src: loan.src, row: loan.row, customerId, loanId: loan.loanId || undefined, reason });
  for (const p of loan.payments) {
    rejects.push({
      level: 'payment',
      src: p.src,
      row: p.row,
      customerId,
      loanId: loan.loanId || undefined,
      paymentId: p.paymentId || undefined,
      reason,
    });
  }
}

/** The loan's fields (ids first, for people reading a request) up to its payments: `{…,"payments":[`. */
function loanHead(fields: Record<string, unknown>): string {
  const head = JSON.stringify(idsFirst(fields) ? fields : orderedLoan(fields));
  return `${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"payments":[`;
}

/** Whether the fields, as they are, come in the order orderedLoan would give them (the mapping's usual order). */
function idsFirst(fields: Record<string, unknown>): boolean {
  let next = 0;
  let pastIds = false;
  for (const key in fields) {
    if (fields[key] === undefined) continue;
    const at = FIELD_ORDER_LOAN.indexOf(key);
    if (at < 0) pastIds = true;
    else if (pastIds || at < next) return false;
    else next = at + 1;
  }
  return true;
}

function orderedLoan(fields: Record<string, unknown>): Record<string, unknown> {
  const ordered: Record<string, unknown> = {};
  for (const key of FIELD_ORDER_LOAN) if (fields[key] !== undefined) ordered[key] = fields[key];
  for (const [key, value] of Object.entries(fields))
    if (ordered[key] === undefined && value !== undefined) ordered[key] = value;
  return ordered;
}
