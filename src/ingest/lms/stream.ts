import type { Hash } from 'node:crypto';
import { inspectRow, planCsv, readLoan, readPayment, type CsvPlan } from './csv.js';
import { FirstLook, NotSortedError, type SkippedCustomer } from './first-look.js';
import type { CustomerGroup, Duplicate, GroupLoan, GroupPayment, RawCounts, RawCustomer } from './groups.js';
import { csvRecordBatches, type ProblemSink } from './rows.js';
import { csvDelimiter, type Mapping } from '../mapping/mapping.js';
import type { InputSource } from '../sources.js';
import type { RowMap } from './line-sort.js';
import { compareIds } from './staging.js';

export { NotSortedError };

/**
 * The fast path for the common case: one file with a row per payment, sorted by customer id (as
 * LMS exports usually are). Customers are assembled as their rows go by, without staging, and
 * come out exactly as the staging would give them (same order, same last-wins, same duplicates),
 * so chunks, and therefore `--resume`, are the same either way. A row of a customer that sorts
 * before the previous one proves the file unsorted: NotSortedError, and the caller stages instead.
 *
 * A run keeping the record of what was sent reads through a first look (first-look.ts), which
 * takes out, before they are parsed, the customers whose lines are those recorded as sent: they
 * come out here in their place, with their counts only (`unchanged`). The others carry their
 * lines (`raw`) when the first look is sure they are exactly the customer's rows, for the record.
 */

export interface StreamOptions {
  mapping: Mapping;
  /** Index of this file among the run's sources (for rejects). */
  src: number;
  problems: ProblemSink;
  hash?: Hash;
  onRows?: RowsListener;
  /**
   * Given (a run that keeps the record of what was sent), asked with customers' lines (many at a
   * time) before anything is parsed: for each, the counts recorded with them when they are lines
   * recorded as sent, and the customer is then yielded with those counts only (`unchanged`).
   * Other customers carry their lines (`raw`) when the first look is sure of them.
   */
  unchanged?: (raws: readonly RawCustomer[]) => (RawCounts | undefined)[];
  /** The input is an export sorted here (line-sort.ts): its rows are numbered as the file's. */
  rows?: RowMap;
}

/** A readable row of a file with a row per payment (a loan row, with or without a payment). */
interface ReadRow {
  loanId: string;
  paymentId: string;
  cells: string[];
  row: number;
}

interface PendingCustomer {
  customerId: string;
  /** Last row of each loan (the one that wins), with its cells, converted only at the end. */
  loans: Map<string, ReadRow>;
  /** Each loan's payments, converted as read, in the file's order. */
  payments: Map<string, GroupPayment[]>;
  /** Readable rows. */
  rows: number;
  paymentRows: number;
}

/** Told the rows read as they go by, every 5,000, and a last time (`last`) when the reading ends. */
export type RowsListener = (rows: number, last?: boolean) => void;

export async function* streamGroups(input: InputSource, options: StreamOptions): AsyncGenerator<CustomerGroup, number> {
  const { src, problems } = options;
  const look = options.unchanged
    ? new FirstLook([{ input, src, role: 'rows', hash: options.hash }], options.mapping, options.unchanged)
    : undefined;
  const order = new CustomerOrder(options.onRows);
  let plan: CsvPlan | undefined;
  let current: PendingCustomer | undefined;
  const source = look ? look.inputs[0]! : input;
  const rows = options.rows;
  try {
    for await (const batch of csvRecordBatches(
      source,
      csvDelimiter(options.mapping),
      look ? undefined : options.hash,
    )) {
      for (const { cells, row: line } of batch) {
        if (line === 1 && plan === undefined) {
          plan = planCsv(input.name, 'rows', options.mapping, cells);
          continue;
        }
        const row = rows ? rows.of(line) : line;
        order.count(1);
        const inspected = inspectRow(plan!, cells);
        if (!inspected.ok) {
          problems({ src, row, ...inspected.problem });
          continue;
        }
        const { customerId, loanId, paymentId } = inspected;
        if (current === undefined || current.customerId !== customerId) {
          if (current !== undefined) {
            // Found unsorted before the customer before is handed on, as without a first look.
            if (compareIds(customerId, current.customerId) < 0)
              throw new NotSortedError(row, customerId, current.customerId);
            yield finish(plan!, current, src, look);
          }
          if (look) yield* order.skipped(look.takeSkipped(customerId), () => input.name);
          order.next(customerId, row);
          current = { customerId, loans: new Map(), payments: new Map(), rows: 0, paymentRows: 0 };
        }
        current.rows++;
        current.loans.set(loanId, { loanId, paymentId, cells, row });
        if (!inspected.hasPayment) continue;
        current.paymentRows++;
        let list = current.payments.get(loanId);
        if (!list) current.payments.set(loanId, (list = []));
        list.push(paymentOf(plan!, cells, paymentId, src, row));
      }
    }
    if (current !== undefined) yield finish(plan!, current, src, look);
    if (look) yield* order.skipped(look.takeSkipped(), () => input.name);
    return order.rows;
  } finally {
    order.end();
  }
}

