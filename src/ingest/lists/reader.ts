import type { Readable } from 'node:stream';
import { chooseColumn, type ColumnChoice, type ColumnRequest } from './columns.js';
import type { ListCell, RowBatch } from './cells.js';
import { jsonArrayItems } from './json.js';
import type { InputSource } from '../sources.js';
import { sniffDelimiter as sniffTableDelimiter, TableReader } from '../table/reader.js';

export type ListFileFormat = 'lines' | 'csv' | 'json';

export interface ListReaderOptions extends ColumnRequest {
  /** Rows per batch handed to the caller. */
  batchSize?: number;
  /** The delimiter named with --delimiter (else detected from the first line). */
  delimiter?: string;
}

export interface ListReader {
  file: string;
  /**
   * How the file is read: one value per line, CSV (quotes or several columns), or a JSON array.
   * Turns from `lines` to `csv` when a later line has a quote or a comma.
   */
  format: ListFileFormat;
  /** Set when plain lines gave way to CSV: the row from which the file was read as CSV. */
  csvFromRow?: number;
  /** The value column (absent for JSON arrays). */
  column?: ColumnChoice;
  /** Spreadsheet row of the header, when there is one. */
  headerRow?: number;
  /** The rows after the header, in order, in batches. Call once. */
  batches(): AsyncGenerator<RowBatch>;
}

const DEFAULT_BATCH = 8192;
/** A CSV record larger than this is almost surely an opening quote never closed. */
const MAX_RECORD_BYTES = 1 << 20;
const DELIMITERS = [',', ';', '\t'] as const;

/**
 * Opens a list file: sniffs JSON / plain lines / CSV, finds the header and the value column
 * (throwing a UsageError for a missing or ambiguous column before any value is read), and
 * returns a reader of the values with their spreadsheet row numbers.
 *
 * Plain one-value-per-line text is split by hand, which is an order of magnitude faster than a
 * CSV parser; the first line with a quote or a comma hands the rest of the file to csv-parse.
 */
export async function openListReader(source: InputSource, options: ListReaderOptions): Promise<ListReader> {
  const file = source.name;
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const chunks = new TextChunks(source.stream);
  const prefix = await readPrefix(chunks);
  chunks.unshift(prefix);

  if (prefix.trimStart().startsWith('[')) {
    return {
      file,
      format: 'json',
      batches: () => batchCells(jsonArrayItems(chunks.rest(), file), 1, batchSize),
    };
  }

  const { line: firstLine, row: firstRow } = firstNonBlankLine(prefix);
  if (firstLine === undefined) {
    // Nothing but blank lines (or nothing at all): every row is blank.
    return {
      file,
      format: 'lines',
      batches: () =>
        lineBatches(chunks, { file, batchSize, skipRow: 0, choice: { header: false, index: 0, width: 1 } }),
    };
  }

  const delimiter =
    options.delimiter !== undefined
      ? { char: options.delimiter, count: firstLine.split(options.delimiter).length - 1 }
      : sniffDelimiter(firstLine);
  const needsCsv = firstLine.includes('"') || delimiter.count > 0 || hasLoneCarriageReturn(prefix);
  if (!needsCsv) {
    const choice = chooseColumn([firstLine], options, file, firstRow);
    const skipRow = choice.header ? firstRow : 0;
    const reader: ListReader = {
      file,
      format: 'lines',
      column: choice,
      ...(choice.header ? { headerRow: firstRow } : {}),
      batches: () =>
        lineBatches(chunks, {
          file,
          batchSize,
          skipRow,
          choice,
          onCsv: (row) => {
            reader.format = 'csv';
            reader.csvFromRow = row;
          },
        }),
    };
    return reader;
  }

  const records = await CsvRecords.open(chunks.rest(), delimiter.char, file, 1);
  const replay: CsvRecord[] = [];
  let next: CsvRecord | undefined;
  let first: string[] | undefined;
  while ((next = await records.next()) !== undefined) {
    replay.push(next);
    if (!isBlankRecord(next.record)) {
      first = withoutTrailingBlanks(next.record);
      break;
    }
  }
  if (first === undefined) {
    return {
      file,
      format: 'csv',
      batches: () =>
        csvBatches(records, replay, 1, {
          file,
          batchSize,
          skipRow: 0,
          choice: { header: false, index: 0, width: 1 },
          delimiter: delimiter.char,
        }),
    };
  }
  const headerRow = replay.length;
  const choice = chooseColumn(first, options, file, headerRow);
  return {
    file,
    format: 'csv',
    column: choice,
    ...(choice.header ? { headerRow } : {}),
    batches: () =>
      csvBatches(records, replay, 1, {
        file,
        batchSize,
        skipRow: choice.header ? headerRow : 0,
        choice,
        delimiter: delimiter.char,
      }),
  };
}

