import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { TempFolder } from './temp-folder.js';

export { removeStaleStaging } from './temp-folder.js';

/**
 * A temporary SQLite file that holds every staged row of an export, so that rows may come in any
 * order (payments before their loan, customers scattered across the file) while memory stays
 * bounded: rows go to disk as they are read, and come back grouped by customer, in one
 * deterministic order (binary order of the ids, then input order), whatever the input order was.
 *
 * Rows are written in multi-row INSERTs (prepared once) inside one long transaction with journaling
 * off (the file is thrown away after the run, so durability buys nothing). No index: reading back
 * in order is one ORDER BY, which SQLite's sorter does in sequential passes over the file (merge
 * runs in temporary files) rather than by a B-tree lookup per row, with a small page cache, so the
 * process stays small however big the export.
 */

/**
 * SQLite's page cache, in KiB. It also sets the memory of each sort (the loans' and the payments'
 * are both held while they are merged, through the whole push): 8 MiB put the two-file shuffled
 * push over its 250 MB bound (docs/benchmarks.md). Smaller saves little more and, past 256 sorted
 * runs (16-way merges), costs a third merge pass: a million payments (about 250 MB to sort) make
 * 125 runs of 2 MiB, merged in two passes as they were with 8 MiB.
 */
export const STAGING_CACHE_KIB = 2048;

/** Where a record came from: index into `sources`, and its row (or line) in that file. */
export interface Origin {
  src: number;
  row: number;
}

export interface StagedRow extends Origin {
  /** Insertion order: of two rows with the same ids, the later one wins. */
  seq: number;
  /** JSON of the converted fields; null when the row had none worth keeping. */
  data: string | null;
  /**
   * JSON array of conversion problems ({field, column?, reason}); null when none. For a payment,
   * null says more: the payment was checked when staged and `data` is its JSON as sent.
   */
  errors: string | null;
}

export interface StagedPayment extends StagedRow {
  paymentId: string;
}

export interface StagedLoan extends StagedRow {
  loanId: string;
  /** Other rows with the same loan that this one supersedes (only those that count as duplicates). */
  superseded: StagedRow[];
  payments: StagedPayment[];
}

export interface StagedCustomer {
  customerId: string;
  loans: StagedLoan[];
  /** Payments whose loan was not staged. */
  orphans: { loanId: string; payments: StagedPayment[] }[];
  /** Superseded payment rows, with the row that won. */
  duplicatePayments: { row: StagedPayment; winner: StagedPayment; loanId: string }[];
}

/** A whole customer staged as one JSON document (batch-shape input, customer upserts). */
export interface StagedDocument extends StagedRow {
  customerId: string;
  superseded: StagedRow[];
}

const FLUSH_ROWS = 64;
const META_ROW_BITS = 2 ** 32;

export class Staging {
  private readonly folder: TempFolder;
  private readonly db: Database.Database;
  private finished = false;
  private readonly buffers = {
    loans: [] as unknown[],
    payments: [] as unknown[],
    documents: [] as unknown[],
  };
  private readonly width = { loans: 6, payments: 6, documents: 5 } as const;
  private readonly statements = new Map<string, Database.Statement>();
  private counts = { loans: 0, payments: 0, documents: 0 };

  /** `sources`: the run's list of input names, shared with whoever names them in messages. */
  constructor(
    parentDir: string = tmpdir(),
    readonly sources: string[] = [],
  ) {
    // The database is closed before its folder goes, at close or at exit.
    this.folder = new TempFolder(parentDir, () => {
      if (this.db?.open) this.db.close();
    });
    try {
      // Created 0600 before SQLite opens it: it holds full SSNs and account numbers.
      const file = this.folder.path('staging.sqlite');
      closeSync(openSync(file, 'w', 0o600));
      this.db = new Database(file);
    } catch (err) {
      this.folder.close();
      throw this.failure(err);
    }
    this.guard(() => this.setUp());
  }

  private setUp(): void {
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.pragma('locking_mode = EXCLUSIVE');
    // The file can be gigabytes, the process stays small; the operating system's file cache does the rest.
    this.db.pragma(`cache_size = -${STAGING_CACHE_KIB}`);
    this.db.pragma('temp_store = FILE');
    this.db.exec(`
      CREATE TABLE loans (cust TEXT NOT NULL, loan TEXT NOT NULL, meta INTEGER NOT NULL, repeat INTEGER NOT NULL, data TEXT, errors TEXT);
      CREATE TABLE payments (cust TEXT NOT NULL, loan TEXT NOT NULL, pay TEXT NOT NULL, meta INTEGER NOT NULL, data TEXT, errors TEXT);
      CREATE TABLE documents (cust TEXT NOT NULL, meta INTEGER NOT NULL, data TEXT, errors TEXT, spare INTEGER);
    `);
    this.db.exec('BEGIN');
  }

  private failure(err: unknown): unknown {
    return this.folder.failure(err);
  }

  private guard<T>(work: () => T): T {
    try {
      return work();
    } catch (err) {
      throw this.failure(err);
    }
  }