/**
 * The customers handed on, in order: each must sort after the one before, the customers the first
 * look took out included (so that a customer whose rows are split is never skipped in part: the
 * export is then staged, as any unsorted one). Also counts the rows read.
 */
export class CustomerOrder {
  private previous: string | undefined;
  rows = 0;
  private told = 0;

  constructor(private readonly onRows?: RowsListener) {}

  count(rows: number): void {
    const before = this.rows;
    this.rows += rows;
    if (this.onRows && Math.floor(this.rows / 5000) > Math.floor(before / 5000)) {
      this.told = this.rows;
      this.onRows(this.rows);
    }
  }

  /**
   * The rows read, told once more as the reading ends, however it ends: a run stopped between two
   * reports (a small export, Ctrl-C) counted none of the rows read since the last one.
   */
  end(): void {
    if (this.onRows && this.rows !== this.told) {
      this.told = this.rows;
      this.onRows(this.rows, true);
    }
  }

  /** The next customer, first seen at `row` (of `file`, when the run reads more than one). */
  next(customerId: string, row: number, file?: string): void {
    if (this.previous !== undefined && compareIds(customerId, this.previous) <= 0)
      throw new NotSortedError(row, customerId, this.previous, file);
    this.previous = customerId;
  }

  *skipped(customers: readonly SkippedCustomer[], file: (src: number) => string | undefined): Generator<CustomerGroup> {
    for (const s of customers) {
      this.next(s.customerId, s.origin.row, file(s.origin.src));
      this.count(s.rows);
      yield {
        customerId: s.customerId,
        origin: s.origin,
        errors: [],
        loans: [],
        orphans: [],
        duplicates: [],
        unchanged: s.counts,
      };
    }
  }
}

/** The customer as the staging would give it: loans by id, payments by id, the last of equal ids winning. */
function finish(plan: CsvPlan, pending: PendingCustomer, src: number, look: FirstLook | undefined): CustomerGroup {
  const customerId = pending.customerId;
  const loanIds = [...pending.loans.keys()].sort(compareIds);
  let first: { src: number; row: number } | undefined;
  for (const loanId of loanIds) {
    const { row } = pending.loans.get(loanId)!;
    if (first === undefined || row < first.row) first = { src, row };
  }
  const origin = first ?? { src, row: 0 };
  const duplicates: Duplicate[] = [];
  const loans: GroupLoan[] = [];
  for (const loanId of loanIds) {
    const { cells, row } = pending.loans.get(loanId)!;
    const { fields, errors } = readLoan(plan, cells);
    const payments = winners(customerId, loanId, pending.payments.get(loanId) ?? [], duplicates);
    loans.push({ loanId, src, row, fields, errors, payments });
  }
  const group: CustomerGroup = { customerId, origin, errors: [], loans, orphans: [], duplicates };
  const raw = look?.rawFor(customerId, [pending.rows]);
  if (raw) group.raw = { ...raw, loans: pending.loans.size, payments: pending.paymentRows };
  return group;
}

/** A readable row of a file of the two-file export: its ids and its cells. */
interface HeadRow {
  customerId: string;
  loanId: string;
  paymentId: string;
  cells: string[];
  row: number;
}

/** A CSV file's rows that can be read (others go to `problems` as they are met), one at a time. */
class RowCursor {
  private batch: { cells: string[]; row: number }[] = [];
  private index = 0;
  private plan: CsvPlan | undefined;
  /** The header's cells, once read. */
  header: string[] | undefined;
  private head: HeadRow | undefined;
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

  /**
   * The next readable row, without taking it, when the rows already read hold one; otherwise
   * undefined, and `peek` (which reads on) says whether there is one. Saves a wait per row.
   */
  peekRead(): HeadRow | undefined {
    if (this.head !== undefined) return this.head;
    const batch = this.batch;
    while (this.index < batch.length) {
      const { cells, row: line } = batch[this.index++]!;
      if (line === 1 && this.plan === undefined) {
        this.plan = planCsv(this.input.name, this.role, this.options.mapping, cells);
        this.header = cells;
        continue;
      }
      const row = this.options.rows ? this.options.rows.of(line) : line;
      this.rows++;
      this.counted();
      const inspected = inspectRow(this.plan!, cells);
      if (!inspected.ok) {
        this.options.problems({ src: this.src, row, ...inspected.problem });
        continue;
      }
      const { customerId, loanId, paymentId } = inspected;
      return (this.head = { customerId, loanId, paymentId, cells, row });
    }
    return undefined;
  }

