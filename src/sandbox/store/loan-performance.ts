import type { Db } from './database.js';
import type { Statement } from 'better-sqlite3';

export const LOAN_FIELDS = [
  'lead_id',
  'management_system_id',
  'application_type',
  'loan_type',
  'loan_status',
  'loan_amount',
  'funded_amount',
  'first_payment_date',
  'applied_at',
  'esigned_at',
  'withdrawn_at',
  'originated_at',
] as const;

export const PAYMENT_FIELDS = [
  'payment_amount',
  'payment_type',
  'payment_mode',
  'payment_status',
  'principal',
  'interest',
  'fees',
  'bank_routing_number',
  'bank_account_number',
  'return_code',
  'returned_at',
  'fail_code',
  'failed_at',
  'payment_at',
] as const;

/**
 * Which PAYMENT_FIELDS a payment sent, a bit each in PAYMENT_FIELDS' order. Each field is read by
 * name: a read by a key held in a variable costs several times more, and a batch reads 14 fields
 * of each of a million payments twice.
 */
function sentPaymentFields(p: PaymentInput): number {
  return (
    (p.payment_amount != null ? 1 : 0) |
    (p.payment_type != null ? 2 : 0) |
    (p.payment_mode != null ? 4 : 0) |
    (p.payment_status != null ? 8 : 0) |
    (p.principal != null ? 16 : 0) |
    (p.interest != null ? 32 : 0) |
    (p.fees != null ? 64 : 0) |
    (p.bank_routing_number != null ? 128 : 0) |
    (p.bank_account_number != null ? 256 : 0) |
    (p.return_code != null ? 512 : 0) |
    (p.returned_at != null ? 1024 : 0) |
    (p.fail_code != null ? 2048 : 0) |
    (p.failed_at != null ? 4096 : 0) |
    (p.payment_at != null ? 8192 : 0)
  );
}

/**
 * Writes the fields of `p` that `sent` names (sentPaymentFields' bits) into values[v..]; returns
 * the next index. Both functions follow PAYMENT_FIELDS' order: the batch statements name their
 * columns from it (a contract test sends every field and reads each back).
 */
function putPaymentFields(p: PaymentInput, sent: number, values: unknown[], v: number): number {
  if ((sent & 1) !== 0) values[v++] = p.payment_amount ?? null;
  if ((sent & 2) !== 0) values[v++] = p.payment_type ?? null;
  if ((sent & 4) !== 0) values[v++] = p.payment_mode ?? null;
  if ((sent & 8) !== 0) values[v++] = p.payment_status ?? null;
  if ((sent & 16) !== 0) values[v++] = p.principal ?? null;
  if ((sent & 32) !== 0) values[v++] = p.interest ?? null;
  if ((sent & 64) !== 0) values[v++] = p.fees ?? null;
  if ((sent & 128) !== 0) values[v++] = p.bank_routing_number ?? null;
  if ((sent & 256) !== 0) values[v++] = p.bank_account_number ?? null;
  if ((sent & 512) !== 0) values[v++] = p.return_code ?? null;
  if ((sent & 1024) !== 0) values[v++] = p.returned_at ?? null;
  if ((sent & 2048) !== 0) values[v++] = p.fail_code ?? null;
  if ((sent & 4096) !== 0) values[v++] = p.failed_at ?? null;
  if ((sent & 8192) !== 0) values[v++] = p.payment_at ?? null;
  return v;
}

type Row = Record<string, unknown>;

/**
 * A batch stores a loan's payments in multi-row INSERTs of at most this many rows. Binding values
 * through better-sqlite3 is most of a payment's cost: one call per loan instead of per payment, the
 * values passed as arguments rather than in an array, and no NULL bound for a field no payment of
 * the chunk sent make a payment about 1.4x cheaper. Larger statements measured no better.
 */
const PAYMENT_ROWS = 32;
/** Prepared multi-row payment statements kept (by field set and row count); a batch rarely needs more than a few. */
const MAX_PAYMENT_STATEMENTS = 256;

/** A loan as sent: loan_id, optional is_lead_loan, and any of LOAN_FIELDS. */
export interface LoanInput extends Row {
  loan_id: string;
  is_lead_loan?: boolean;
}

export interface PaymentInput extends Row {
  payment_id: string;
}

