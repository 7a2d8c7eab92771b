import type { Hash } from 'node:crypto';
import { InputError } from '../../errors.js';
import {
  compileLevel,
  csvDelimiter,
  delimiterHint,
  type FieldError,
  type LevelReader,
  type Mapping,
} from '../mapping/mapping.js';
import { LEVEL_FIELDS, type Level } from '../mapping/fields.js';
import { checkHeaderNames } from '../table/reader.js';
import { readCsv, readJsonValues, type InputFormat, type ProblemSink } from './rows.js';
import type { InputSource } from '../sources.js';
import type { Staging } from './staging.js';

/**
 * Records for the single upserts (`customers push`, `loans push`, `payments push`): one row or
 * JSON object each, converted with the same mapping as the batch, staged under its ids so that a
 * repeated record is sent once (the last one read) and the order is deterministic.
 */

export type UpsertKind = 'customer' | 'loan' | 'payment';

/** The lead loan of a customer upsert carries only these. */
export const LEAD_LOAN_FIELDS = [
  'loan_id',
  'lead_id',
  'application_type',
  'loan_type',
  'loan_status',
  'loan_amount',
  'funded_amount',
  'first_payment_date',
  'applied_at',
];

const LOAN_UPSERT_FIELDS = Object.keys(LEVEL_FIELDS.loan).filter((f) => f !== 'is_lead_loan');

/** Which fields of which level make each kind of record. */
export const KIND_FIELDS: Record<UpsertKind, { level: Level; fields: string[] }[]> = {
  customer: [
    { level: 'customer', fields: ['customer_id'] },
    { level: 'loan', fields: LEAD_LOAN_FIELDS },
  ],
  loan: [
    { level: 'customer', fields: ['customer_id'] },
    { level: 'loan', fields: LOAN_UPSERT_FIELDS },
  ],
  payment: [
    { level: 'customer', fields: ['customer_id'] },
    { level: 'loan', fields: ['loan_id', 'lead_id', 'management_system_id'] },
    { level: 'payment', fields: Object.keys(LEVEL_FIELDS.payment) },
  ],
};

/** Either is enough for a loan or a payment (the service's rule). */
const LEAD_OR_SYSTEM = ['lead_id', 'management_system_id'] as const;

const REQUIRED: Record<UpsertKind, string[]> = {
  customer: ['customer.customer_id', 'loan.loan_id', 'loan.lead_id', 'loan.loan_amount', 'loan.applied_at'],
  loan: ['customer.customer_id', 'loan.loan_id', 'loan.loan_amount', 'loan.applied_at'],
  payment: ['customer.customer_id', 'loan.loan_id', 'payment.payment_id'],
};

/** A converted record as staged. */
export interface UpsertRecord {
  customerId: string;
  loanId?: string;
  paymentId?: string;
  /** The request body (the customer id goes in the path for loans and payments). */
  body: Record<string, unknown>;
  errors: FieldError[];
}

export function upsertKey(kind: UpsertKind, record: Pick<UpsertRecord, 'customerId' | 'loanId' | 'paymentId'>): string {
  if (kind === 'customer') return record.customerId;
  if (kind === 'loan') return `${record.customerId}\u0001${record.loanId ?? ''}`;
  return `${record.customerId}\u0001${record.loanId ?? ''}\u0001${record.paymentId ?? ''}`;
}

type Readers = { level: Level; reader: LevelReader }[];

function compileKind(
  kind: UpsertKind,
  mapping: Mapping,
  header: readonly string[],
  strict: boolean,
  file?: string,
): Readers {
  const readers: Readers = [];
  const absent: { level: Level; field: string; column: string }[] = [];
  for (const { level, fields } of KIND_FIELDS[kind]) {
    const compiled = compileLevel(mapping, level, header, { strictColumns: strict, only: fields, file });
    for (const m of compiled.missingColumns) absent.push({ level, ...m });
    readers.push({ level, reader: compiled.reader });
  }
  if (strict) {
    const mapped = (name: string) => {
      const [level, field] = name.split('.') as [Level, string];
      return readers.some((r) => r.level === level && r.reader.fields.has(field));
    };
    // A loan or payment needs a lead id or a management system id, not both: the batch's mapping
    // maps both (a payments file has no lead id column; the constant system id stands in).
    const missing = absent
      .filter(
        (m) =>
          kind === 'customer' ||
          m.level !== 'loan' ||
          !(LEAD_OR_SYSTEM as readonly string[]).includes(m.field) ||
          !LEAD_OR_SYSTEM.some((other) => other !== m.field && mapped(`loan.${other}`)),
      )
      .map((m) => `"${m.column}" (${m.level}.${m.field})`);
    const unmapped = REQUIRED[kind].filter((name) => !mapped(name));
    if (kind !== 'customer' && !mapped('loan.lead_id') && !mapped('loan.management_system_id'))
      unmapped.push('loan.lead_id or loan.management_system_id');
    if (missing.length || unmapped.length) {
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
            delimiterHint(header, mapping) ??
            'check the header against the mapping (`leadctl mapping init FILE` writes a starter mapping)',
        },
      );
    }
  }
  return readers;
}

