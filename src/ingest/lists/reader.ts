import type { Readable } from 'node:stream';
import { quoteValue } from '../../errors.js';
import { chooseColumn, type ColumnChoice, type ColumnRequest } from './columns.js';
import type { ListCell, RowBatch } from './cells.js';
import { jsonArrayItems } from './json.js';
import type { InputSource } from '../sources.js';
import { MAX_RECORD_CHARS, sniffDelimiter, TableReader } from '../table/reader.js';

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
   * How the file reads: one value per line, CSV (a quoted value or several fields), or a JSON
   * array. Turns from `lines` to `csv` at the first later row with a quoted value or a delimiter.
   */
  format: ListFileFormat;
  /** Set when plain lines gave way to CSV: the first row with a quoted value or a delimiter. */
  csvFromRow?: number;
  /** The field delimiter (absent for JSON arrays). */
  delimiter?: string;
  /** The value column (absent for JSON arrays). */
  column?: ColumnChoice;
  /** Spreadsheet row of the header, when there is one. */
  headerRow?: number;
  /** The rows after the header, in order, in batches. Call once. */
  batches(): AsyncGenerator<RowBatch>;
}

const DEFAULT_BATCH = 8192;
/** Lists are sniffed among these; a pipe is taken only when named with --delimiter. */
const DELIMITERS = [',', ';', '\t'] as const;
const BLANK_CHOICE: ColumnChoice = { header: false, index: 0, width: 1 };

/**
 * Opens a list file: sniffs a JSON array from the rest, finds the header and the value column
 * (throwing a UsageError for a missing or ambiguous column before any value is read), and
 * returns a reader of the values with their spreadsheet row numbers.
 *
 * Everything but a JSON array is read by the one table reader (`table/reader.ts`), with the
 * delimiter named by --delimiter or found on the first line, and its limits on rows and values:
 * a file of one value per line is a table of one column. No separate fast path for plain lines:
 * the list benchmark (test/bench/lists.bench.mjs) measured none worth a second reader.
 */
