import type { Hash } from 'node:crypto';
import {
  inspectRow,
  loanColumnIndices,
  planCsv,
  readLoan,
  readPayment,
  type CsvPlan,
  type InspectedRow,
} from './csv.js';
import type { CustomerGroup, Duplicate, GroupLoan, GroupPayment, RawCustomer } from './groups.js';
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
 *
 * A customer's rows are converted only once the customer is complete, so that a run keeping the
 * record of what was sent can first compare its raw rows with those recorded (`unchanged`) and
 * skip the conversion and the checks of a customer that did not change. The raw rows are the
 * cells of the customer's readable rows, sorted by loan id and payment id (stable: rows with equal
 * ids keep their file order), as JSON, which no cell can break: a customer whose rows come in
 * another order inside the file reads the same, whatever the line endings or quoting. Rows refused
 * as they are read (wrong width, no ids) are not part of it: they are refused either way.
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
  /**
   * Given (a run that keeps the record of what was sent), each group carries its customer's raw
   * rows (`raw`), and this is asked with them before anything is converted: true when they are
   * rows recorded as sent, and the customer is then yielded with its counts only (`unchanged`).
   */
  unchanged?: (raw: RawCustomer) => boolean;
}

interface PendingPayment extends GroupPayment {
  seq: number;
}

/** A payment row as read, converted only when its customer is (see above). */
interface PaymentRow {
  paymentId: string;
  src: number;
  row: number;
  cells: string[];
  seq: number;
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
  payments: Map<string, PaymentRow[]>;
  /** Every readable row, in file order: kept only when raw rows are asked for. */
  rows: ReadRow[] | undefined;
  paymentRows: number;
}

/** How raw rows are described and judged, worked out once from the header(s). */
interface RawLook {
  context: string;
  unchanged: (raw: RawCustomer) => boolean;
  /** Columns a loan is read from (file with a row per payment). */
  loanColumns: number[];
}

export async function* streamGroups(input: InputSource, options: StreamOptions): AsyncGenerator<CustomerGroup, number> {
  const { src, problems } = options;
  let plan: CsvPlan | undefined;
  let look: RawLook | undefined;
  let current: PendingCustomer | undefined;
  let seq = 0;
  let rows = 0;
  for await (const batch of csvRecordBatches(input, csvDelimiter(options.mapping), options.hash)) {
    for (const { cells, row } of batch) {
      if (row === 1 && plan === undefined) {
        plan = planCsv(input.name, 'rows', options.mapping, cells);
        if (options.unchanged)
          look = {
            context: `rows\n${JSON.stringify(cells)}`,
            unchanged: options.unchanged,
            loanColumns: loanColumnIndices(plan),
          };
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
          yield finish(plan!, current, src, look);
        }
        current = {
          customerId,
          loans: new Map(),
          payments: new Map(),
          rows: look ? [] : undefined,
          paymentRows: 0,
        };
      }
      const read: ReadRow = { loanId, paymentId, cells, row };
      current.loans.set(loanId, read);
      current.rows?.push(read);
      if (!inspected.hasPayment) continue;
      current.paymentRows++;
      let list = current.payments.get(loanId);
      if (!list) current.payments.set(loanId, (list = []));
      list.push({ paymentId, src, row, cells, seq: seq++ });
    }
  }
  if (current !== undefined) yield finish(plan!, current, src, look);
  return rows;
}

/** The customer as the staging would give it: loans by id, payments by id, the last of equal ids winning. */
function finish(plan: CsvPlan, pending: PendingCustomer, src: number, look: RawLook | undefined): CustomerGroup {
  const customerId = pending.customerId;
  const loanIds = [...pending.loans.keys()].sort(compareIds);
  let first: { src: number; row: number } | undefined;
  for (const loanId of loanIds) {
    const { row } = pending.loans.get(loanId)!;
    if (first === undefined || row < first.row) first = { src, row };
  }
  const origin = first ?? { src, row: 0 };
  let raw: RawCustomer | undefined;
  if (look) {
    raw = {
      customerId,
      context: look.context,
      text: once(() => rowsText(pending, look.loanColumns)),
      loans: pending.loans.size,
      payments: pending.paymentRows,
    };
    if (look.unchanged(raw)) return unchangedGroup(raw, origin);
  }
  const duplicates: Duplicate[] = [];
  const loans: GroupLoan[] = [];
  for (const loanId of loanIds) {
    const { cells, row } = pending.loans.get(loanId)!;
    const { fields, errors } = readLoan(plan, cells);
    const payments = winners(customerId, loanId, converted(plan, pending.payments.get(loanId) ?? []), duplicates);
    loans.push({ loanId, src, row, fields, errors, payments });
  }
  return { customerId, origin, errors: [], loans, orphans: [], duplicates, ...(raw ? { raw } : {}) };
}