  addSource(name: string): number {
    this.sources.push(name);
    return this.sources.length - 1;
  }

  /**
   * A loan row. `repeat` marks a loan repeated by design (the loan columns of a one-row-per-payment
   * file): its repetitions are not duplicates.
   */
  putLoan(
    customerId: string,
    loanId: string,
    origin: Origin,
    data: string | null,
    errors: string | null,
    repeat: boolean,
  ): number {
    this.buffers.loans.push(customerId, loanId, meta(origin), repeat ? 1 : 0, data, errors);
    this.counts.loans++;
    // Rows are only ever appended, so the table gives the nth loan row the rowid n.
    const rowid = this.counts.loans;
    if (this.buffers.loans.length >= FLUSH_ROWS * this.width.loans) this.flush('loans');
    return rowid;
  }

  /**
   * A later row repeats the loan row staged as `rowid` cell for cell (the loan columns of a file
   * with a row per payment): staged as a reference to it, read back as that row's content with this
   * row's origin, exactly as if the row had been staged in full (and, being later, won).
   */
  putLoanRepeat(customerId: string, loanId: string, origin: Origin, rowid: number): void {
    this.buffers.loans.push(customerId, loanId, meta(origin), -rowid, null, null);
    this.counts.loans++;
    if (this.buffers.loans.length >= FLUSH_ROWS * this.width.loans) this.flush('loans');
  }

  putPayment(
    customerId: string,
    loanId: string,
    paymentId: string,
    origin: Origin,
    data: string | null,
    errors: string | null,
  ): void {
    this.buffers.payments.push(customerId, loanId, paymentId, meta(origin), data, errors);
    this.counts.payments++;
    if (this.buffers.payments.length >= FLUSH_ROWS * this.width.payments) this.flush('payments');
  }

  putDocument(customerId: string, origin: Origin, data: string | null, errors: string | null): void {
    this.buffers.documents.push(customerId, meta(origin), data, errors, null);
    this.counts.documents++;
    if (this.buffers.documents.length >= FLUSH_ROWS * this.width.documents) this.flush('documents');
  }

  get staged(): { loans: number; payments: number; documents: number } {
    return { ...this.counts };
  }

  private flush(table: 'loans' | 'payments' | 'documents'): void {
    const buffer = this.buffers[table];
    if (buffer.length === 0) return;
    const width = this.width[table];
    const rows = buffer.length / width;
    const key = `${table}:${rows}`;
    let statement = this.statements.get(key);
    if (!statement) {
      const tuple = `(${new Array(width).fill('?').join(',')})`;
      statement = this.db.prepare(`INSERT INTO ${table} VALUES ${new Array(rows).fill(tuple).join(',')}`);
      this.statements.set(key, statement);
    }
    const run = statement;
    this.guard(() => run.run(buffer));
    buffer.length = 0;
  }

  /** Ends loading: writes what is buffered. Rows are read back sorted, without an index (see above). */
  finish(): void {
    if (this.finished) return;
    this.flush('loans');
    this.flush('payments');
    this.flush('documents');
    this.guard(() => this.db.exec('COMMIT'));
    this.finished = true;
  }

  /** Distinct customers staged (for progress and ETA). */
  customerCount(shape: 'flat' | 'documents'): number {
    this.finish();
    const sql =
      shape === 'flat'
        ? 'SELECT COUNT(*) FROM (SELECT cust FROM loans UNION SELECT cust FROM payments)'
        : 'SELECT COUNT(DISTINCT cust) FROM documents';
    return this.guard(() => this.db.prepare(sql).pluck().get() as number);
  }

  /** Loans and payments grouped by customer; of rows with the same ids, the last one read wins. */
  *customers(): Generator<StagedCustomer> {
    try {
      yield* this.readCustomers();
    } catch (err) {
      throw this.failure(err);
    }
  }

