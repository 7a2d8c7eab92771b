/**
 * Results on stdout in the chosen format: a cli-table3 table for people, JSON (one document),
 * NDJSON (one line per record) or CSV for scripts. The table and CSV libraries load only
 * when a result is printed in their format.
 */
import type { OutputFormat } from '../cli/context.js';
import type { OutputStream } from '../cli/io.js';
import { maskAccount, maskSsn } from './mask.js';

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
}

function rawValue<T>(column: Column<T>, row: T): unknown {
  return column.value ? column.value(row) : (row as Record<string, unknown> | null | undefined)?.[column.key];
}

function humanText<T>(column: Column<T>, row: T): string {
  const value = rawValue(column, row);
  let text: string;
  if (column.format) text = column.format(value, row);
  else if (value === null || value === undefined) return '';
  else text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  // Masking comes last, so that a column's own formatting can never show the number whole.
  if (column.mask === 'ssn') return maskSsn(text);
  if (column.mask === 'account') return maskAccount(text);
  return text;
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
        const labels = columns.map((c) => c.header ?? c.key);
        const width = Math.max(...labels.map((l) => l.length));
        const lines = columns.map((c, i) => `${(labels[i] + ':').padEnd(width + 2)}${humanText(c, row)}`);
        await this.write(lines.join('\n') + '\n');
        return;
      }
    }
  }

  /**
   * Prints any JSON value as the run's document: pretty JSON, one NDJSON line, `human` text for a
   * table run, and for CSV a header of the object's keys and one row (nested values as JSON).
   */
  async document(value: unknown, human: () => string): Promise<void> {
    const format = this.settings.format;
    if (format === 'table') await this.write(human().replace(/\n?$/, '\n'));
    else if (format === 'json') await this.write(JSON.stringify(value, null, 2) + '\n');
    else if (format === 'csv' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const columns = Object.keys(value).map((key): Column => ({ key }));
      await this.write(await this.csv([value], columns, true));
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
          const line = csvLine(columns.map((c) => rawValue(c, row)), csv);
          if (first) {
            first = false;
            await this.write(csvLine(columns.map((c) => c.key), csv) + line);
          } else {
            await this.write(line);
          }
        },
        end: async () => {
          if (first) await this.write(csvLine(columns.map((c) => c.key), csv));
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
    let text = header ? csvLine(columns.map((c) => c.key), csv) : '';
    for (const row of rows) text += csvLine(columns.map((c) => rawValue(c, row)), csv);
    return text;
  }

  private async table<T>(rows: readonly T[], columns: readonly Column<T>[]): Promise<string> {
    const Table = await loadTable();
    const table = new Table({
      ...this.tableStyle(),
      head: columns.map((c) => c.header ?? c.key),
      colAligns: columns.map((c) => c.align ?? 'left'),
    });
    for (const row of rows) table.push(columns.map((c) => humanText(c, row)));
    return table.toString();
  }

  /** No rule between rows: a list of 20 rows stays 20 lines, not 40. */
  private tableStyle() {
    return this.settings.color ? { style: { compact: true } } : { style: { head: [] as string[], border: [] as string[], compact: true } };
  }
}

async function loadTable() {
  const mod = await import('cli-table3');
  return mod.default;
}
