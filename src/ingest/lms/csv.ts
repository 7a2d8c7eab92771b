import type { Hash } from 'node:crypto';
import { InputError } from '../../errors.js';
import {
  compileLevel,
  csvDelimiter,
  delimiterHint,
  type CompiledLevel,
  type FieldError,
  type LevelReader,
  type Mapping,
} from '../mapping/mapping.js';
import { LEVEL_FIELDS, type Level } from '../mapping/fields.js';
import { readCsv, type ProblemSink, type RowProblem } from './rows.js';
import type { InputSource } from '../sources.js';
import type { Staging } from './staging.js';
import { checkHeaderNames } from '../table/reader.js';
import { FIELDS_FIT } from './groups.js';

/**
 * Flat CSV exports → staged loans and payments. Three roles:
 * - `loans`: one row per loan (`--loans`);
 * - `payments`: one row per payment, with its customer and loan ids (`--payments`);
 * - `rows`: one row per payment with the loan's columns repeated, a loan without payments being
 *   a row with empty payment columns (positional FILE).
 */
export type CsvRole = 'loans' | 'payments' | 'rows';

const PAYMENT_FIELDS = Object.keys(LEVEL_FIELDS.payment);

/** Fields an export must map for each role, or every row would be refused. */
function requiredFields(role: CsvRole, hasPayments: boolean): { level: Level; fields: string[] }[] {
  const loan = { level: 'loan' as const, fields: ['loan_id', 'loan_amount', 'applied_at', 'is_lead_loan'] };
  const customer = { level: 'customer' as const, fields: ['customer_id'] };
  const payment = { level: 'payment' as const, fields: ['payment_id', 'payment_at'] };
  if (role === 'loans') return [customer, loan];
  if (role === 'payments')
    return [{ level: 'payment', fields: ['customer_id', 'loan_id', 'payment_id', 'payment_at'] }];
  return hasPayments ? [customer, loan, payment] : [customer, loan];
}

/** How to read a CSV file's rows, worked out once from its header. */
export interface CsvPlan {
  role: CsvRole;
  width: number;
  customerIndex: number;
  loanIndex: number;
  paymentIndex: number;
  paymentColumns: number[];
  loanReader?: LevelReader;
  paymentReader?: LevelReader;
}

/** Compiles the mapping against a header; throws InputError (exit 2) when columns are missing. */
export function planCsv(file: string, role: CsvRole, mapping: Mapping, header: readonly string[]): CsvPlan {
  checkHeaderNames(file, header);
  const compiled: Partial<Record<'customer' | 'loan' | 'payment' | 'keys', CompiledLevel>> = {};
  const plan: CsvPlan = {
    role,
    width: header.length,
    customerIndex: -1,
    loanIndex: -1,
    paymentIndex: -1,
    paymentColumns: [],
  };
  if (role === 'payments') {
    compiled.keys = compileLevel(mapping, 'payment', header, { strictColumns: true, only: ['customer_id', 'loan_id'] });
    compiled.payment = compileLevel(mapping, 'payment', header, { strictColumns: true, only: PAYMENT_FIELDS });
    plan.customerIndex = compiled.keys.reader.columnIndex('customer_id');
    plan.loanIndex = compiled.keys.reader.columnIndex('loan_id');
  } else {
    compiled.customer = compileLevel(mapping, 'customer', header, { strictColumns: true, only: ['customer_id'] });
    compiled.loan = compileLevel(mapping, 'loan', header, { strictColumns: true });
    plan.customerIndex = compiled.customer.reader.columnIndex('customer_id');
    plan.loanIndex = compiled.loan.reader.columnIndex('loan_id');
    plan.loanReader = compiled.loan.reader;
    if (role === 'rows')
      compiled.payment = compileLevel(mapping, 'payment', header, { strictColumns: true, only: PAYMENT_FIELDS });
  }
  if (compiled.payment && compiled.payment.reader.fields.size > 0) {
    const reader = compiled.payment.reader;
    plan.paymentReader = reader;
    plan.paymentIndex = reader.columnIndex('payment_id');
    plan.paymentColumns = PAYMENT_FIELDS.map((f) => reader.columnIndex(f)).filter((i) => i >= 0);
  }
  checkHeader(file, role, compiled, plan.paymentReader !== undefined, delimiterHint(header, mapping));
  return plan;
}

/** A row's ids, or why it cannot be read at all (it is then rejected as a whole). */
export type InspectedRow =
  | { ok: true; customerId: string; loanId: string; paymentId: string; hasPayment: boolean }
  | { ok: false; problem: Omit<RowProblem, 'src' | 'row'> };

