import type { Hash } from 'node:crypto';
import { InputError } from '../../errors.js';
import { MAX_FIELD_CHARS, MAX_RECORD_CHARS, tableBatches } from '../table/reader.js';
import { describeChars, type InputSource } from '../sources.js';
import { JsonDocumentReader } from './json-document.js';
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
 * A broken NDJSON line is one bad record; a broken JSON document is an unreadable file. Both are
 * read as they stream, under the table reader's limits on a record and on a value.
 */
export async function readJsonValues(
  input: InputSource,
  format: 'json' | 'ndjson',
  arrayKey: string | undefined,
  onValue: (value: unknown, position: number) => void,
  onBadLine: (position: number, reason: string) => void,
  hash?: Hash,
): Promise<number> {
  const reader = jsonReader(input, format, arrayKey, onValue, onBadLine);
  for await (const chunk of hashed(input.stream, hash)) reader.write(chunk);
  return reader.end();
}

export interface JsonValue {
  value: unknown;
  position: number;
}

/** The same values, handed on a chunk of text at a time (a reader that yields as it goes). */
export async function* jsonValueBatches(
  input: InputSource,
  format: 'json' | 'ndjson',
  arrayKey: string | undefined,
  onBadLine: (position: number, reason: string) => void,
  hash?: Hash,
  /** NDJSON only: each line's text as `value`, not parsed (parseJsonLine parses it). */
  lines = false,
): AsyncGenerator<JsonValue[], number> {
  let batch: JsonValue[] = [];
  const onValue = (value: unknown, position: number) => batch.push({ value, position });
  const reader =
    lines && format === 'ndjson'
      ? new NdjsonLines(input.name, onValue, onBadLine, false)
      : jsonReader(input, format, arrayKey, onValue, onBadLine);
  for await (const chunk of hashed(input.stream, hash)) {
    reader.write(chunk);
    if (batch.length > 0) {
      yield batch;
      batch = [];
    }
  }
  const count = reader.end();
  if (batch.length > 0) yield batch;
  return count;
}

function jsonReader(
  input: InputSource,
  format: 'json' | 'ndjson',
  arrayKey: string | undefined,
  onValue: (value: unknown, position: number) => void,
  onBadLine: (position: number, reason: string) => void,
): { write(chunk: string): void; end(): number } {
  return format === 'ndjson'
    ? new NdjsonLines(input.name, onValue, onBadLine)
    : new JsonDocumentReader(input.name, arrayKey, onValue);
}

/** NDJSON cut into lines in one pass: a line still open when a chunk ends is not scanned again. */
class NdjsonLines {
  private line = 0;
  private count = 0;
  /** The open line's text, in pieces. */
  private open: string[] = [];
  private openChars = 0;

  constructor(
    private readonly file: string,
    private readonly onValue: (value: unknown, position: number) => void,
    private readonly onBadLine: (position: number, reason: string) => void,
    /** False: hand on each line's text, for the caller to parse (parseJsonLine). */
    private readonly parse = true,
  ) {}

  write(chunk: string): void {
    let start = 0;
    let newline: number;
    while ((newline = chunk.indexOf('\n', start)) >= 0) {
      this.add(chunk, start, newline);
      this.take();
      start = newline + 1;
    }
    this.add(chunk, start, chunk.length);
  }

  end(): number {
    if (this.openChars > 0) this.take();
    return this.count;
  }

  private add(chunk: string, start: number, end: number): void {
    if (end === start) return;
    this.openChars += end - start;
    if (this.openChars > MAX_RECORD_CHARS) {
      throw new InputError(
        `the line is longer than ${describeChars(MAX_RECORD_CHARS)} of text, with no line break yet`,
        { file: this.file, row: this.line + 1 },
        { hint: 'NDJSON holds one record per line; a line this long is most often a file that is not NDJSON' },
      );
    }
    this.open.push(start === 0 && end === chunk.length ? chunk : chunk.slice(start, end));
  }

  private take(): void {
    this.line++;
    let text = this.open.length === 1 ? this.open[0]! : this.open.join('');
    this.open = [];
    this.openChars = 0;
    if (text.charCodeAt(text.length - 1) === 13) text = text.slice(0, -1);
    if (text.trim() === '') return;
    this.count++;
    if (text.length > MAX_FIELD_CHARS) {
      const longest = longestString(text);
      if (longest > MAX_FIELD_CHARS) {
        throw new InputError(
          `holds a value of ${longest.toLocaleString('en-US')} characters; values are limited to ${MAX_FIELD_CHARS.toLocaleString('en-US')}`,
          { file: this.file, row: this.line },
        );
      }
    }
    if (!this.parse) {
      this.onValue(text, this.line);
      return;
    }
    const parsed = parseJsonLine(text);
    if ('reason' in parsed) this.onBadLine(this.line, parsed.reason);
    else this.onValue(parsed.value, this.line);
  }
}

/** An NDJSON line's value, or why it has none (the reason a rejects file gives). */
export function parseJsonLine(text: string): { value: unknown } | { reason: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { reason: `not valid JSON: ${(err as Error).message}` };
  }
}

/** Characters of the longest JSON string in `text` (escapes counted as written). */
function longestString(text: string): number {
  let longest = 0;
  let start = text.indexOf('"');
  let backslash = -2;
  while (start !== -1) {
    let j = start + 1;
    let quote = text.indexOf('"', j);
    while (true) {
      if (quote === -1) return Math.max(longest, text.length - start - 1);
      if (backslash !== -1 && backslash < j) backslash = text.indexOf('\\', j);
      if (backslash !== -1 && backslash < quote) {
        // An escaped character: a quote there does not end the string.
        j = backslash + 2;
        if (quote < j) quote = text.indexOf('"', j);
        continue;
      }
      longest = Math.max(longest, quote - start - 1);
      start = text.indexOf('"', quote + 1);
      break;
    }
  }
  return longest;
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