/** Pull-based access to the decoded text chunks, with push-back for sniffing. */
class TextChunks {
  private readonly iterator: AsyncIterator<string>;
  private readonly pushed: string[] = [];

  constructor(stream: Readable) {
    this.iterator = stream[Symbol.asyncIterator]() as AsyncIterator<string>;
  }

  async next(): Promise<string | undefined> {
    if (this.pushed.length) return this.pushed.pop();
    const r = await this.iterator.next();
    return r.done ? undefined : String(r.value);
  }

  unshift(text: string): void {
    if (text.length) this.pushed.push(text);
  }

  async *rest(): AsyncGenerator<string> {
    let chunk: string | undefined;
    while ((chunk = await this.next()) !== undefined) yield chunk;
  }
}

/** Reads until the text holds a complete first non-blank line (or a JSON opening), or the input ends. */
async function readPrefix(chunks: TextChunks): Promise<string> {
  let prefix = '';
  while (true) {
    // A CR at the very end may be half of a CRLF: the next chunk says which line ends the file uses.
    if (hasFirstLine(prefix) && !prefix.endsWith('\r')) return prefix;
    const chunk = await chunks.next();
    if (chunk === undefined) return prefix;
    prefix += chunk;
  }
}

/** A JSON opening, or a non-blank line followed by a line break: one linear scan (no backtracking). */
function hasFirstLine(text: string): boolean {
  let i = 0;
  while (i < text.length && /\s/.test(text[i]!)) i++;
  if (i >= text.length) return false;
  if (text[i] === '[') return true;
  const lf = text.indexOf('\n', i);
  const cr = text.indexOf('\r', i);
  return lf !== -1 || cr !== -1;
}

/** The first non-blank line and its row; old Mac files end lines with a lone CR. */
function firstNonBlankLine(prefix: string): { line?: string; row: number } {
  const lines = prefix.split(/\r\n|\n|\r/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() !== '') return { line, row: i + 1 };
  }
  return { row: 0 };
}

/** The most frequent of comma, semicolon and tab outside quotes on the first line. */
function sniffDelimiter(line: string): { char: string; count: number } {
  return sniffTableDelimiter(line, DELIMITERS);
}

function hasLoneCarriageReturn(text: string): boolean {
  return /\r(?!\n)/.test(text.endsWith('\r') ? text.slice(0, -1) : text);
}

/** `123456789,` on the first row is one column, not two. */
function withoutTrailingBlanks(record: string[]): string[] {
  let end = record.length;
  while (end > 1 && record[end - 1]!.trim() === '') end--;
  return end === record.length ? record : record.slice(0, end);
}

function isBlankRecord(record: string[]): boolean {
  for (const f of record) if (f.trim() !== '') return false;
  return true;
}

interface BatchContext {
  file: string;
  batchSize: number;
  /** Row number of the header, skipped; 0 when there is none. */
  skipRow: number;
  choice: ColumnChoice;
  /** Called when plain lines give way to CSV parsing, with the row the CSV parsing starts at. */
  onCsv?: (row: number) => void;
}

/**
 * Plain lines: each chunk's complete lines become one batch as they are (only a trailing CR is
 * cut), which keeps this path close to a bare split. The header row, if any, is left out.
 */
async function* lineBatches(chunks: TextChunks, ctx: BatchContext): AsyncGenerator<RowBatch> {
  let row = 1;
  let carry = '';
  function* emit(lines: string[], crlf: boolean): Generator<RowBatch> {
    if (crlf) {
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        if (line.charCodeAt(line.length - 1) === 13) lines[i] = line.slice(0, -1);
      }
    }
    const firstRow = row;
    row += lines.length;
    const header = ctx.skipRow - firstRow;
    if (ctx.skipRow > 0 && header >= 0 && header < lines.length) {
      if (header > 0) yield { firstRow, cells: lines.slice(0, header) };
      if (header + 1 < lines.length) yield { firstRow: ctx.skipRow + 1, cells: lines.slice(header + 1) };
      return;
    }
    if (lines.length) yield { firstRow, cells: lines };
  }
  const switchToCsv = async function* (text: string): AsyncGenerator<RowBatch> {
    ctx.onCsv?.(row);
    chunks.unshift(text);
    const records = await CsvRecords.open(chunks.rest(), ',', ctx.file, row);
    yield* csvBatches(records, [], row, { ...ctx, delimiter: ',' });
  };

  let chunk: string | undefined;
  while ((chunk = await chunks.next()) !== undefined) {
    const text = carry.length ? carry + chunk : chunk;
    const last = text.lastIndexOf('\n');
    if (last < 0) {
      carry = text;
      continue;
    }
    const body = text.slice(0, last);
    carry = text.slice(last + 1);
    const special = firstSpecial(body);
    if (special >= 0) {
      const lineStart = body.lastIndexOf('\n', special) + 1;
      if (lineStart > 0) yield* emit(body.slice(0, lineStart - 1).split('\n'), body.includes('\r'));
      yield* switchToCsv(body.slice(lineStart) + '\n' + carry);
      return;
    }
    yield* emit(body.split('\n'), body.includes('\r'));
  }
  if (carry.length) {
    if (firstSpecial(carry) >= 0) {
      yield* switchToCsv(carry);
      return;
    }
    yield* emit([carry], true);
  }
}