  private *readCustomers(): Generator<StagedCustomer> {
    this.finish();
    const loans = this.db
      .prepare('SELECT cust, loan, meta, repeat, data, errors, rowid FROM loans ORDER BY cust, loan, rowid')
      .raw()
      .iterate() as IterableIterator<unknown[]>;
    const payments = this.db
      .prepare('SELECT cust, loan, pay, meta, data, errors, rowid FROM payments ORDER BY cust, loan, pay, rowid')
      .raw()
      .iterate() as IterableIterator<unknown[]>;
    let loan = loans.next();
    let payment = payments.next();
    try {
      while (!loan.done || !payment.done) {
        const customerId = pickSmaller(
          loan.done ? undefined : (loan.value[0] as string),
          payment.done ? undefined : (payment.value[0] as string),
        );
        const customer: StagedCustomer = { customerId, loans: [], orphans: [], duplicatePayments: [] };
        while (true) {
          const loanCustomer = loan.done ? undefined : (loan.value[0] as string);
          const paymentCustomer = payment.done ? undefined : (payment.value[0] as string);
          if (loanCustomer !== customerId && paymentCustomer !== customerId) break;
          const loanId = pickSmaller(
            loanCustomer === customerId ? (loan.value![1] as string) : undefined,
            paymentCustomer === customerId ? (payment.value![1] as string) : undefined,
          );
          // Every row of this loan, the winner last.
          let staged: StagedLoan | undefined;
          let stagedRepeats = false;
          const superseded: StagedRow[] = [];
          // Repeated rows staged in full, by rowid, for the references to them (see putLoanRepeat).
          let copies: Map<number, { data: string | null; errors: string | null }> | undefined;
          while (!loan.done && loan.value[0] === customerId && loan.value[1] === loanId) {
            const v = loan.value;
            const repeat = v[3] as number;
            let data = v[4] as string | null;
            let errors = v[5] as string | null;
            if (repeat < 0) {
              const copy = copies?.get(-repeat);
              if (copy === undefined)
                throw new Error(`staging: loan row ${-repeat} referenced by row ${v[6]} is missing`);
              data = copy.data;
              errors = copy.errors;
            } else if (repeat === 1) {
              (copies ??= new Map()).set(v[6] as number, { data, errors });
            }
            if (staged && !stagedRepeats) superseded.push(stripLoan(staged));
            staged = {
              loanId,
              ...origin(v[2] as number),
              seq: v[6] as number,
              data,
              errors,
              superseded: [],
              payments: [],
            };
            stagedRepeats = repeat !== 0;
            loan = loans.next();
          }
          const paymentsOfLoan: StagedPayment[] = [];
          let previous: StagedPayment | undefined;
          while (!payment.done && payment.value[0] === customerId && payment.value[1] === loanId) {
            const v = payment.value;
            const row: StagedPayment = {
              paymentId: v[2] as string,
              ...origin(v[3] as number),
              seq: v[6] as number,
              data: v[4] as string | null,
              errors: v[5] as string | null,
            };
            if (previous && previous.paymentId === row.paymentId) {
              paymentsOfLoan.pop();
              customer.duplicatePayments.push({ row: previous, winner: row, loanId });
              // The winner of a longer run is only known at its end; fix earlier entries then.
              for (const d of customer.duplicatePayments) if (d.winner === previous) d.winner = row;
            }
            paymentsOfLoan.push(row);
            previous = row;
            payment = payments.next();
          }
          if (staged) {
            staged.superseded = superseded;
            staged.payments = paymentsOfLoan;
            customer.loans.push(staged);
          } else {
            customer.orphans.push({ loanId, payments: paymentsOfLoan });
          }
        }
        yield customer;
      }
    } finally {
      loans.return?.();
      payments.return?.();
    }
  }

  /** Whole-customer documents in customer order; of two with the same id, the last one read wins. */
  *documents(): Generator<StagedDocument> {
    try {
      yield* this.readDocuments();
    } catch (err) {
      throw this.failure(err);
    }
  }

  private *readDocuments(): Generator<StagedDocument> {
    this.finish();
    const rows = this.db
      .prepare('SELECT cust, meta, data, errors, rowid FROM documents ORDER BY cust, rowid')
      .raw()
      .iterate() as IterableIterator<unknown[]>;
    let current: StagedDocument | undefined;
    try {
      for (const v of rows) {
        const doc: StagedDocument = {
          customerId: v[0] as string,
          ...origin(v[1] as number),
          seq: v[4] as number,
          data: v[2] as string | null,
          errors: v[3] as string | null,
          superseded: [],
        };
        if (current && current.customerId === doc.customerId) {
          doc.superseded = [...current.superseded, stripDocument(current)];
        } else if (current) {
          yield current;
        }
        current = doc;
      }
      if (current) yield current;
    } finally {
      rows.return?.();
    }
  }

  /** Closes and deletes the file. Safe to call twice. */
  close(): void {
    this.folder.close();
  }
}

function meta(origin: Origin): number {
  return origin.src * META_ROW_BITS + origin.row;
}

function origin(value: number): Origin {
  const src = Math.floor(value / META_ROW_BITS);
  return { src, row: value - src * META_ROW_BITS };
}

function stripLoan(loan: StagedLoan): StagedRow {
  return { src: loan.src, row: loan.row, seq: loan.seq, data: loan.data, errors: loan.errors };
}

function stripDocument(doc: StagedDocument): StagedRow {
  return { src: doc.src, row: doc.row, seq: doc.seq, data: doc.data, errors: doc.errors };
}

/**
 * The smaller of two ids in SQLite's order (bytes of UTF-8, i.e. code points). JavaScript's `<`
 * compares UTF-16 units, which agrees except for characters beyond U+FFFF.
 */
export function compareIds(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 && y < 0xd800) return x - y;
    return (a.codePointAt(i) ?? 0) - (b.codePointAt(i) ?? 0) < 0 ? -1 : 1;
  }
  return a.length - b.length;
}

function pickSmaller(a: string | undefined, b: string | undefined): string {
  if (a === undefined) return b!;
  if (b === undefined) return a;
  return compareIds(a, b) <= 0 ? a : b;
}
