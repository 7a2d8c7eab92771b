/**
 * Results on stdout in the chosen format: a boxed table for people, JSON (one document),
 * NDJSON (one line per record) or CSV for scripts. The CSV writer loads only when a result is
 * printed as CSV.
 */
import { printable } from '../io/printable.js';
import type { OutputFormat } from '../io/output-format.js';
import type { OutputStream } from '../io/io.js';
import { maskAccount, maskSsn } from '../io/mask.js';
import { formatTime, isIsoInstant, type TimeSettings } from './time.js';

export interface Column<T = any> {
  /** Field name in JSON, NDJSON and CSV; also the default accessor. */
  key: string;
  /** Table heading; defaults to the key. */
  header?: string;
  /** The raw value; defaults to `row[key]`. */
  value?: (row: T) => unknown;
  /** Table text for the value (dates, units). Machine formats always get the raw value. */
  format?: (value: unknown, row: T) => string;
  /** Personal data shown with all but the last four characters masked in tables. */
  mask?: 'ssn' | 'account';
  align?: 'left' | 'right' | 'center';
  /**
   * The column holds instants: its table heading says the zone they are shown in, `(local time)`
   * or, with --utc, `(UTC)`, so that the heading can never disagree with the values.
   */
  time?: true;
}

/** A column's table heading: its header (or key), with the zone of a column of instants. */
export function columnHeading(column: Pick<Column, 'key' | 'header' | 'time'>, time: TimeSettings = {}): string {
  const label = column.header ?? column.key;
  return column.time ? `${label} (${time.utc ? 'UTC' : 'local time'})` : label;
}

export interface ListOptions<T> {
  /** What a record becomes in JSON/NDJSON; defaults to the columns' keys and raw values. */
  jsonRow?: (row: T) => unknown;
  /** Replaces the whole JSON document (e.g. to add a summary); NDJSON still prints rows. */
  jsonDocument?: (rows: unknown[]) => unknown;
  /** Table text when there are no rows (e.g. "No lists."). */
  empty?: string;
}

export interface RowWriter<T> {
  /** Resolves when stdout can take more (backpressure for large exports). */
  write(row: T): Promise<void>;
  end(): Promise<void>;
}

export interface OutputSettings {
  format: OutputFormat;
  /** Colours in tables. */
  color: boolean;
  /** --csv-raw: CSV values exactly, no formula neutralising. */
  csvRaw?: boolean;
  /** Times in tables: the local zone with its offset, or UTC (--utc). */
  time?: TimeSettings;
  /** Columns a table may take (the terminal's width; 80 when unknown). */
  width?: number;
}

/** Tables are drawn to fit this many columns when nothing better is known (a pipe, a 0-column terminal). */
export const DEFAULT_WIDTH = 80;
/** A column is not narrowed below this (or its natural width, when smaller). */
const MIN_COLUMN = 8;

/** The width tables fit: COLUMNS when set, else the terminal's own width, else 80. */
export function outputWidth(stream: OutputStream, env: Record<string, string | undefined>): number {
  const fromEnv = Number(env.COLUMNS);
  if (Number.isInteger(fromEnv) && fromEnv >= 20) return fromEnv;
  if (stream.isTTY && typeof stream.columns === 'number' && stream.columns >= 20) return stream.columns;
  return DEFAULT_WIDTH;
}

/**
 * Column widths (content plus a space each side) that make a table of these natural widths fit
 * `width` with its borders: the widest columns give way first, and while it can be helped, none
 * below its longest word (`words`), so that names and ids are not split; never below MIN_COLUMN.
 * Undefined when the table fits as it is.
 */
