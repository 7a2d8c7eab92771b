import { customerJson } from './chunker.js';
import type { SkippedEntry } from './journal.js';
import {
  paymentOrigin,
  zeroCounts,
  type CustomerTrace,
  type LevelCounts,
  type Reject,
  type ValidCustomer,
} from './validate.js';

/**
 * The service's "skipped" list for a chunk → rejects naming the source rows, and the records
 * that were therefore not stored (a skipped loan takes its payments with it).
 */

const PATH = /^customers\.(\d+)(?:\.loans\.(\d+)(?:\.payments\.(\d+))?)?$/;

export interface SkipOutcome {
  rejects: Reject[];
  rejected: LevelCounts;
}

/** `payment_at: required` → field `payment_at`, reason `required`; anything else stays whole. */
function splitError(error: string): { field?: string; reason: string } {
  const m = /^([A-Za-z_][\w.[\]]*): (.+)$/s.exec(error);
  return m ? { field: m[1], reason: m[2]! } : { reason: error };
}

/** The ids of a loan's payments, as sent: of the `customer`th customer of the request, its `loan`th loan. */
export type PaymentIds = (customer: number, loan: number) => readonly string[];

/** Payment ids read back from the customers' JSON in their request's body (not kept in the traces). */
export function paymentIdsFrom(customers: readonly ValidCustomer[]): PaymentIds {
  const read = new Map<number, { loans?: { payments?: { payment_id?: string }[] }[] }>();
  return (customer, loan) => {
    let sent = read.get(customer);
    if (sent === undefined) read.set(customer, (sent = JSON.parse(customerJson(customers[customer]!))));
    return sent!.loans?.[loan]?.payments?.map((p) => p.payment_id ?? '') ?? [];
  };
}

/**
 * `refused`: the entries stand for a whole request the service refused (their errors already say
 * so); what they contain was not stored because of that refusal, not skipped one by one.
 */
export function applySkips(
  traces: readonly CustomerTrace[],
  skipped: readonly SkippedEntry[],
  paymentIds: PaymentIds,
  how: 'skipped' | 'refused' = 'skipped',
): SkipOutcome {
  const rejects: Reject[] = [];
  const rejected = zeroCounts();
  // Only the outermost skipped object counts; an inner one listed as well is already inside it.
  const seen = new Set<string>();
  const sorted = wholeWhereUnknown(traces, skipped).sort((a, b) => a.path.split('.').length - b.path.split('.').length);
  for (const entry of sorted) {
    const m = PATH.exec(entry.path);
    const errors = entry.errors.length ? entry.errors : ['skipped by the service'];
    const customer = m && !entry.unplaced ? traces[Number(m[1])] : undefined;
    if (!m || !customer) {
      // A customer this request did not have: reported as the service said it, against nothing in
      // particular (the sender then took no verdict of that answer: its customers are unconfirmed).
      rejects.push({
        level: 'customer',
        src: traces[0]?.src ?? 0,
        row: 0,
        customerId: entry.id ?? '',
        reason: `skipped by the service at ${entry.path}, which this request did not have: ${errors.join('; ')}`,
      });
      continue;
    }
    const c = Number(m[1]);
    if (seen.has(`${c}`) || (m[2] !== undefined && seen.has(`${c}.${m[2]}`))) continue;
    const say = (reason: string) => (how === 'refused' ? reason : `skipped by the service: ${reason}`);
    const notStored = (what: 'customer' | 'loan') =>
      how === 'refused'
        ? 'not stored: the whole request was refused by the service'
        : `not stored: its ${what} was skipped by the service`;
    if (m[2] === undefined) {
      seen.add(`${c}`);
      rejected.customers++;
      for (const e of errors)
        rejects.push({
          level: 'customer',
          src: customer.src,
          row: customer.row,
          customerId: customer.customerId,
          ...splitField(e, say),
        });
      for (const [l, loan] of customer.loans.entries()) {
        rejected.loans++;
        rejects.push({
          level: 'loan',
          src: loan.origin.src,
          row: loan.origin.row,
          customerId: customer.customerId,
          loanId: loan.loanId,
          reason: notStored('customer'),
        });
        const ids = paymentIds(c, l);
        for (let k = 0; k < loan.payments.rows.length; k++) {
          rejected.payments++;
          rejects.push({
            level: 'payment',
            ...paymentOrigin(loan.payments, k),
            customerId: customer.customerId,
            loanId: loan.loanId,
            paymentId: ids[k],
            reason: notStored('customer'),
          });
        }
      }
      continue;
    }
    const loan = customer.loans[Number(m[2])];
    if (!loan) continue;
    if (m[3] === undefined) {
      seen.add(`${c}.${m[2]}`);
      rejected.loans++;
      for (const e of errors)
        rejects.push({
          level: 'loan',
          src: loan.origin.src,
          row: loan.origin.row,
          customerId: customer.customerId,
          loanId: loan.loanId,
          ...splitField(e, say),
        });
      const ids = paymentIds(c, Number(m[2]));
      for (let k = 0; k < loan.payments.rows.length; k++) {
        rejected.payments++;
        rejects.push({
          level: 'payment',
          ...paymentOrigin(loan.payments, k),
          customerId: customer.customerId,
          loanId: loan.loanId,
          paymentId: ids[k],
          reason: notStored('loan'),
        });
      }
      continue;
    }
    const k = Number(m[3]);
    if (k >= loan.payments.rows.length || seen.has(entry.path)) continue;
    seen.add(entry.path);
    rejected.payments++;
    for (const e of errors) {
      rejects.push({
        level: 'payment',
        ...paymentOrigin(loan.payments, k),
        customerId: customer.customerId,
        loanId: loan.loanId,
        paymentId: paymentIds(c, Number(m[2]))[k],
        ...splitField(e, say),
      });
    }
  }
  return { rejects, rejected };
}