function convert(kind: UpsertKind, readers: Readers, cells: readonly string[], errors: FieldError[]): UpsertRecord {
  const byLevel: Record<Level, Record<string, unknown>> = { customer: {}, loan: {}, payment: {} };
  for (const { level, reader } of readers) reader.read(cells, byLevel[level], errors);
  const customerId = typeof byLevel.customer.customer_id === 'string' ? byLevel.customer.customer_id : '';
  const loanId = typeof byLevel.loan.loan_id === 'string' ? byLevel.loan.loan_id : undefined;
  const paymentId = typeof byLevel.payment.payment_id === 'string' ? byLevel.payment.payment_id : undefined;
  let body: Record<string, unknown>;
  if (kind === 'customer') body = { customer_id: customerId, lead_loan: byLevel.loan };
  else if (kind === 'loan') body = byLevel.loan;
  else body = { ...byLevel.loan, ...byLevel.payment };
  return { customerId, loanId, paymentId, body, errors };
}

export interface StageUpsertOptions {
  staging: Staging;
  mapping: Mapping;
  problems: ProblemSink;
  hash?: Hash;
}

const problemLevel: Record<UpsertKind, Level> = { customer: 'customer', loan: 'loan', payment: 'payment' };

export async function stageUpserts(
  input: InputSource,
  kind: UpsertKind,
  format: InputFormat,
  options: StageUpsertOptions,
): Promise<number> {
  const { staging, mapping, problems } = options;
  const src = staging.addSource(input.name);
  const level = problemLevel[kind];
  const put = (record: UpsertRecord, row: number) => {
    if (record.customerId.trim() === '') {
      problems({
        src,
        row,
        level,
        loanId: record.loanId,
        paymentId: record.paymentId,
        field: 'customer_id',
        reason: record.errors.find((e) => e.field === 'customer_id')?.reason ?? 'required',
      });
      return;
    }
    staging.putDocument(upsertKey(kind, record), { src, row }, JSON.stringify(record), null);
  };

  if (format === 'csv') {
    let readers: Readers = [];
    let width = 0;
    return readCsv(
      input,
      csvDelimiter(mapping),
      {
        header(cells) {
          checkHeaderNames(input.name, cells);
          width = cells.length;
          readers = compileKind(kind, mapping, cells, true, input.name);
        },
        row(cells, row) {
          if (cells.length !== width) {
            problems({
              src,
              row,
              level,
              reason: `has ${cells.length} column${cells.length === 1 ? '' : 's'}; the header has ${width}`,
            });
            return;
          }
          put(convert(kind, readers, cells, []), row);
        },
      },
      options.hash,
    );
  }

  const allowed = new Set(KIND_FIELDS[kind].flatMap((k) => k.fields));
  const cache = new Map<string, Readers>();
  const onValue = (value: unknown, row: number) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      problems({ src, row, level, reason: `is not a ${kind} object` });
      return;
    }
    const flat: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const errors: FieldError[] = [];
    // The API's own shape nests the customer's loan; flat records carry its fields beside customer_id.
    if (kind === 'customer' && 'lead_loan' in flat) {
      const nested = flat.lead_loan;
      delete flat.lead_loan;
      if (nested && typeof nested === 'object' && !Array.isArray(nested)) Object.assign(flat, nested);
      else errors.push({ field: 'lead_loan', reason: 'must be an object' });
    }
    const keys = Object.keys(flat);
    const cells = keys.map((k) => {
      const v = flat[k];
      if (v !== null && typeof v === 'object') {
        errors.push({ field: k, reason: 'must be a single value, not an object or a list' });
        return '';
      }
      return v === null || v === undefined ? '' : String(v);
    });
    if (mapping.identity === true) {
      for (const k of keys)
        if (!allowed.has(k)) errors.push({ field: k, reason: 'unknown field (not part of the request)' });
    }
    const signature = keys.join('\u0000');
    let readers = cache.get(signature);
    if (!readers) {
      readers = compileKind(kind, mapping, keys, false, input.name);
      if (cache.size > 1000) cache.clear();
      cache.set(signature, readers);
    }
    put(convert(kind, readers, cells, errors), row);
  };
  const onBadLine = (row: number, reason: string) => problems({ src, row, level, reason });
  return readJsonValues(input, format, undefined, onValue, onBadLine, options.hash);
}