function hasPaymentCells(plan: CsvPlan, cells: readonly string[]): boolean {
  if (plan.paymentReader === undefined) return false;
  if (plan.role === 'payments') return true;
  const columns = plan.paymentColumns;
  for (let i = 0; i < columns.length; i++) {
    const cell = cells[columns[i]!];
    if (cell !== undefined && cell !== '' && cell.trim() !== '') return true;
  }
  return false;
}

export function inspectRow(plan: CsvPlan, cells: readonly string[]): InspectedRow {
  const hasPayment = hasPaymentCells(plan, cells);
  const customerId = (cells[plan.customerIndex] ?? '').trim();
  const loanId = (cells[plan.loanIndex] ?? '').trim();
  const paymentId = hasPayment ? (cells[plan.paymentIndex] ?? '').trim() : '';
  if (cells.length === plan.width && customerId !== '' && loanId !== '' && (!hasPayment || paymentId !== '')) {
    return { ok: true, customerId, loanId, paymentId, hasPayment };
  }
  const level: Level = hasPayment ? 'payment' : 'loan';
  const ids = { customerId: customerId || undefined, loanId: loanId || undefined, paymentId: paymentId || undefined };
  if (cells.length !== plan.width)
    return {
      ok: false,
      problem: {
        level,
        ...ids,
        reason: `has ${cells.length} column${cells.length === 1 ? '' : 's'}; the header has ${plan.width}`,
      },
    };
  if (customerId === '' || loanId === '')
    return {
      ok: false,
      problem: { level, ...ids, field: customerId === '' ? 'customer_id' : 'loan_id', reason: 'required' },
    };
  if (hasPayment && paymentId === '')
    return { ok: false, problem: { level: 'payment', ...ids, field: 'payment_id', reason: 'required' } };
  return { ok: true, customerId, loanId, paymentId, hasPayment };
}

/** The columns a plan reads a loan from (empty for a payments file). */
export function loanColumnIndices(plan: CsvPlan): number[] {
  const reader = plan.loanReader;
  if (!reader) return [];
  return [...reader.fields].map((f) => reader.columnIndex(f)).filter((i) => i >= 0);
}

export function readLoan(
  plan: CsvPlan,
  cells: readonly string[],
): { fields: Record<string, unknown>; errors: FieldError[] } {
  const fields: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  plan.loanReader!.read(cells, fields, errors);
  return { fields, errors };
}

export function readPayment(
  plan: CsvPlan,
  cells: readonly string[],
): { fields: Record<string, unknown>; errors: readonly FieldError[] } {
  const fields: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  const reader = plan.paymentReader!;
  reader.read(cells, fields, errors);
  return { fields, errors: errors.length === 0 && reader.fitting ? FIELDS_FIT : errors };
}

export interface StageCsvOptions {
  staging: Staging;
  mapping: Mapping;
  problems: ProblemSink;
  hash?: Hash;
  /** Called every few thousand rows with the running count (progress). */
  onRows?: (rows: number) => void;
  /**
   * A quick check of a payment's converted fields (true only when the service's schema would
   * accept them): a payment that passes is staged as the JSON it is sent as, with no errors, so
   * that reading it back needs no parsing and no second check.
   */
  precheckPayment?: (fields: Record<string, unknown>) => boolean;
  /** Loans remembered to recognise their repeated rows (default RECENT_LOANS; tests make it small). */
  recentLoans?: number;
}

/** Loans remembered to recognise their repeated rows in a file that is not sorted (a few MB). */
const RECENT_LOANS = 20_000;