export async function openListReader(source: InputSource, options: ListReaderOptions): Promise<ListReader> {
  const file = source.name;
  const batchSize = options.batchSize ?? DEFAULT_BATCH;
  const chunks = new TextChunks(source.stream);
  const head = await readHead(chunks);
  chunks.unshift(head.text);

  if (head.json) {
    return {
      file,
      format: 'json',
      batches: () => batchCells(jsonArrayItems(chunks.rest(), file), 1, batchSize),
    };
  }

  const delimiter = options.delimiter ?? sniffDelimiter(head.firstLine ?? '', DELIMITERS).char;
  const table = new ListTable(chunks, delimiter, file);
  const first = await table.firstValueRecord();
  if (first === undefined) {
    // Nothing but blank lines (or nothing at all): every row is blank.
    return { file, format: 'lines', delimiter, batches: () => table.batches(BLANK_CHOICE, 0, batchSize) };
  }
  const fields = withoutTrailingBlanks(first.cells.map((c) => c.trim()));
  const choice = chooseColumn(fields, options, file, first.row);
  const reader: ListReader = {
    file,
    format: first.quoted || fields.length > 1 ? 'csv' : 'lines',
    delimiter,
    column: choice,
    ...(choice.header ? { headerRow: first.row } : {}),
    batches: () =>
      table.batches(choice, choice.header ? first.row : 0, batchSize, (row) => {
        if (reader.format !== 'lines') return;
        reader.format = 'csv';
        reader.csvFromRow = row;
      }),
  };
  return reader;
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

interface Head {
  /** What was read, to be read again. */
  text: string;
  /** The first non-blank character opens a JSON array. */
  json: boolean;
  /** The first non-blank line (cut at the record limit), to find the delimiter on. */
  firstLine?: string;
}

const isSpace = (c: string) => /\s/.test(c);

/**
 * Reads until the first non-blank line is whole (or a JSON opening shows, or the input ends), in
 * one pass, and never more than the record limit: a longer line is the table reader's to refuse.
 */
async function readHead(chunks: TextChunks): Promise<Head> {
  let text = '';
  let i = 0;
  let lineStart = 0;
  while (true) {
    while (i < text.length && isSpace(text[i]!)) {
      if (text[i] === '\n' || text[i] === '\r') lineStart = i + 1;
      i++;
    }
    if (i < text.length) {
      if (text[i] === '[') return { text, json: true };
      const lf = text.indexOf('\n', i);
      const cr = text.indexOf('\r', i);
      const end = lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr);
      if (end >= 0) return { text, json: false, firstLine: text.slice(lineStart, end) };
      if (text.length - lineStart > MAX_RECORD_CHARS) return { text, json: false, firstLine: text.slice(lineStart) };
      // The line goes on in the next chunk: scan that one from where this one ended.
      i = text.length;
    }
    const chunk = await chunks.next();
    if (chunk === undefined) {
      const rest = text.slice(lineStart);
      return { text, json: false, ...(rest.trim() === '' ? {} : { firstLine: rest }) };
    }
    text += chunk;
  }
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

interface TableRecord {
  cells: string[];
  row: number;
  quoted: boolean;
}

/** The list's rows as the one table reader reads them, with spreadsheet row numbers. */
class ListTable {
  private readonly reader: TableReader;
  /** Records read while looking for the first value row, handed on first by `batches`. */
  private readonly replay: TableRecord[] = [];
  private ended = false;

  constructor(
    private readonly chunks: TextChunks,
    private readonly delimiter: string,
    file: string,
  ) {
    // A quote inside an unquoted value is a character of a hand-made list, not an error.
    this.reader = new TableReader({ delimiter, file, relaxQuotes: true });
  }

  /** Feeds the next chunk (or the end); false once the input is done. */
  private async feed(take: (cells: string[], row: number) => void): Promise<boolean> {
    if (this.ended) return false;
    const chunk = await this.chunks.next();
    if (chunk === undefined) {
      this.ended = true;
      this.reader.end(take);
    } else this.reader.write(chunk, take);
    return true;
  }

  /** The first record that is not blank (the header or the first value), read ahead and kept for `batches`. */
  async firstValueRecord(): Promise<TableRecord | undefined> {
    let found: TableRecord | undefined;
    const take = (cells: string[], row: number) => {
      const record = { cells, row, quoted: this.reader.lastRecordQuoted };
      this.replay.push(record);
      if (found === undefined && !isBlankRecord(cells)) found = record;
    };
    while (found === undefined && (await this.feed(take)));
    return found;
  }

  /**
   * The value cells of the rows, the header (`skipRow`) left out, in batches of consecutive rows.
   * `onCsv` hears of the first row (after the header) with a quoted value or several fields.
   */
  async *batches(
    choice: ColumnChoice,
    skipRow: number,
    batchSize: number,
    onCsv?: (row: number) => void,
  ): AsyncGenerator<RowBatch> {
    const ready: RowBatch[] = [];
    let cells: ListCell[] = [];
    let firstRow = 0;
    let csvSeen = onCsv === undefined;
    const take = (record: string[], row: number, quoted = this.reader.lastRecordQuoted) => {
      if (row === skipRow) return;
      if (!csvSeen && (quoted || record.length > 1)) {
        csvSeen = true;
        onCsv!(row);
      }
      // A batch holds consecutive rows: the header between two rows ends one.
      if (cells.length && (row !== firstRow + cells.length || cells.length >= batchSize)) {
        ready.push({ firstRow, cells });
        cells = [];
      }
      if (cells.length === 0) firstRow = row;
      cells.push(cellOf(record, choice, this.delimiter));
    };
    for (const record of this.replay) take(record.cells, record.row, record.quoted);
    this.replay.length = 0;
    do {
      if (cells.length) {
        ready.push({ firstRow, cells });
        cells = [];
      }
      yield* ready;
      ready.length = 0;
    } while (await this.feed(take));
    if (cells.length) yield { firstRow, cells };
  }
}

function cellOf(record: string[], choice: ColumnChoice, delimiter: string): ListCell {
  const { index, width, name } = choice;
  if (record.length === 1 && index === 0) return record[0]!.trim();
  const column = name ? `column ${index + 1} (${quoteValue(name)})` : `column ${index + 1}`;
  if (record.length > width) {
    for (let i = width; i < record.length; i++) {
      if (record[i]!.trim() !== '') {
        const sep = delimiter === '\t' ? 'tab' : `"${delimiter}"`;
        return {
          problem: `has ${record.length} fields but the file has ${width} column${width === 1 ? '' : 's'} (a value containing ${sep} must be in double quotes)`,
          raw: record.join(delimiter),
        };
      }
    }
  }
  if (index >= record.length) {
    if (isBlankRecord(record)) return '';
    return {
      problem: `has only ${record.length} field${record.length === 1 ? '' : 's'}; ${column} is missing`,
      raw: record.join(delimiter),
    };
  }
  return record[index]!.trim();
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