/**
 * A skip at a loan or payment the request did not have under one of its customers (an index past
 * the customer's loans or the loan's payments, or a path of another shape) says the service meant
 * another record than leadctl sent: what it stored of that customer is unknown. That customer is then skipped as a whole (its
 * own entries replaced by one that says why), so that nothing of it is counted accepted, its rows
 * are in the rejects file and the record sends it again next time.
 */
function wholeWhereUnknown(traces: readonly CustomerTrace[], skipped: readonly SkippedEntry[]): SkippedEntry[] {
  const unknown = new Map<number, SkippedEntry[]>();
  for (const entry of skipped) {
    const c = entry.unplaced ? undefined : customerOf(entry.path);
    const customer = c === undefined ? undefined : traces[c];
    if (c === undefined || !customer) continue;
    const m = PATH.exec(entry.path);
    const loan = m?.[2] === undefined ? undefined : customer.loans[Number(m[2])];
    if (m && (m[2] === undefined || (loan && (m[3] === undefined || Number(m[3]) < loan.payments.rows.length))))
      continue;
    unknown.set(c, [...(unknown.get(c) ?? []), entry]);
  }
  if (unknown.size === 0) return [...skipped];
  const kept = skipped.filter((entry) => {
    const c = entry.unplaced ? undefined : customerOf(entry.path);
    return c === undefined || !unknown.has(c);
  });
  for (const [c, entries] of unknown) {
    const said = entries.map((e) => `${e.path}${e.errors.length ? `: ${e.errors.join('; ')}` : ''}`).join(', ');
    kept.push({
      path: `customers.${c}`,
      id: traces[c]!.customerId,
      errors: [
        `a record this request did not have (${said}); what it stored of this customer is unknown: check it, then push it again`,
      ],
    });
  }
  return kept;
}

/** The customer a path is under (`customers.3…` → 3), whatever follows. */
function customerOf(path: string): number | undefined {
  const m = /^customers\.(\d+)(?:\.|$)/.exec(path);
  return m ? Number(m[1]) : undefined;
}

function splitField(error: string, say: (reason: string) => string): { field?: string; reason: string } {
  const { field, reason } = splitError(error);
  return { field, reason: say(reason) };
}
