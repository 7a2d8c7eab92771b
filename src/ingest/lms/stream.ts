import type { Hash } from 'node:crypto';
import { inspectRow, planCsv, readLoan, readPayment, type CsvPlan, type InspectedRow } from './csv.js';
import type { CustomerGroup, Duplicate, GroupLoan, GroupPayment } from './groups.js';
import { csvRecordBatches, type ProblemSink } from './rows.js';
import { csvDelimiter, type Mapping } from '../mapping/mapping.js';
import type { InputSource } from '../sources.js';
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
    /** The file, when the run reads more than one. */
    readonly file?: string,
  ) {
    super(`${file ? `${file} ` : ''}row ${row}: customer ${customerId} comes after ${previous}`);
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
          if (compareIds(customerId, current.customerId) < 0)
            throw new NotSortedError(row, customerId, current.customerId);
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
    const payments = winners(customerId, loanId, pending.payments.get(loanId) ?? [], duplicates);
    loans.push({ loanId, src, row, fields, errors, payments });
    if (first === undefined || row < first.row) first = { src, row };
  }
  return { customerId, origin: first ?? { src, row: 0 }, errors: [], loans, orphans: [], duplicates };
}

/** A CSV file's rows that can be read (others go to `problems` as they are met), one at a time. */
class RowCursor {
  private batch: { cells: string[]; row: number }[] = [];
  private index = 0;
  private plan: CsvPlan | undefined;
  private head: (InspectedOk & { cells: string[]; row: number }) | undefined;
  private ended = false;
  rows = 0;

  constructor(
    private readonly input: InputSource,
    private readonly role: 'loans' | 'payments',
    private readonly options: StreamOptions,
    readonly src: number,
    private readonly iterator: AsyncGenerator<{ cells: string[]; row: number }[]>,
    private readonly counted: () => void,
  ) {}

  get csvPlan(): CsvPlan {
    return this.plan!;
  }

  /** The next readable row, without taking it; undefined at the end. */
  async peek(): Promise<(InspectedOk & { cells: string[]; row: number }) | undefined> {
    while (this.head === undefined && !this.ended) {
      if (this.index >= this.batch.length) {
        const next = await this.iterator.next();
        if (next.done) {
          this.ended = true;
          break;
        }
        this.batch = next.value;
        this.index = 0;
        continue;
      }
      const { cells, row } = this.batch[this.index++]!;
      if (row === 1 && this.plan === undefined) {
        this.plan = planCsv(this.input.name, this.role, this.options.mapping, cells);
        continue;
      }
      this.rows++;
      this.counted();
      const inspected = inspectRow(this.plan!, cells);
      if (!inspected.ok) {
        this.options.problems({ src: this.src, row, ...inspected.problem });
        continue;
      }
      this.head = { ...inspected, cells, row };
    }
    return this.head;
  }

  take(): void {
    this.head = undefined;
  }

  async close(): Promise<void> {
    await this.iterator.return(undefined);
  }
}

type InspectedOk = Extract<InspectedRow, { ok: true }>;

export interface TwoFileOptions extends Omit<StreamOptions, 'src' | 'hash'> {
  loans: { input: InputSource; src: number };
  payments: { input: InputSource; src: number };
}

/**
 * The fast path for two files (`--loans`, `--payments`), each sorted by customer id: they are read
 * side by side and each customer is assembled from both as its rows go by, exactly as the staging
 * would give it (loans by id, the last row of a loan winning and earlier ones its duplicates;
 * payments by id, the last winning; payments of a loan not in the loans file as orphans). A row of
 * a customer that sorts before the previous one proves a file unsorted: NotSortedError.
 */