function converted(plan: CsvPlan, rows: PaymentRow[]): PendingPayment[] {
  return rows.map(({ paymentId, src, row, cells, seq }) => ({ paymentId, src, row, seq, ...readPayment(plan, cells) }));
}

function unchangedGroup(raw: RawCustomer, origin: { src: number; row: number }): CustomerGroup {
  return {
    customerId: raw.customerId,
    origin,
    errors: [],
    loans: [],
    orphans: [],
    duplicates: [],
    raw,
    unchanged: { loans: raw.loans, payments: raw.payments },
  };
}

function once(make: () => string): () => string {
  let text: string | undefined;
  return () => (text ??= make());
}

const byIds = (a: { loanId: string; paymentId: string }, b: { loanId: string; paymentId: string }) =>
  compareIds(a.loanId, b.loanId) || compareIds(a.paymentId, b.paymentId);

/**
 * A file with a row per payment: its rows in canonical order, and for each loan which values of
 * its columns win (those of its last row in the file), named by the first sorted row of the loan
 * that has them. Where a loan's columns are the same on all its rows (the usual case) the row
 * order changes nothing; where they differ, the winning values are part of the raw rows.
 */
function rowsText(pending: PendingCustomer, loanColumns: readonly number[]): string {
  const rows = pending.rows!.slice().sort(byIds);
  const winners: number[] = [];
  for (let i = 0; i < rows.length; ) {
    const loanId = rows[i]!.loanId;
    const winner = pending.loans.get(loanId)!.cells;
    let at = -1;
    for (; i < rows.length && rows[i]!.loanId === loanId; i++)
      if (at < 0 && sameCells(rows[i]!.cells, winner, loanColumns)) at = i;
    winners.push(at);
  }
  return JSON.stringify([rows.map((r) => r.cells), winners]);
}

function sameCells(a: readonly string[], b: readonly string[], columns: readonly number[]): boolean {
  if (a === b) return true;
  for (let i = 0; i < columns.length; i++) if (a[columns[i]!] !== b[columns[i]!]) return false;
  return true;
}

/** A CSV file's rows that can be read (others go to `problems` as they are met), one at a time. */
class RowCursor {
  private batch: { cells: string[]; row: number }[] = [];
  private index = 0;
  private plan: CsvPlan | undefined;
  /** The header's cells, once read. */
  header: string[] | undefined;
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
        this.header = cells;
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
  let context: string | undefined;
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
      const paymentRows = new Map<string, PaymentRow[]>();
      for (let r = p; r !== undefined && r.customerId === customerId; r = await payments.peek()) {
        let list = paymentRows.get(r.loanId);
        if (!list) paymentRows.set(r.loanId, (list = []));
        list.push({ paymentId: r.paymentId, src: payments.src, row: r.row, cells: r.cells, seq: seq++ });
        payments.take();
      }
      let raw: RawCustomer | undefined;
      if (options.unchanged) {
        context ??= `loans+payments\n${JSON.stringify(loans.header ?? null)}\n${JSON.stringify(payments.header ?? null)}`;
        raw = twoFileRaw(customerId, context, loanRows, paymentRows);
        if (options.unchanged(raw)) {
          const at = l !== undefined && l.customerId === customerId ? l : p!;
          yield unchangedGroup(raw, { src: at === l ? loans.src : payments.src, row: at.row });
          continue;
        }
      }
      const group = assemble(customerId, loanRows, paymentRows, loans, payments);
      if (raw) group.raw = raw;
      yield group;
    }
  } finally {
    await loans.close();
    await payments.close();
  }
  return rows;
}

/** Two files: the customer's loan rows, then its payment rows, each in canonical order (see above). */
function twoFileRaw(
  customerId: string,
  context: string,
  loanRows: Map<string, { cells: string[]; row: number }[]>,
  paymentRows: Map<string, PaymentRow[]>,
): RawCustomer {
  let payments = 0;
  for (const list of paymentRows.values()) payments += list.length;
  return {
    customerId,
    context,
    loans: loanRows.size,
    payments,
    text: once(() => {
      const loans = [...loanRows.keys()].sort(compareIds).flatMap((id) => loanRows.get(id)!.map((r) => r.cells));
      const paid = [...paymentRows.keys()].sort(compareIds).flatMap((id) =>
        paymentRows
          .get(id)!
          .slice()
          .sort((a, b) => compareIds(a.paymentId, b.paymentId))
          .map((r) => r.cells),
      );
      return JSON.stringify([loans, paid]);
    }),
  };
}

function assemble(
  customerId: string,
  loanRows: Map<string, { cells: string[]; row: number }[]>,
  paymentRows: Map<string, PaymentRow[]>,
  loansFile: RowCursor,
  paymentsFile: RowCursor,
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
    const payments = winners(
      customerId,
      loanId,
      converted(paymentsFile.csvPlan, paymentRows.get(loanId) ?? []),
      paymentDuplicates,
    );
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