/** A customer of a batch as sent: its loans carry their payments (other keys are ignored). */
export interface BatchCustomerInput {
  customer_id: string;
  loans: (LoanInput & { payments?: PaymentInput[] })[];
}

export type UpsertOutcome<T> = { created: boolean; data: T };

/**
 * Customers, loans and payments, upserted by their LMS ids. A field absent from a request
 * keeps its stored value (so the lead_loan of a customer upsert does not wipe the
 * esigned_at a loan upsert set); a field sent replaces it.
 */
export class LoanPerformanceStore {
  private readonly upsertCustomerStmt: Statement;
  private readonly upsertLoanStmt: Statement;
  private readonly insertCustomerStmt: Statement;
  private readonly insertLoanStmt: Statement;
  private readonly upsertPaymentStmt: Statement;
  private readonly batchPaymentStmts = new Map<number, Statement>();
  private readonly batchPaymentValues: unknown[] = [];
  /** A payment chunk's loan and timestamp, bound once a statement as @loan and @now (3 values a row fewer). */
  private readonly batchPaymentShared = { loan: 0, now: '' };
  private readonly customerRef: Statement;
  private readonly loanRef: Statement;
  private readonly paymentRef: Statement;
  private readonly customerById: Statement;
  private readonly loanById: Statement;
  private readonly paymentById: Statement;