export function fitColumns(
  natural: readonly number[],
  width: number,
  words: readonly number[] = [],
): number[] | undefined {
  const widths = [...natural];
  let total = widths.reduce((a, b) => a + b, 0) + natural.length + 1;
  if (total <= width) return undefined;
  const least = natural.map((n) => Math.min(n, MIN_COLUMN + 2));
  const whole = natural.map((n, i) => Math.max(least[i]!, Math.min(n, (words[i] ?? 0) + 2)));
  for (const floor of [whole, least]) {
    while (total > width) {
      // The widest column gives way, down to the next widest at once (a 20 MB cell is not
      // narrowed a character at a time), then ties take turns a character each.
      let widest = -1;
      let next = 0;
      for (let i = 0; i < widths.length; i++) {
        if (widths[i]! <= floor[i]!) continue;
        if (widest < 0 || widths[i]! > widths[widest]!) {
          if (widest >= 0) next = Math.max(next, widths[widest]!);
          widest = i;
        } else next = Math.max(next, widths[i]!);
      }
      if (widest < 0) break;
      const step = Math.max(1, Math.min(total - width, widths[widest]! - Math.max(next, floor[widest]!)));
      widths[widest]! -= step;
      total -= step;
    }
  }
  return widths;
}

function longestWord(text: string): number {
  let max = 0;
  for (const word of text.split(/\s+/)) max = Math.max(max, codePoints(word));
  return max;
}

function textWidth(text: string): number {
  let max = 0;
  for (const line of text.split('\n')) max = Math.max(max, codePoints(line));
  return max;
}

const SURROGATE = /[\ud800-\udfff]/;

