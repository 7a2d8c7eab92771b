import {
  accessSync,
  closeSync,
  constants,
  createWriteStream,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { finished } from 'node:stream/promises';
import { once } from 'node:events';
import { dirname, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { UsageError } from '../../errors.js';

/**
 * The one CSV writer: every CSV leadctl writes (rejects files, dry-run results, lead exports,
 * `-o csv`) goes through `csvLine`. Cells that a spreadsheet would run as a formula — text that
 * starts with =, +, -, @, a tab or a carriage return, e.g. `=HYPERLINK(…)` from a lead — get a
 * leading `'` (OWASP's advice against CSV injection); numbers keep their sign. `raw` (the global
 * `--csv-raw`) turns that off for pipelines that need the exact values.
 *
 * Files are written as `NAME.partial`, mode 0600 (they hold personal data), and renamed to NAME
 * when complete, so a file with the final name is never half-written; the path is checked before
 * any work starts.
 */

export interface CsvWriteOptions {
  /** Write values exactly (no formula neutralising). */
  raw?: boolean;
}

const FORMULA_START = /^[=+\-@\t\r]/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** The text of one cell: null/undefined empty, booleans true/false, objects as JSON, formulas neutralised. */
export function csvCellText(value: unknown, options: CsvWriteOptions = {}): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (options.raw || !FORMULA_START.test(text) || NUMBER.test(text)) return text;
  return `'${text}`;
}

/** One CSV record with its line break (RFC 4180 quoting). */
export function csvLine(cells: readonly unknown[], options: CsvWriteOptions = {}): string {
  return stringify([cells.map((c) => csvCellText(c, options))]);
}

/**
 * Refuses, before any work, an output path that is a directory or whose folder does not exist or
 * cannot be written. `what` names it in the message ("the rejects file", "--out").
 */
export function checkOutputPath(path: string, cwd: string, what: string): string {
  const full = resolve(cwd, path);
  let isDirectory = false;
  let exists = false;
  try {
    const info = statSync(full);
    exists = true;
    isDirectory = info.isDirectory();
  } catch {
    // a new file
  }
  if (isDirectory) throw new UsageError(`${what} ${path} is a directory; name a file`);
  try {
    if (!statSync(dirname(full)).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOENT' });
    accessSync(dirname(full), constants.W_OK);
    if (exists) accessSync(full, constants.W_OK);
  } catch (err) {
    const why =
      (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'its folder does not exist'
        : 'it cannot be written (permission denied)';
    throw new UsageError(`cannot write ${what} ${path}: ${why}`, { cause: err });
  }
  return full;
}

/**
 * A CSV file written row by row (synchronously: rejects arrive from many places and must never
 * be lost to a pending write) as NAME.partial, renamed to NAME by `close()`. `abort()` removes it.
 */
export class CsvFile {
  private fd: number | undefined;
  private rows = 0;
  readonly path: string;
  private readonly partial: string;

  constructor(
    path: string,
    cwd: string,
    private readonly header: readonly string[],
    private readonly options: CsvWriteOptions & { what: string },
  ) {
    this.path = checkOutputPath(path, cwd, options.what);
    this.partial = `${this.path}.partial`;
  }

  /** Data rows written so far. */
  get count(): number {
    return this.rows;
  }

  /** True once the file has been created (it is, at the latest, by the first row). */
  get opened(): boolean {
    return this.fd !== undefined;
  }

  /** Creates the file with its header now. */
  open(): void {
    if (this.fd !== undefined) return;
    try {
      this.fd = openSync(this.partial, 'w', 0o600);
    } catch (err) {
      throw new UsageError(`cannot write ${this.options.what} ${this.path}: ${(err as Error).message}`, { cause: err });
    }
    writeSync(this.fd, csvLine(this.header, this.options));
  }

  writeRows(rows: readonly (readonly unknown[])[]): void {
    if (rows.length === 0) return;
    this.open();
    let text = '';
    for (const row of rows) text += csvLine(row, this.options);
    writeSync(this.fd!, text);
    this.rows += rows.length;
  }

  /** Completes the file under its final name (nothing happens when it was never opened). */
  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
    renameSync(this.partial, this.path);
  }

  abort(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    rmSync(this.partial, { force: true });
  }
}

/** CSV rows onto a stream the caller owns (stdout, or a file from `exportToFile`), with back-pressure. */
export class CsvStream {
  private started = false;

  constructor(
    private readonly out: Writable,
    private readonly header: readonly string[],
    private readonly options: CsvWriteOptions = {},
  ) {}

  async write(cells: readonly unknown[]): Promise<void> {
    const text = this.head() + csvLine(cells, this.options);
    if (!this.out.write(text)) await once(this.out, 'drain');
  }

  /** Writes the header if no row came, so that the output is still a CSV with its columns. */
  async end(): Promise<void> {
    const text = this.head();
    if (text && !this.out.write(text)) await once(this.out, 'drain');
  }

  private head(): string {
    if (this.started) return '';
    this.started = true;
    return csvLine(this.header, this.options);
  }
}

/**
 * The export goes to `FILE.partial` and is renamed when complete, so a file with the final
 * name is never half-written (a crash or Ctrl-C leaves only the .partial).
 */
export async function exportToFile<T>(path: string, run: (out: Writable) => Promise<T>): Promise<T> {
  const partial = `${path}.partial`;
  const out = createWriteStream(partial, { mode: 0o600 });
  try {
    const result = await run(out);
    out.end();
    await finished(out);
    await rename(partial, path);
    return result;
  } catch (err) {
    // The file is opened asynchronously: wait until the stream has closed, or a late open
    // would create the .partial file again after it was removed.
    if (!out.closed) {
      const closed = once(out, 'close');
      out.destroy();
      await closed;
    }
    await rm(partial, { force: true });
    throw err;
  }
}