function firstSpecial(text: string): number {
  const q = text.indexOf('"');
  const c = text.indexOf(',');
  if (q < 0) return c;
  if (c < 0) return q;
  return Math.min(q, c);
}

interface CsvRecord {
  record: string[];
  /** The record's text as in the file, for reports. */
  raw: string;
}

/** Records of the one tabular reader, pulled one at a time, cells trimmed, blank records kept (they are rows). */
class CsvRecords {
  private readonly reader: TableReader;
  private readonly queue: CsvRecord[] = [];
  private head = 0;
  private done = false;
  /** Spreadsheet row of the next record. */
  row: number;

  static async open(
    text: AsyncIterable<string>,
    delimiter: string,
    file: string,
    startRow: number,
  ): Promise<CsvRecords> {
    return new CsvRecords(text[Symbol.asyncIterator](), delimiter, file, startRow);
  }

  private constructor(
    private readonly text: AsyncIterator<string>,
    private readonly delimiter: string,
    file: string,
    startRow: number,
  ) {
    this.row = startRow;
    this.reader = new TableReader({
      delimiter,
      file,
      firstRow: startRow,
      relaxQuotes: true,
      maxRecordChars: MAX_RECORD_BYTES,
      maxFieldChars: MAX_RECORD_BYTES,
    });
  }

  private readonly take = (cells: string[]) => {
    const record = cells.map((c) => c.trim());
    this.queue.push({ record, raw: cells.join(this.delimiter) });
  };

  async next(): Promise<CsvRecord | undefined> {
    while (this.head >= this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      if (this.done) return undefined;
      try {
        const next = await this.text.next();
        if (next.done) {
          this.done = true;
          this.reader.end(this.take);
        } else this.reader.write(String(next.value), this.take);
      } catch (err) {
        throw this.explain(err);
      }
    }
    this.row++;
    return this.queue[this.head++];
  }

  private explain(err: unknown): Error {
    return err instanceof Error ? err : new Error(String(err));
  }
}

async function* csvBatches(
  records: CsvRecords,
  replay: CsvRecord[],
  startRow: number,
  ctx: BatchContext & { delimiter: string },
): AsyncGenerator<RowBatch> {
  let row = startRow;
  let firstRow = row;
  let cells: ListCell[] = [];
  const handle = (record: CsvRecord) => {
    if (row !== ctx.skipRow) {
      if (cells.length === 0) firstRow = row;
      cells.push(cellOf(record, ctx));
    }
    row++;
  };
  for (const record of replay) handle(record);
  let record: CsvRecord | undefined;
  while ((record = await records.next()) !== undefined) {
    handle(record);
    if (cells.length >= ctx.batchSize) {
      yield { firstRow, cells };
      cells = [];
    }
  }
  if (cells.length) yield { firstRow, cells };
}

function cellOf({ record, raw }: CsvRecord, ctx: { choice: ColumnChoice; delimiter: string }): ListCell {
  const { index, width, name } = ctx.choice;
  if (record.length === 1 && index === 0) return record[0]!;
  const column = name ? `column ${index + 1} ("${name}")` : `column ${index + 1}`;
  if (record.length > width) {
    for (let i = width; i < record.length; i++) {
      if (record[i]!.trim() !== '') {
        const sep = ctx.delimiter === '\t' ? 'tab' : `"${ctx.delimiter}"`;
        return {
          problem: `has ${record.length} fields but the file has ${width} column${width === 1 ? '' : 's'} (a value containing ${sep} must be in double quotes)`,
          raw: truncate(raw),
        };
      }
    }
  }
  if (index >= record.length) {
    if (isBlankRecord(record)) return '';
    return {
      problem: `has only ${record.length} field${record.length === 1 ? '' : 's'}; ${column} is missing`,
      raw: truncate(raw),
    };
  }
  return record[index]!;
}

function truncate(raw: string): string {
  const text = raw.replace(/[\r\n]+$/, '');
  return text.length > 120 ? `${text.slice(0, 117)}… (${text.length.toLocaleString('en-US')} chars)` : text;
}

async function* batchCells(
  cells: AsyncIterable<ListCell>,
  startRow: number,
  batchSize: number,
): AsyncGenerator<RowBatch> {
  let batch: ListCell[] = [];
  let firstRow = startRow;
  for await (const cell of cells) {
    batch.push(cell);
    if (batch.length >= batchSize) {
      yield { firstRow, cells: batch };
      firstRow += batch.length;
      batch = [];
    }
  }
  if (batch.length) yield { firstRow, cells: batch };
}