/** Characters as a terminal counts them (code points, not UTF-16 units), without splitting the text. */
function codePoints(text: string): number {
  if (!SURROGATE.test(text)) return text.length;
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** `{customers: {read: 5}}` as `{"customers.read": 5}`: a summary as one spreadsheet row. */
function flatten(
  value: Record<string, unknown>,
  prefix = '',
  into: Record<string, unknown> = {},
): Record<string, unknown> {
  for (const [key, field] of Object.entries(value)) {
    const name = prefix + key;
    if (field !== null && typeof field === 'object' && !Array.isArray(field) && Object.keys(field).length > 0)
      flatten(field as Record<string, unknown>, `${name}.`, into);
    else into[name] = field;
  }
  return into;
}

function rawValue<T>(column: Column<T>, row: T): unknown {
  return column.value ? column.value(row) : (row as Record<string, unknown> | null | undefined)?.[column.key];
}

function humanText<T>(column: Column<T>, row: T, time: TimeSettings = {}): string {
  const value = rawValue(column, row);
  let text: string;
  if (column.format) text = column.format(value, row);
  else if (value === null || value === undefined) return '';
  else if (isIsoInstant(value)) text = formatTime(value, time);
  else text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  // Masking comes after the column's own formatting, so that it can never show the number whole.
  if (column.mask === 'ssn') text = maskSsn(text);
  else if (column.mask === 'account') text = maskAccount(text);
  // Cells hold the service's data and the input's: nothing in one may act on the terminal (a line
  // break is the cell's own: it is wrapped there).
  return text.includes('\n')
    ? text
        .split('\n')
        .map((line) => printable(line, Number.POSITIVE_INFINITY, false))
        .join('\n')
    : printable(text, Number.POSITIVE_INFINITY, false);
}

export function projectRow<T>(row: T, columns: readonly Column<T>[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columns) {
    const v = rawValue(c, row);
    out[c.key] = v === undefined ? null : v;
  }
  return out;
}

export class Output {
  constructor(
    private readonly stdout: OutputStream,
    private readonly settings: OutputSettings,
  ) {}

  get format(): OutputFormat {
    return this.settings.format;
  }

  /** An ISO instant for people: local time with its offset, or UTC with --utc. */
  time(value: string | Date): string {
    return formatTime(value, this.settings.time);
  }

  /** True for the table format: text meant for a person. */
  get isHuman(): boolean {
    return this.settings.format === 'table';
  }

  /** Writes text to stdout as is, waiting for the stream when it is full. */
  async write(text: string): Promise<void> {
    if (!this.stdout.write(text)) await new Promise<void>((resolve) => this.stdout.once('drain', () => resolve()));
  }

  /** Prints records in the chosen format. */
  async list<T>(rows: readonly T[], columns: readonly Column<T>[], options: ListOptions<T> = {}): Promise<void> {
    const toJson = options.jsonRow ?? ((row: T) => projectRow(row, columns));
    switch (this.settings.format) {
      case 'json': {
        const items = rows.map(toJson);
        await this.write(JSON.stringify(options.jsonDocument ? options.jsonDocument(items) : items, null, 2) + '\n');
        return;
      }
      case 'ndjson':
        for (const row of rows) await this.write(JSON.stringify(toJson(row)) + '\n');
        return;
      case 'csv':
        await this.write(await this.csv(rows, columns, true));
        return;
      case 'table':
        if (rows.length === 0 && options.empty) {
          await this.write(options.empty + '\n');
          return;
        }
        await this.write((await this.table(rows, columns)) + '\n');
        return;
    }
  }

  /** Prints one record: a two-column table for people, an object in JSON. */
  async record<T>(row: T, columns: readonly Column<T>[], options: { json?: unknown } = {}): Promise<void> {
    switch (this.settings.format) {
      case 'json':
        await this.write(JSON.stringify(options.json ?? projectRow(row, columns), null, 2) + '\n');
        return;
      case 'ndjson':
        await this.write(JSON.stringify(options.json ?? projectRow(row, columns)) + '\n');
        return;
      case 'csv':
        await this.write(await this.csv([row], columns, true));
        return;
      case 'table': {
        // One record reads best as aligned "Label  value" lines, not a boxed table.
        const labels = columns.map((c) => columnHeading(c, this.settings.time));
        const width = Math.max(...labels.map((l) => l.length));
        const indent = width + 2;
        const room = Math.max(20, (this.settings.width ?? DEFAULT_WIDTH) - indent);
        const lines = columns.map(
          (c, i) =>
            `${(labels[i] + ':').padEnd(indent)}${wrapText(humanText(c, row, this.settings.time), room).join('\n' + ' '.repeat(indent))}`,
        );
        await this.write(lines.join('\n') + '\n');
        return;
      }
    }
  }

  /**
   * Prints any JSON value as the run's document: pretty JSON, one NDJSON line, `human` text for a
   * table run, and for CSV a header of the object's keys and one row: a nested object's fields
   * are columns of their own (`customers.read`), arrays are JSON in their cell.
   */
  async document(value: unknown, human: () => string): Promise<void> {
    const format = this.settings.format;
    if (format === 'table') await this.write(human().replace(/\n?$/, '\n'));
    else if (format === 'json') await this.write(JSON.stringify(value, null, 2) + '\n');
    else if (format === 'csv' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const flat = flatten(value as Record<string, unknown>);
      const columns = Object.keys(flat).map((key): Column => ({ key }));
      await this.write(await this.csv([flat], columns, true));
    } else await this.write(JSON.stringify(value) + '\n');
  }

  /**
   * Records one by one, for results too large to hold: NDJSON and CSV go out as they come,
   * JSON as an array written incrementally; a table is drawn at the end.
   */
  async stream<T>(columns: readonly Column<T>[], options: ListOptions<T> = {}): Promise<RowWriter<T>> {
    const toJson = options.jsonRow ?? ((row: T) => projectRow(row, columns));
    const format = this.settings.format;
    if (format === 'table') {
      const rows: T[] = [];
      return {
        write: async (row) => {
          rows.push(row);
        },
        end: () => this.list(rows, columns, options),
      };
    }
    if (format === 'csv') {
      const { csvLine } = await import('../ingest/table/writer.js');
      const csv = { raw: this.settings.csvRaw };
      let first = true;
      return {
        write: async (row) => {
          const line = csvLine(
            columns.map((c) => rawValue(c, row)),
            csv,
          );
          if (first) {
            first = false;
            await this.write(
              csvLine(
                columns.map((c) => c.key),
                csv,
              ) + line,
            );
          } else {
            await this.write(line);
          }
        },
        end: async () => {
          if (first)
            await this.write(
              csvLine(
                columns.map((c) => c.key),
                csv,
              ),
            );
        },
      };
    }
    if (format === 'ndjson') {
      return { write: (row) => this.write(JSON.stringify(toJson(row)) + '\n'), end: async () => {} };
    }
    let count = 0;
    return {
      write: (row) => this.write((count++ === 0 ? '[\n  ' : ',\n  ') + JSON.stringify(toJson(row))),
      end: () => this.write(count === 0 ? '[]\n' : '\n]\n'),
    };
  }

  private async csv<T>(rows: readonly T[], columns: readonly Column<T>[], header: boolean): Promise<string> {
    const { csvLine } = await import('../ingest/table/writer.js');
    const csv = { raw: this.settings.csvRaw };
    let text = header
      ? csvLine(
          columns.map((c) => c.key),
          csv,
        )
      : '';
    for (const row of rows)
      text += csvLine(
        columns.map((c) => rawValue(c, row)),
        csv,
      );
    return text;
  }

  private async table<T>(rows: readonly T[], columns: readonly Column<T>[]): Promise<string> {
    const head = columns.map((c) => columnHeading(c, this.settings.time));
    const cells = rows.map((row) => columns.map((c) => humanText(c, row, this.settings.time)));
    // Each column as wide as its widest cell, then narrowed (wrapping its cells) to fit the screen.
    const natural = head.map((h, i) => Math.max(textWidth(h), ...cells.map((r) => textWidth(r[i]!))) + 2);
    const words = head.map((h, i) => Math.max(longestWord(h), ...cells.map((r) => longestWord(r[i]!))));
    const widths = fitColumns(natural, this.settings.width ?? DEFAULT_WIDTH, words) ?? natural;
    // Cells are wrapped here, at spaces and else inside a word: nothing is cut off.
    const fit = (text: string, i: number) => wrapText(text, widths[i]! - 2);
    return drawTable(
      head.map(fit),
      cells.map((r) => r.map(fit)),
      widths,
      columns.map((c) => c.align ?? 'left'),
      this.settings.color,
    );
  }
}

/**
 * A boxed table of cells already cut into lines (`widths` include a space each side), drawn in
 * time linear in its text: no rule between rows (a list of 20 rows stays 20 lines, not 40), the
 * header bold at most, never red. The layout cli-table3 drew, whose drawing of a cell measured
 * its whole text again for each of its lines (minutes for a cell of a few KB).
 */
function drawTable(
  head: readonly string[][],
  rows: readonly string[][][],
  widths: readonly number[],
  aligns: readonly ('left' | 'right' | 'center')[],
  bold: boolean,
): string {
  const rule = (left: string, middle: string, right: string) =>
    left + widths.map((w) => '─'.repeat(w)).join(middle) + right;
  const lines = [rule('┌', '┬', '┐')];
  const drawRow = (cells: readonly string[][], style: (text: string) => string) => {
    const height = Math.max(1, ...cells.map((c) => c.length));
    for (let line = 0; line < height; line++) {
      let text = '│';
      for (let i = 0; i < widths.length; i++)
        text += style(` ${pad(cells[i]?.[line] ?? '', widths[i]! - 2, aligns[i] ?? 'left')} `) + '│';
      lines.push(text);
    }
  };
  drawRow(head, bold ? (text) => `\u001b[1m${text}\u001b[22m` : (text) => text);
  if (rows.length) {
    lines.push(rule('├', '┼', '┤'));
    for (const row of rows) drawRow(row, (text) => text);
  }
  lines.push(rule('└', '┴', '┘'));
  return lines.join('\n');
}

function pad(text: string, width: number, align: 'left' | 'right' | 'center'): string {
  const room = width - codePoints(text);
  if (room <= 0) return text;
  if (align === 'right') return ' '.repeat(room) + text;
  if (align === 'center') return ' '.repeat(room - Math.ceil(room / 2)) + text + ' '.repeat(Math.ceil(room / 2));
  return text + ' '.repeat(room);
}

/** A value cut into lines of at most `width` characters, at spaces where it can be; linear in its length. */
export function wrapText(text: string, width: number): string[] {
  const room = Math.max(1, width);
  const out: string[] = [];
  for (const line of text.split('\n')) {
    // Cut by code points: a string's own units when it has no surrogate pair.
    const chars: string | string[] = SURROGATE.test(line) ? [...line] : line;
    let start = 0;
    while (chars.length - start > room) {
      let space = -1;
      for (let k = start + room; k > start; k--) {
        if (chars[k] === ' ') {
          space = k - start;
          break;
        }
      }
      // At the last space that fits; inside a word only when none does (a word wider than the column).
      const cut = space > 0 ? space : room;
      out.push(joined(chars.slice(start, start + cut)).trimEnd());
      start += cut;
      if (chars[start] === ' ') start++;
    }
    out.push(joined(chars.slice(start)));
  }
  return out;
}

function joined(chars: string | string[]): string {
  return typeof chars === 'string' ? chars : chars.join('');
}