export async function stageCsv(input: InputSource, role: CsvRole, options: StageCsvOptions): Promise<number> {
  const { staging, mapping, problems } = options;
  const precheck = options.precheckPayment;
  const src = staging.addSource(input.name);
  let plan: CsvPlan;
  // The loan of a one-row-per-payment file is staged once per run of rows, from the run's last row.
  let held: { customerId: string; loanId: string; cells: string[]; row: number } | undefined;
  let count = 0;

  const stageLoan = (customerId: string, loanId: string, cells: string[], row: number, repeat: boolean): number => {
    const { fields, errors } = readLoan(plan, cells);
    return staging.putLoan(
      customerId,
      loanId,
      { src, row },
      JSON.stringify(fields),
      errors.length ? JSON.stringify(errors) : null,
      repeat,
    );
  };
  // In a file with a row per payment, a loan's columns repeat on each of its rows. Sorted, a loan's
  // rows come together and it is staged once, from the last of them. In any other order, a row
  // whose loan columns are those of a copy staged a little earlier (still in this bounded cache)
  // is staged as a reference to that copy, once, for the last such row: the same result as staging
  // each row in full (the last one wins), without converting, storing and sorting them all.
  const recent = new Map<
    string,
    { customerId: string; loanId: string; cells: string; rowid: number; lastRow?: number }
  >();
  let loanColumns: number[] = [];
  const settle = (entry: { customerId: string; loanId: string; rowid: number; lastRow?: number }) => {
    if (entry.lastRow !== undefined)
      staging.putLoanRepeat(entry.customerId, entry.loanId, { src, row: entry.lastRow }, entry.rowid);
  };
  const flushHeld = () => {
    if (!held) return;
    const { customerId, loanId, cells, row } = held;
    held = undefined;
    const key = `${customerId}\u0000${loanId}`;
    // join makes a flat copy: the cache holds no slice of the file's text.
    const print = loanColumns.map((i) => cells[i] ?? '').join('\u0000');
    const known = recent.get(key);
    if (known !== undefined) {
      recent.delete(key);
      if (known.cells === print) {
        known.lastRow = row;
        recent.set(key, known);
        return;
      }
      settle(known);
    }
    const rowid = stageLoan(customerId, loanId, cells, row, true);
    recent.set(key, { customerId, loanId, cells: print, rowid });
    if (recent.size > (options.recentLoans ?? RECENT_LOANS)) {
      const oldest = recent.keys().next().value!;
      settle(recent.get(oldest)!);
      recent.delete(oldest);
    }
  };

  const header = (cells: string[]) => {
    plan = planCsv(input.name, role, mapping, cells);
    loanColumns = loanColumnIndices(plan);
  };

  const row = (cells: string[], rowNumber: number) => {
    count++;
    if (options.onRows && count % 5000 === 0) options.onRows(count);
    const inspected = inspectRow(plan, cells);
    if (!inspected.ok) {
      problems({ src, row: rowNumber, ...inspected.problem });
      return;
    }
    const { customerId, loanId, paymentId } = inspected;
    if (role === 'loans') {
      stageLoan(customerId, loanId, cells, rowNumber, false);
      return;
    }
    if (role === 'rows') {
      if (held && (held.customerId !== customerId || held.loanId !== loanId)) flushHeld();
      held = { customerId, loanId, cells, row: rowNumber };
    }
    if (!inspected.hasPayment) return;
    const { fields, errors } = readPayment(plan, cells);
    // errors null: checked and valid as sent (see StagedRow.errors); otherwise the list, perhaps empty.
    const checked = errors.length === 0 && precheck !== undefined && precheck(fields);
    staging.putPayment(
      customerId,
      loanId,
      paymentId,
      { src, row: rowNumber },
      JSON.stringify(fields),
      checked ? null : JSON.stringify(errors),
    );
  };

  const rows = await readCsv(input, csvDelimiter(mapping), { header, row }, options.hash);
  flushHeld();
  for (const entry of recent.values()) settle(entry);
  return rows;
}

function checkHeader(
  file: string,
  role: CsvRole,
  compiled: Partial<Record<'customer' | 'loan' | 'payment' | 'keys', CompiledLevel>>,
  hasPayments: boolean,
  delimiterAdvice: string | undefined,
): void {
  const missing: string[] = [];
  for (const part of Object.values(compiled)) {
    for (const m of part!.missingColumns) missing.push(`"${m.column}" (${part!.reader.level}.${m.field})`);
  }
  const mapped = (level: Level, field: string): boolean => {
    if (level === 'payment' && role === 'payments' && (field === 'customer_id' || field === 'loan_id'))
      return compiled.keys!.reader.fields.has(field);
    return compiled[level]?.reader.fields.has(field) ?? false;
  };
  const unmapped: string[] = [];
  for (const { level, fields } of requiredFields(role, hasPayments)) {
    for (const field of fields) if (!mapped(level, field)) unmapped.push(`${level}.${field}`);
  }
  if (role !== 'payments' && !mapped('loan', 'lead_id') && !mapped('loan', 'management_system_id')) {
    unmapped.push('loan.lead_id or loan.management_system_id');
  }
  if (missing.length === 0 && unmapped.length === 0) return;
  const parts: string[] = [];
  if (missing.length) parts.push(`lacks the mapped column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`);
  if (unmapped.length)
    parts.push(
      `has no column (or constant) for the required field${unmapped.length > 1 ? 's' : ''} ${unmapped.join(', ')}`,
    );
  throw new InputError(
    parts.join('; and '),
    { file, row: 1 },
    {
      hint:
        delimiterAdvice ??
        'check the header against the mapping (`leadctl mapping init FILE` writes a starter mapping from a header)',
    },
  );
}