export async function* streamTwoFiles(options: TwoFileOptions): AsyncGenerator<CustomerGroup, number> {
  let rows = 0;
  const counted = () => {
    rows++;
    if (options.onRows && rows % 5000 === 0) options.onRows(rows);
  };
  const cursor = (file: { input: InputSource; src: number }, role: 'loans' | 'payments') =>
    new RowCursor(
      file.input,
      role,
      { mapping: options.mapping, problems: options.problems, src: file.src },
      file.src,
      csvRecordBatches(file.input, csvDelimiter(options.mapping)),
      counted,
    );
  const loans = cursor(options.loans, 'loans');
  const payments = cursor(options.payments, 'payments');
  let previous: string | undefined;
  let seq = 0;
  try {
    while (true) {
      const l = await loans.peek();
      const p = await payments.peek();
      if (l === undefined && p === undefined) break;
      const customerId =
        l === undefined
          ? p!.customerId
          : p === undefined
            ? l.customerId
            : compareIds(l.customerId, p.customerId) <= 0
              ? l.customerId
              : p.customerId;
      if (previous !== undefined && compareIds(customerId, previous) <= 0) {
        const at = l !== undefined && l.customerId === customerId ? l : p!;
        throw new NotSortedError(
          at.row,
          customerId,
          previous,
          (at === l ? options.loans : options.payments).input.name,
        );
      }
      previous = customerId;
      const loanRows = new Map<string, { cells: string[]; row: number }[]>();
      for (let r = l; r !== undefined && r.customerId === customerId; r = await loans.peek()) {
        let list = loanRows.get(r.loanId);
        if (!list) loanRows.set(r.loanId, (list = []));
        list.push({ cells: r.cells, row: r.row });
        loans.take();
      }
      const paymentRows = new Map<string, PendingPayment[]>();
      for (let r = p; r !== undefined && r.customerId === customerId; r = await payments.peek()) {
        const { fields, errors } = readPayment(payments.csvPlan, r.cells);
        let list = paymentRows.get(r.loanId);
        if (!list) paymentRows.set(r.loanId, (list = []));
        list.push({ paymentId: r.paymentId, src: payments.src, row: r.row, fields, errors, seq: seq++ });
        payments.take();
      }
      yield assemble(customerId, loanRows, paymentRows, loans);
    }
  } finally {
    await loans.close();
    await payments.close();
  }
  return rows;
}

function assemble(
  customerId: string,
  loanRows: Map<string, { cells: string[]; row: number }[]>,
  paymentRows: Map<string, PendingPayment[]>,
  loansFile: RowCursor,
): CustomerGroup {
  const loanIds = [...new Set([...loanRows.keys(), ...paymentRows.keys()])].sort(compareIds);
  const loanDuplicates: Duplicate[] = [];
  const paymentDuplicates: Duplicate[] = [];
  const loans: GroupLoan[] = [];
  const orphans: { loanId: string; payments: GroupPayment[] }[] = [];
  let first: { src: number; row: number } | undefined;
  const consider = (src: number, row: number) => {
    if (first === undefined || src < first.src || (src === first.src && row < first.row)) first = { src, row };
  };
  for (const loanId of loanIds) {
    const payments = winners(customerId, loanId, paymentRows.get(loanId) ?? [], paymentDuplicates);
    const rows = loanRows.get(loanId);
    if (rows === undefined) {
      orphans.push({ loanId, payments });
      for (const p of payments) consider(p.src, p.row);
      continue;
    }
    const src = loansFile.src;
    const winner = rows[rows.length - 1]!;
    for (let i = 0; i < rows.length - 1; i++)
      loanDuplicates.push({
        level: 'loan',
        src,
        row: rows[i]!.row,
        customerId,
        loanId,
        winner: { src, row: winner.row },
      });
    const { fields, errors } = readLoan(loansFile.csvPlan, winner.cells);
    loans.push({ loanId, src, row: winner.row, fields, errors, payments });
    consider(src, winner.row);
  }
  return {
    customerId,
    origin: first ?? { src: 0, row: 0 },
    errors: [],
    loans,
    orphans,
    duplicates: [...loanDuplicates, ...paymentDuplicates],
  };
}

/** Payments of a loan by id, the last of equal ids winning; the others are recorded as duplicates. */
function winners(customerId: string, loanId: string, list: PendingPayment[], duplicates: Duplicate[]): GroupPayment[] {
  const sorted = list.sort((a, b) => compareIds(a.paymentId, b.paymentId) || a.seq - b.seq);
  const payments: GroupPayment[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const p = sorted[i]!;
    let last = i;
    while (last + 1 < sorted.length && sorted[last + 1]!.paymentId === p.paymentId) last++;
    const winner = sorted[last]!;
    for (let j = i; j < last; j++) {
      const old = sorted[j]!;
      duplicates.push({
        level: 'payment',
        src: old.src,
        row: old.row,
        customerId,
        loanId,
        paymentId: old.paymentId,
        winner: { src: winner.src, row: winner.row },
      });
    }
    payments.push({
      paymentId: winner.paymentId,
      src: winner.src,
      row: winner.row,
      fields: winner.fields,
      errors: winner.errors,
    });
    i = last;
  }
  return payments;
}
