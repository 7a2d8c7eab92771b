import type { Hash } from 'node:crypto';
import { compileLevel, type FieldError, type LevelReader, type Mapping } from '../mapping/mapping.js';
import { LEVEL_FIELDS, type Level } from '../mapping/fields.js';
import {
  documentGroup,
  type CustomerGroup,
  type RawCounts,
  type RawCustomer,
  type StagedDocumentBody,
  type StagedDocumentLoan,
} from './groups.js';
import { type JsonValue, jsonValueBatches, parseJsonLine, readJsonValues, type ProblemSink } from './rows.js';
import { CustomerOrder, type RowsListener } from './stream.js';
import type { InputSource } from '../sources.js';
import type { Staging } from './staging.js';

/**
 * JSON and NDJSON already in the batch shape (customers with loans with payments) → staged
 * documents, one per customer, or, sorted by customer, groups as they are read. Values go through
 * the same converters as CSV cells, so `"$12.50"` is refused where cents are expected, and
 * `"2026-11-20T18:05:00-06:00"` becomes UTC.
 */

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Turns JSON objects into converted fields, with one compiled reader per distinct set of keys. */
export class ObjectConverter {
  private readonly readers = new Map<string, LevelReader>();
  private readonly known: Record<Level, Set<string>>;
  /** The last key list seen at each level, and what it gave: the objects of an export mostly share their keys. */
  private readonly last: Partial<Record<Level, { raw: string[]; keys: string[]; reader: LevelReader }>> = {};

  constructor(
    private readonly mapping: Mapping,
    /** Keys that belong to the structure rather than the level (`loans`, `payments`, `lead_loan`). */
    private readonly structural: Partial<Record<Level, readonly string[]>> = {},
  ) {
    this.known = {
      customer: new Set(Object.keys(LEVEL_FIELDS.customer)),
      loan: new Set(Object.keys(LEVEL_FIELDS.loan)),
      payment: new Set(Object.keys(LEVEL_FIELDS.payment)),
    };
  }

  convert(level: Level, object: Obj, extraKnown: readonly string[] = []): { fields: Obj; errors: FieldError[] } {
    const raw = Object.keys(object);
    const previous = extraKnown.length === 0 ? this.last[level] : undefined;
    let keys: string[];
    let reader: LevelReader | undefined;
    if (previous !== undefined && sameKeys(previous.raw, raw)) {
      keys = previous.keys;
      reader = previous.reader;
    } else {
      const skip = new Set([...(this.structural[level] ?? []), ...extraKnown]);
      keys = raw.filter((k) => !skip.has(k));
      const signature = `${level}\u0000${keys.join('\u0000')}`;
      reader = this.readers.get(signature);
      if (!reader) {
        reader = compileLevel(this.mapping, level, keys, { strictColumns: false }).reader;
        if (this.readers.size > 1000) this.readers.clear();
        this.readers.set(signature, reader);
      }
      if (extraKnown.length === 0) this.last[level] = { raw, keys, reader };
    }
    const cells: string[] = [];
    const errors: FieldError[] = [];
    for (const key of keys) {
      const value = object[key];
      if (value !== null && typeof value === 'object') {
        errors.push({ field: key, reason: 'must be a single value, not an object or a list' });
        cells.push('');
      } else {
        cells.push(value === null || value === undefined ? '' : String(value));
      }
    }
    // With no mapping, the keys are the API's fields: anything else would be refused by the service.
    if (this.mapping.identity === true) {
      for (const key of keys)
        if (!this.known[level].has(key)) errors.push({ field: key, reason: 'unknown field (not part of the request)' });
    }
    const fields: Obj = {};
    reader.read(cells, fields, errors);
    return { fields, errors };
  }
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Customer objects → their ids and bodies: values converted, problems kept with the object they
 * belong to; an object that is no customer, or has no id, is reported and gives nothing.
 */
export class CustomerDocuments {
  private readonly converter: ObjectConverter;

  constructor(
    mapping: Mapping,
    private readonly src: number,
    private readonly problems: ProblemSink,
  ) {
    this.converter = new ObjectConverter(mapping, { customer: ['loans'], loan: ['payments'] });
  }