  constructor(
    private readonly db: Db,
    private readonly accountId: number,
  ) {
    // Positional parameters: binding arrays is several times faster than named objects, which matters for batches.
    this.upsertCustomerStmt = db
      .prepare(
        `INSERT INTO customers (account_id, customer_id, created_at, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (account_id, customer_id) DO UPDATE SET updated_at = excluded.updated_at RETURNING id`,
      )
      .pluck();
    const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');
    const keepUnlessSent = (fields: readonly string[]) =>
      fields.map((f) => `${f} = coalesce(excluded.${f}, ${f})`).join(', ');
    this.upsertLoanStmt = db
      .prepare(
        `INSERT INTO loans (customer_ref, loan_id, ${LOAN_FIELDS.join(', ')}, created_at, updated_at, is_lead_loan)
         VALUES (?, ?, ${marks(LOAN_FIELDS.length)}, ?, ?, coalesce(?, 0))
         ON CONFLICT (customer_ref, loan_id) DO UPDATE SET ${keepUnlessSent(LOAN_FIELDS)}, updated_at = excluded.updated_at,
           is_lead_loan = coalesce(?, is_lead_loan)
         RETURNING id`,
      )
      .pluck();
    // A batch's customers and loans are mostly new: a plain insert gives the new id without RETURNING
    // (a temporary table a statement for SQLite, about 1.6x the insert's cost), and only a key already
    // stored takes the upsert.
    this.insertCustomerStmt = db.prepare(
      'INSERT INTO customers (account_id, customer_id, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    );
    this.insertLoanStmt = db.prepare(
      `INSERT INTO loans (customer_ref, loan_id, ${LOAN_FIELDS.join(', ')}, created_at, updated_at, is_lead_loan)
       VALUES (?, ?, ${marks(LOAN_FIELDS.length)}, ?, ?, coalesce(?, 0)) ON CONFLICT DO NOTHING`,
    );
    const upsertPayment = `INSERT INTO payments (loan_ref, payment_id, ${PAYMENT_FIELDS.join(', ')}, created_at, updated_at)
         VALUES (?, ?, ${marks(PAYMENT_FIELDS.length)}, ?, ?)
         ON CONFLICT (loan_ref, payment_id) DO UPDATE SET ${keepUnlessSent(PAYMENT_FIELDS)}, updated_at = excluded.updated_at`;
    this.upsertPaymentStmt = db.prepare(`${upsertPayment} RETURNING id`).pluck();
    this.customerRef = db.prepare('SELECT id FROM customers WHERE account_id = ? AND customer_id = ?').pluck();
    this.loanRef = db.prepare('SELECT id FROM loans WHERE customer_ref = ? AND loan_id = ?').pluck();
    this.paymentRef = db.prepare('SELECT id FROM payments WHERE loan_ref = ? AND payment_id = ?').pluck();
    this.customerById = db.prepare('SELECT customer_id, created_at, updated_at FROM customers WHERE id = ?');
    this.loanById = db.prepare(
      `SELECT c.customer_id, l.loan_id, l.is_lead_loan, ${LOAN_FIELDS.map((f) => 'l.' + f).join(', ')}, l.created_at, l.updated_at
       FROM loans l JOIN customers c ON c.id = l.customer_ref WHERE l.id = ?`,
    );
    this.paymentById = db.prepare(
      `SELECT c.customer_id, l.loan_id, p.payment_id, ${PAYMENT_FIELDS.map((f) => 'p.' + f).join(', ')}, p.created_at, p.updated_at
       FROM payments p JOIN loans l ON l.id = p.loan_ref JOIN customers c ON c.id = l.customer_ref WHERE p.id = ?`,
    );
  }

  /** Customer upsert: the customer and its lead loan. */
  upsertCustomer(customerId: string, leadLoan: LoanInput, now: string): UpsertOutcome<Row> {
    return this.db.transaction(() => {
      const created = this.customerRef.get(this.accountId, customerId) === undefined;
      const ref = this.upsertCustomerStmt.get(this.accountId, customerId, now, now) as number;
      const loanRef = this.upsertLoanStmt.get(this.loanParams(ref, { ...leadLoan, is_lead_loan: true }, now)) as number;
      return { created, data: { ...this.customerView(ref), lead_loan: this.loanView(loanRef) } };
    })();
  }

  /** Loan upsert; undefined when the customer is unknown. */
  upsertLoan(customerId: string, loan: LoanInput, now: string): UpsertOutcome<Row> | undefined {
    return this.db.transaction(() => {
      const customerRef = this.customerRef.get(this.accountId, customerId) as number | undefined;
      if (customerRef === undefined) return undefined;
      const created = this.loanRef.get(customerRef, loan.loan_id) === undefined;
      const ref = this.upsertLoanStmt.get(this.loanParams(customerRef, loan, now)) as number;
      return { created, data: this.loanView(ref) };
    })();
  }

  /** Payment upsert; says which of customer and loan is unknown. */
  upsertPayment(
    customerId: string,
    loanId: string,
    payment: PaymentInput,
    now: string,
  ): UpsertOutcome<Row> | 'customer' | 'loan' {
    return this.db.transaction(() => {
      const customerRef = this.customerRef.get(this.accountId, customerId) as number | undefined;
      if (customerRef === undefined) return 'customer' as const;
      const loanRef = this.loanRef.get(customerRef, loanId) as number | undefined;
      if (loanRef === undefined) return 'loan' as const;
      const created = this.paymentRef.get(loanRef, payment.payment_id) === undefined;
      const ref = this.upsertPaymentStmt.get(this.paymentParams(loanRef, payment, now)) as number;
      return { created, data: this.paymentView(ref) };
    })();
  }

  /**
   * Stores the accepted part of a batch in one transaction: an insert per customer and per loan
   * (then the upsert for one already stored), one statement per loan's payments. One parameter
   * array serves every loan and one every payment chunk: better-sqlite3 copies what it binds, and
   * a million short-lived arrays cost the collector more than the copying.
   */
  storeBatch(customers: BatchCustomerInput[], now: string): void {
    const loanParams: unknown[] = [];
    const store = this.db.transaction(() => {
      for (const customer of customers) {
        const ref = this.customerRefFor(customer.customer_id, now);
        for (const loan of customer.loans) {
          const loanRef = this.loanRefFor(this.loanParams(ref, loan, now, loanParams));
          const payments = loan.payments;
          if (payments === undefined) continue;
          for (let start = 0; start < payments.length; start += PAYMENT_ROWS)
            this.storePayments(loanRef, payments, start, Math.min(payments.length, start + PAYMENT_ROWS), now);
        }
      }
    });
    // Every reference bound here was just read from the store in this transaction, so the foreign
    // key checks (a lookup per payment) cannot fail; the pragma has no effect inside a transaction.
    this.db.pragma('foreign_keys = OFF');
    try {
      store();
    } finally {
      this.db.pragma('foreign_keys = ON');
    }
  }

  /** A batch's customer upsert: its id. */
  private customerRefFor(customerId: string, now: string): number {
    const inserted = this.insertCustomerStmt.run(this.accountId, customerId, now, now);
    if (inserted.changes === 1) return inserted.lastInsertRowid as number;
    return this.upsertCustomerStmt.get(this.accountId, customerId, now, now) as number;
  }

  /** A batch's loan upsert, with loanParams' parameters: its id. */
  private loanRefFor(params: unknown[]): number {
    // The insert takes the parameters but the last (is_lead_loan again, for the upsert's update).
    const isLeadLoan = params.pop();
    const inserted = this.insertLoanStmt.run(...params);
    params.push(isLeadLoan);
    if (inserted.changes === 1) return inserted.lastInsertRowid as number;
    return this.upsertLoanStmt.get(...params) as number;
  }

  /**
   * Upserts payments[start..end) of one loan in one statement. A field none of them sent is left
   * out of the statement: inserted as NULL, kept on update, as the one-row upsert's coalesce does.
   * Rows of one INSERT are upserted in order, so a payment id repeated in the chunk takes the later
   * fields, as when sent one by one.
   */
  private storePayments(loanRef: number, payments: PaymentInput[], start: number, end: number, now: string): void {
    let sent = 0;
    for (let p = start; p < end; p++) sent |= sentPaymentFields(payments[p]!);
    const values = this.batchPaymentValues;
    let v = 0;
    for (let p = start; p < end; p++) {
      values[v++] = payments[p]!.payment_id;
      v = putPaymentFields(payments[p]!, sent, values, v);
    }
    this.batchPaymentShared.loan = loanRef;
    this.batchPaymentShared.now = now;
    values[v++] = this.batchPaymentShared;
    values.length = v;
    this.batchPaymentStmt(sent, end - start).run(...values);
  }

  /** The multi-row payment upsert for the fields in `sent` (a bit per PAYMENT_FIELDS entry) and `rows` rows. */
  private batchPaymentStmt(sent: number, rows: number): Statement {
    const key = sent * (PAYMENT_ROWS + 1) + rows;
    let stmt = this.batchPaymentStmts.get(key);
    if (stmt === undefined) {
      const fields = PAYMENT_FIELDS.filter((_, f) => (sent & (1 << f)) !== 0);
      const row = `(@loan, ${Array.from({ length: fields.length + 1 }, () => '?').join(', ')}, @now, @now)`;
      stmt = this.db.prepare(
        `INSERT INTO payments (loan_ref, payment_id, ${fields.map((f) => `${f}, `).join('')}created_at, updated_at)
         VALUES ${Array.from({ length: rows }, () => row).join(', ')}
         ON CONFLICT (loan_ref, payment_id) DO UPDATE SET ${fields.map((f) => `${f} = coalesce(excluded.${f}, ${f}), `).join('')}updated_at = excluded.updated_at`,
      );
      if (this.batchPaymentStmts.size >= MAX_PAYMENT_STATEMENTS) this.batchPaymentStmts.clear();
      this.batchPaymentStmts.set(key, stmt);
    }
    return stmt;
  }

  /** The loan upsert's parameters, written into `into` (a batch reuses one array for all its loans). */
  private loanParams(customerRef: number, loan: LoanInput, now: string, into: unknown[] = []): unknown[] {
    into[0] = customerRef;
    into[1] = loan.loan_id;
    for (let f = 0; f < LOAN_FIELDS.length; f++) into[f + 2] = loan[LOAN_FIELDS[f]!] ?? null;
    const isLeadLoan = loan.is_lead_loan === undefined ? null : loan.is_lead_loan ? 1 : 0;
    into[LOAN_FIELDS.length + 2] = now;
    into[LOAN_FIELDS.length + 3] = now;
    into[LOAN_FIELDS.length + 4] = isLeadLoan;
    into[LOAN_FIELDS.length + 5] = isLeadLoan;
    return into;
  }

  /** The one-payment upsert's parameters. */
  private paymentParams(loanRef: number, payment: PaymentInput, now: string, into: unknown[] = []): unknown[] {
    into[0] = loanRef;
    into[1] = payment.payment_id;
    for (let f = 0; f < PAYMENT_FIELDS.length; f++) into[f + 2] = payment[PAYMENT_FIELDS[f]!] ?? null;
    into[PAYMENT_FIELDS.length + 2] = now;
    into[PAYMENT_FIELDS.length + 3] = now;
    return into;
  }

  private customerView(ref: number): Row {
    return this.customerById.get(ref) as Row;
  }

  private loanView(ref: number): Row {
    const row = this.loanById.get(ref) as Row;
    return { ...row, is_lead_loan: row.is_lead_loan === 1 };
  }

  private paymentView(ref: number): Row {
    return this.paymentById.get(ref) as Row;
  }
}
