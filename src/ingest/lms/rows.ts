import type { Hash } from 'node:crypto';
import { InputError } from '../../errors.js';
import { tableBatches } from '../table/reader.js';
import type { InputSource } from '../sources.js';
import type { Level } from '../mapping/fields.js';

/** Reading an export's files: CSV rows as arrays of cells, JSON and NDJSON values, with a content hash. */

export type InputFormat = 'csv' | 'json' | 'ndjson';

/** A record that cannot be sent, found while reading or checking; it goes to the rejects file. */
export interface RowProblem {
  src: number;
  row: number;
  level: Level;
  customerId?: string;
  loanId?: string;
  paymentId?: string;
  field?: string;
  reason: string;
}

export type ProblemSink = (problem: RowProblem) => void;

/** The format a file name says, ignoring a trailing .gz; undefined when it says nothing. */

export function formatFromName(name: string): InputFormat | undefined {
  const base = name.toLowerCase().replace(/\.gz$/, '');
  if (base.endsWith('.csv') || base.endsWith('.txt') || base.endsWith('.tsv')) return 'csv';
  if (base.endsWith('.ndjson') || base.endsWith('.jsonl')) return 'ndjson';
  if (base.endsWith('.json')) return 'json';
  return undefined;
}

/** Text chunks of the input, each also fed to `hash` (the journal's key covers the content). */
async function* hashed(source: AsyncIterable<string>, hash: Hash | undefined): AsyncGenerator<string> {
  for await (const chunk of source) {
    hash?.update(chunk);
    yield chunk;
  }
}

export interface CsvHandlers {
  /** The header row; may throw an InputError (missing columns). */
  header(cells: string[]): void;
  /** A data row; `row` counts the header as row 1, as a spreadsheet does. */
  row(cells: string[], row: number): void;
}

/**
 * Streams a CSV file's rows as arrays of cells (a column-index map beats per-row objects), read by
 * the one tabular reader. Rows of another length than the header still arrive, so the caller can
 * reject just that row. Blank lines are skipped but counted, so row numbers stay those of the file.
 */
export async function readCsv(
  input: InputSource,
  delimiter: string,
  handlers: CsvHandlers,
  hash?: Hash,
): Promise<number> {
  let rows = 0;
  for await (const batch of csvRecordBatches(input, delimiter, hash)) {
    for (const record of batch) {
      if (record.row === 1) {
        handlers.header(record.cells);
        continue;
      }
      rows++;
      handlers.row(record.cells, record.row);
    }
  }
  return rows;
}

/**
 * JSON values of a file: a JSON document (an array, or an object holding `arrayKey`) or NDJSON
 * (a value per line). `position` is the index in the array (1-based) or the line number.
 * A broken NDJSON line is one bad record; a broken JSON document is an unreadable file.
 */
export async function readJsonValues(
  input: InputSource,
  format: 'json' | 'ndjson',
  arrayKey: string | undefined,
  onValue: (value: unknown, position: number) => void,
  onBadLine: (position: number, reason: string) => void,
  hash?: Hash,
): Promise<number> {
  if (format === 'ndjson') {
    let buffered = '';
    let line = 0;
    let count = 0;
    const take = (text: string) => {
      line++;
      if (text.trim() === '') return;
      count++;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        onBadLine(line, `not valid JSON: ${(err as Error).message}`);
        return;
      }
      onValue(value, line);
    };
    const takeLine = (text: string, start: number, end: number) =>
      take(text.slice(start, end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end));
    for await (const chunk of hashed(input.stream, hash)) {
      const text = buffered === '' ? chunk : buffered + chunk;
      let start = 0;
      let newline: number;
      while ((newline = text.indexOf('\n', start)) >= 0) {
        takeLine(text, start, newline);
        start = newline + 1;
      }
      buffered = text.slice(start);
    }
    if (buffered !== '') takeLine(buffered, 0, buffered.length);
    return count;
  }
  let text = '';
  for await (const chunk of hashed(input.stream, hash)) text += chunk;
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (err) {
    throw new InputError(`is not valid JSON: ${(err as Error).message}`, { file: input.name });
  }
  let values: unknown;
  if (Array.isArray(document)) values = document;
  else if (
    arrayKey !== undefined &&
    document &&
    typeof document === 'object' &&
    Array.isArray((document as Record<string, unknown>)[arrayKey])
  ) {
    values = (document as Record<string, unknown>)[arrayKey];
  } else if (arrayKey === undefined && document && typeof document === 'object') {
    values = [document];
  } else {
    throw new InputError(`must hold an array${arrayKey ? ` or an object with a "${arrayKey}" array` : ''}`, {
      file: input.name,
    });
  }
  const list = values as unknown[];
  for (let i = 0; i < list.length; i++) onValue(list[i], i + 1);
  return list.length;
}

/** Tells JSON from NDJSON (and both from CSV) by the first characters, for stdin and unnamed files. */
export function sniffFormat(head: string): InputFormat {
  const text = head.replace(/^\uFEFF/, '').trimStart();
  if (text.startsWith('[')) return 'json';
  if (!text.startsWith('{')) return 'csv';
  const firstLine = text.split('\n', 1)[0]!.trim();
  try {
    JSON.parse(firstLine);
    // A whole object on the first line with more after it: NDJSON.
    return text.trim().length > firstLine.length ? 'ndjson' : 'json';
  } catch {
    return 'json';
  }
}

export { peekText } from '../sources.js';

/**
 * The same rows as readCsv, pulled by the consumer (who may wait between them, e.g. for a free
 * request slot), in batches of what the reader has ready: one await per batch, not per row.
 * The first row of the first batch is the header (row 1).
 */
export function csvRecordBatches(
  input: InputSource,
  delimiter: string,
  hash?: Hash,
): AsyncGenerator<{ cells: string[]; row: number }[]> {
  return tableBatches(input, { delimiter }, hash ? (chunk) => hash.update(chunk) : undefined);
}