  read(value: unknown, row: number): { customerId: string; body: StagedDocumentBody } | undefined {
    const { converter, src, problems } = this;
    if (!isObject(value)) {
      problems({ src, row, level: 'customer', reason: 'is not a customer object' });
      return undefined;
    }
    const customer = converter.convert('customer', value);
    const customerId = typeof customer.fields.customer_id === 'string' ? customer.fields.customer_id : '';
    if (customerId.trim() === '') {
      const reason = customer.errors.find((e) => e.field === 'customer_id')?.reason ?? 'required';
      problems({ src, row, level: 'customer', field: 'customer_id', reason });
      return undefined;
    }
    const body: StagedDocumentBody = { customer_id: customerId, loans: [] };
    const customerErrors = customer.errors.slice();
    if (!Array.isArray(value.loans)) {
      customerErrors.push({
        field: 'loans',
        reason: value.loans === undefined ? 'required' : 'must be a list of loans',
      });
    } else {
      for (const loanValue of value.loans) {
        if (!isObject(loanValue)) {
          body.loans.push({ fields: {}, errors: [{ field: '', reason: 'is not a loan object' }], payments: [] });
          continue;
        }
        const loan = converter.convert('loan', loanValue);
        const loanErrors = loan.errors;
        const payments: StagedDocumentLoan['payments'] = [];
        if (loanValue.payments !== undefined && !Array.isArray(loanValue.payments)) {
          loanErrors.push({ field: 'payments', reason: 'must be a list of payments' });
        } else {
          for (const paymentValue of (loanValue.payments as unknown[] | undefined) ?? []) {
            if (!isObject(paymentValue)) {
              payments.push({ fields: {}, errors: [{ field: '', reason: 'is not a payment object' }] });
              continue;
            }
            const payment = converter.convert('payment', paymentValue);
            payments.push(payment.errors.length ? payment : { fields: payment.fields });
          }
        }
        body.loans.push(
          loanErrors.length ? { fields: loan.fields, errors: loanErrors, payments } : { fields: loan.fields, payments },
        );
      }
    }
    if (customerErrors.length) body.errors = customerErrors;
    return { customerId, body };
  }
}

export interface StageJsonOptions {
  staging: Staging;
  mapping: Mapping;
  problems: ProblemSink;
  hash?: Hash;
  /** Called every 1,000 records read (progress; may throw to stop reading). */
  onRows?: (rows: number) => void;
}

export async function stageBatchJson(
  input: InputSource,
  format: 'json' | 'ndjson',
  options: StageJsonOptions,
): Promise<number> {
  const { staging, problems } = options;
  const src = staging.addSource(input.name);
  const documents = new CustomerDocuments(options.mapping, src, problems);
  let records = 0;
  const onValue = (value: unknown, row: number) => {
    if (options.onRows && ++records % 1000 === 0) options.onRows(records);
    const read = documents.read(value, row);
    if (read) staging.putDocument(read.customerId, { src, row }, JSON.stringify(read.body), null);
  };
  const onBadLine = (row: number, reason: string) => problems({ src, row, level: 'customer', reason });
  return readJsonValues(input, format, 'customers', onValue, onBadLine, options.hash);
}

export interface StreamJsonOptions {
  mapping: Mapping;
  /** Index of this file among the run's sources (for rejects). */
  src: number;
  problems: ProblemSink;
  onRows?: RowsListener;
  /**
   * Given (a run that keeps the record of what was sent; NDJSON only), asked with lines, many at a
   * time, before they are parsed: for each, the counts recorded with it when it is a line recorded
   * as sent, and the customer is then yielded with those counts only (`unchanged`). Other
   * customers carry their line (`raw`) when the look would name them as the reader does.
   */
  unchanged?: (raws: readonly RawCustomer[]) => (RawCounts | undefined)[];
}

/** What an NDJSON line means besides itself (the mapping and leadctl's rules are the delta's to add). */
const LINE_CONTEXT = 'ndjson: a customer per line';

/**
 * Batch-shape input sorted by customer, as groups while it is read, without staging: the same
 * groups in the same order as the staging gives (each customer once, ids in the staging's order).
 * A customer that repeats or sorts before the one before throws NotSortedError; the caller then
 * stages the input, where the last of a customer's documents wins. Returns the records read.
 *
 * With `unchanged` (NDJSON), the first look of `--changed-only`: a line is asked about by its
 * text, with its customer id read from its first key alone (`LineIds`); a line recorded as sent is
 * never parsed. Sound by construction: a line is recorded only when that quick id is the id the
 * reader found in the whole line, and the quick id depends on the line and the mapping alone.
 */
export async function* streamBatchJson(
  input: InputSource,
  format: 'json' | 'ndjson',
  options: StreamJsonOptions,
): AsyncGenerator<CustomerGroup, number> {
  const { src, problems } = options;
  const documents = new CustomerDocuments(options.mapping, src, problems);
  const order = new CustomerOrder(options.onRows);
  const onBadLine = (row: number, reason: string) => problems({ src, row, level: 'customer', reason });
  const look = format === 'ndjson' ? options.unchanged : undefined;
  const lineIds = look ? new LineIds(options.mapping) : undefined;
  const batches = jsonValueBatches(input, format, 'customers', onBadLine, undefined, look !== undefined);
  try {
    while (true) {
      const next = await batches.next();
      if (next.done) return next.value;
      const values = next.value;
      const ids = lineIds ? values.map((v) => lineIds.of(v.value as string)) : undefined;
      const known = ids ? recorded(values, ids, look!) : undefined;
      for (let i = 0; i < values.length; i++) {
        const row = values[i]!.position;
        order.count(1);
        const counts = known?.[i];
        if (counts !== undefined) {
          order.next(ids![i]!, row);
          yield {
            customerId: ids![i]!,
            origin: { src, row },
            errors: [],
            loans: [],
            orphans: [],
            duplicates: [],
            unchanged: counts,
          };
          continue;
        }
        let value = values[i]!.value;
        if (look) {
          const parsed = parseJsonLine(value as string);
          if ('reason' in parsed) {
            onBadLine(row, parsed.reason);
            continue;
          }
          value = parsed.value;
        }
        const read = documents.read(value, row);
        if (read === undefined) continue;
        order.next(read.customerId, row);
        const group = documentGroup(read.customerId, { src, row }, read.body);
        if (ids?.[i] === read.customerId && group.duplicates.length === 0) {
          const payments = group.loans.reduce((n, loan) => n + loan.payments.length, 0);
          const text = values[i]!.value as string;
          group.raw = { customerId: read.customerId, context: LINE_CONTEXT, text, loans: group.loans.length, payments };
        }
        yield group;
      }
    }
  } finally {
    order.end();
    // Found unsorted, or stopped: the file's stream is closed (a `for await` would do it, but loses the count).
    await batches.return(0);
  }
}

/** The look's answers for the lines of a batch whose customer id it could read. */
function recorded(
  values: readonly JsonValue[],
  ids: readonly (string | undefined)[],
  look: (raws: readonly RawCustomer[]) => (RawCounts | undefined)[],
): (RawCounts | undefined)[] {
  const asked: RawCustomer[] = [];
  const at: number[] = [];
  ids.forEach((customerId, i) => {
    if (customerId === undefined) return;
    asked.push({ customerId, context: LINE_CONTEXT, text: values[i]!.value as string });
    at.push(i);
  });
  const known = new Array<RawCounts | undefined>(values.length);
  if (asked.length > 0)
    look(asked).forEach((counts, k) => {
      known[at[k]!] = counts;
    });
  return known;
}

/**
 * The customer id of an NDJSON line whose first key holds it, read from that key and its value
 * alone (no backslash in either), converted as the whole object's would be; undefined otherwise.
 */
class LineIds {
  private readonly converter: ObjectConverter;

  constructor(mapping: Mapping) {
    this.converter = new ObjectConverter(mapping, { customer: ['loans'] });
  }

  of(line: string): string | undefined {
    if (line.charCodeAt(0) !== 123 || line.charCodeAt(1) !== 34) return undefined;
    const keyEnd = line.indexOf('"', 2);
    if (keyEnd < 0 || line.charCodeAt(keyEnd + 1) !== 58) return undefined;
    const start = keyEnd + 2;
    let end: number;
    if (line.charCodeAt(start) === 34) {
      end = line.indexOf('"', start + 1) + 1;
      if (end === 0) return undefined;
    } else {
      end = start;
      while (end < line.length && line[end] !== ',' && line[end] !== '}') end++;
    }
    if (line[end] !== ',' && line[end] !== '}') return undefined;
    if (line.lastIndexOf('\\', end) >= 0) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(line.slice(start, end));
    } catch {
      return undefined;
    }
    if (value !== null && typeof value === 'object') return undefined;
    const { fields, errors } = this.converter.convert('customer', { [line.slice(2, keyEnd)]: value });
    const id = fields.customer_id;
    return errors.length === 0 && typeof id === 'string' && id.trim() !== '' ? id : undefined;
  }
}
