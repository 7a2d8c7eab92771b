import type { Hash } from 'node:crypto';
import { inspectRow, planCsv, readLoan, readPayment, type CsvPlan } from './lms-csv.js';
import type { CustomerGroup, Duplicate, GroupLoan, GroupPayment } from './lms-groups.js';
import { csvRecordBatches, type ProblemSink } from './lms-rows.js';
import { csvDelimiter, type Mapping } from './mapping.js';
import type { InputSource } from './sources.js';
import { compareIds } from './staging.js';

/**
 * The fast path for the common case: one file with a row per payment, sorted by customer id (as
 * LMS exports usually are). Customers are assembled as their rows go by, without staging, and
 * come out exactly as the staging would give them (same order, same last-wins, same duplicates),
 * so chunks, and therefore `--resume`, are the same either way. A row of a customer that sorts
 * before the previous one proves the file unsorted: NotSortedError, and the caller stages instead.
 */

export class NotSortedError extends Error {
  constructor(
    readonly row: number,
    readonly customerId: string,
    readonly previous: string,
  ) {
    super(`row ${row}: customer ${customerId} comes after ${previous}`);
  }
}

export interface StreamOptions {
  mapping: Mapping;
  /** Index of this file among the run's sources (for rejects). */
  src: number;
  problems: ProblemSink;
  hash?: Hash;
  onRows?: (rows: number) => void;
}

interface PendingPayment extends GroupPayment {
  seq: number;
}

interface PendingCustomer {
  customerId: string;
  /** Last row of each loan (the one that wins), with its cells, converted only at the end. */
  loans: Map<string, { cells: string[]; row: number }>;
  payments: Map<string, PendingPayment[]>;
}

export async function* streamGroups(input: InputSource, options: StreamOptions): AsyncGenerator<CustomerGroup, number> {
  const { src, problems } = options;
  let plan: CsvPlan | undefined;
  let current: PendingCustomer | undefined;
  let seq = 0;
  let rows = 0;
  for await (const batch of csvRecordBatches(input, csvDelimiter(options.mapping), options.hash)) {
    for (const { cells, row } of batch) {
      if (row === 1 && plan === undefined) {
        plan = planCsv(input.name, 'rows', options.mapping, cells);
        continue;
      }
      rows++;
      if (options.onRows && rows % 5000 === 0) options.onRows(rows);
      const inspected = inspectRow(plan!, cells);
      if (!inspected.ok) {
        problems({ src, row, ...inspected.problem });
        continue;
      }
      const { customerId, loanId, paymentId } = inspected;
      if (current === undefined || current.customerId !== customerId) {
        if (current !== undefined) {
          if (compareIds(customerId, current.customerId) < 0) throw new NotSortedError(row, customerId, current.customerId);
          yield finish(plan!, current, src);
        }
        current = { customerId, loans: new Map(), payments: new Map() };
      }
      current.loans.set(loanId, { cells, row });
      if (!inspected.hasPayment) continue;
      const { fields, errors } = readPayment(plan!, cells);
      let list = current.payments.get(loanId);
      if (!list) current.payments.set(loanId, (list = []));
      list.push({ paymentId, src, row, fields, errors, seq: seq++ });
    }
  }
  if (current !== undefined) yield finish(plan!, current, src);
  return rows;
}

/** The customer as the staging would give it: loans by id, payments by id, the last of equal ids winning. */
function finish(plan: CsvPlan, pending: PendingCustomer, src: number): CustomerGroup {
  const customerId = pending.customerId;
  const duplicates: Duplicate[] = [];
  const loanIds = [...pending.loans.keys()].sort(compareIds);
  const loans: GroupLoan[] = [];
  let first: { src: number; row: number } | undefined;
  for (const loanId of loanIds) {
    const { cells, row } = pending.loans.get(loanId)!;
    const { fields, errors } = readLoan(plan, cells);
    const sorted = (pending.payments.get(loanId) ?? []).sort((a, b) => compareIds(a.paymentId, b.paymentId) || a.seq - b.seq);
    const payments: GroupPayment[] = [];
    for (let i = 0; i < sorted.length; i++) {
      const p = sorted[i]!;
      let last = i;
      while (last + 1 < sorted.length && sorted[last + 1]!.paymentId === p.paymentId) last++;
      const winner = sorted[last]!;
      for (let j = i; j < last; j++) {
        const old = sorted[j]!;
        duplicates.push({ level: 'payment', src: old.src, row: old.row, customerId, loanId, paymentId: old.paymentId, winner: { src: winner.src, row: winner.row } });
      }
      payments.push({ paymentId: winner.paymentId, src: winner.src, row: winner.row, fields: winner.fields, errors: winner.errors });
      i = last;
    }
    loans.push({ loanId, src, row, fields, errors, payments });
    if (first === undefined || row < first.row) first = { src, row };
  }
  return { customerId, origin: first ?? { src, row: 0 }, errors: [], loans, orphans: [], duplicates };
}