  /** The next readable row, without taking it; undefined at the end. */
  async peek(): Promise<HeadRow | undefined> {
    while (this.peekRead() === undefined && !this.ended) {
      const next = await this.iterator.next();
      if (next.done) this.ended = true;
      else {
        this.batch = next.value;
        this.index = 0;
      }
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

export interface TwoFileOptions extends Omit<StreamOptions, 'src' | 'hash' | 'rows'> {
  loans: TwoFileInput;
  payments: TwoFileInput;
}

interface TwoFileInput {
  input: InputSource;
  src: number;
  /** See StreamOptions.rows. */
  rows?: RowMap;
}

/**
 * The fast path for two files (`--loans`, `--payments`), each sorted by customer id: they are read
 * side by side and each customer is assembled from both as its rows go by, exactly as the staging
 * would give it (loans by id, the last row of a loan winning and earlier ones its duplicates;
 * payments by id, the last winning; payments of a loan not in the loans file as orphans). A row of
 * a customer that sorts before the previous one proves a file unsorted: NotSortedError.
 */
export async function* streamTwoFiles(options: TwoFileOptions): AsyncGenerator<CustomerGroup, number> {
  const order = new CustomerOrder(options.onRows);
  const counted = () => order.count(1);
  const look = options.unchanged
    ? new FirstLook(
        [
          { input: options.loans.input, src: options.loans.src, role: 'loans' },
          { input: options.payments.input, src: options.payments.src, role: 'payments' },
        ],
        options.mapping,
        options.unchanged,
      )
    : undefined;
  const cursor = (file: TwoFileInput, role: 'loans' | 'payments', index: number) =>
    new RowCursor(
      file.input,
      role,
      { mapping: options.mapping, problems: options.problems, src: file.src, rows: file.rows },
      file.src,
      csvRecordBatches(look ? look.inputs[index]! : file.input, csvDelimiter(options.mapping)),
      counted,
    );
  const loans = cursor(options.loans, 'loans', 0);
  const payments = cursor(options.payments, 'payments', 1);
  const fileOf = (src: number) => (src === options.loans.src ? options.loans : options.payments).input.name;
  try {
    while (true) {
      const l = loans.peekRead() ?? (await loans.peek());
      const p = payments.peekRead() ?? (await payments.peek());
      if (l === undefined && p === undefined) break;
      const customerId =
        l === undefined
          ? p!.customerId
          : p === undefined
            ? l.customerId
            : compareIds(l.customerId, p.customerId) <= 0
              ? l.customerId
              : p.customerId;
      if (look) yield* order.skipped(look.takeSkipped(customerId), fileOf);
      const at = l !== undefined && l.customerId === customerId ? l : p!;
      order.next(customerId, at.row, (at === l ? options.loans : options.payments).input.name);
      const loanRows = new Map<string, HeadRow[]>();
      let loanLines = 0;
      for (let r = l; r !== undefined && r.customerId === customerId; r = loans.peekRead() ?? (await loans.peek())) {
        let list = loanRows.get(r.loanId);
        if (!list) loanRows.set(r.loanId, (list = []));
        list.push(r);
        loanLines++;
        loans.take();
      }
      const paymentRows = new Map<string, GroupPayment[]>();
      let paymentLines = 0;
      const src = payments.src;
      // A loan's payments usually come together: its list is looked up when the loan changes.
      let loanId: string | undefined;
      let list: GroupPayment[] = [];
      for (
        let r = p;
        r !== undefined && r.customerId === customerId;
        r = payments.peekRead() ?? (await payments.peek())
      ) {
        if (r.loanId !== loanId) {
          loanId = r.loanId;
          const known = paymentRows.get(loanId);
          if (known) list = known;
          else paymentRows.set(loanId, (list = []));
        }
        list.push(paymentOf(payments.csvPlan, r.cells, r.paymentId, src, r.row));
        paymentLines++;
        payments.take();
      }
      const group = assemble(customerId, loanRows, paymentRows, loans);
      const raw = look?.rawFor(customerId, [loanLines, paymentLines]);
      if (raw) group.raw = { ...raw, loans: loanRows.size, payments: paymentLines };
      yield group;
    }
    if (look) yield* order.skipped(look.takeSkipped(), fileOf);
  } finally {
    order.end();
    await loans.close();
    await payments.close();
  }
  return order.rows;
}

function assemble(
  customerId: string,
  loanRows: Map<string, HeadRow[]>,
  paymentRows: Map<string, GroupPayment[]>,
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

/** A payment row, converted. */
function paymentOf(plan: CsvPlan, cells: readonly string[], paymentId: string, src: number, row: number): GroupPayment {
  const { fields, errors } = readPayment(plan, cells);
  return { paymentId, src, row, fields, errors };
}

/**
 * Payments of a loan by id, the last of equal ids winning; the others are recorded as duplicates.
 * `list` is in the order read, so a stable sort keeps equal ids in that order.
 */
function winners(customerId: string, loanId: string, list: GroupPayment[], duplicates: Duplicate[]): GroupPayment[] {
  let ascending = true;
  for (let i = 1; ascending && i < list.length; i++)
    ascending = compareIds(list[i - 1]!.paymentId, list[i]!.paymentId) < 0;
  // The usual case: ids already in order, none repeated.
  if (ascending) return list;
  const sorted = list.sort((a, b) => compareIds(a.paymentId, b.paymentId));
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
    payments.push(winner);
    i = last;
  }
  return payments;
}
