import { accessSync, constants, statSync } from 'node:fs';
import { once } from 'node:events';
import { dirname, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { environmentError, ExitCode, LeadctlError, UsageError } from '../../errors.js';
import { SafeFile, targetKind, writeStreamSafely } from '../../io/safe-file.js';

/**
 * The one CSV writer: every CSV leadctl writes (rejects files, dry-run results, lead exports,
 * `-o csv`) goes through `csvLine`. Cells that a spreadsheet would run as a formula — text that
 * starts with =, +, -, @, a tab or a carriage return, e.g. `=HYPERLINK(…)` from a lead — get a
 * leading `'` (OWASP's advice against CSV injection); numbers keep their sign. `raw` (the global
 * `--csv-raw`) turns that off for pipelines that need the exact values.
 *
 * Files are written through src/io/safe-file.ts: a temporary file beside NAME (exclusive, 0600:
 * they hold personal data) renamed to NAME when complete, so a file with the final name is never
 * half-written; a device or FIFO written in place; a symbolic link refused. The path is checked
 * before any work starts.
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
 * Refuses, before any work, an output path that is a directory, a symbolic link, a block device or
 * a socket, or whose folder does not exist or cannot be written. `what` names it in the message
 * ("the rejects file", "--out"). A character device or FIFO is accepted: it is written in place.
 */
export function checkOutputPath(path: string, cwd: string, what: string): string {
  const full = resolve(cwd, path);
  let isDirectory = false;
  try {
    isDirectory = statSync(full).isDirectory();
  } catch {
    // a new file (or a dangling link, refused below)
  }
  if (isDirectory) throw new UsageError(`${what} ${path} is a directory; name a file`);
  const kind = targetKind(full, what);
  try {
    if (kind === 'device' || kind === 'fifo') {
      accessSync(full, constants.W_OK);
      return full;
    }
    if (!statSync(dirname(full)).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOENT' });
    accessSync(dirname(full), constants.W_OK);
    if (kind === 'file') accessSync(full, constants.W_OK);
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
 * be lost to a pending write) through a SafeFile, completed under its name by `close()`. A write
 * that fails (a full disk) removes what was written and throws an EnvironmentError naming the file;
 * so does `close()`. `abort()` removes it.
 */
export class CsvFile {
  private file: SafeFile | undefined;
  private rows = 0;
  private completed = false;
  private failure: unknown;
  readonly path: string;

  constructor(
    path: string,
    cwd: string,
    private readonly header: readonly string[],
    private readonly options: CsvWriteOptions & { what: string },
  ) {
    this.path = checkOutputPath(path, cwd, options.what);
  }

  /** Data rows written so far. */
  get count(): number {
    return this.rows;
  }

  /** True once the file has been created (it is, at the latest, by the first row), and after it is completed. */
  get opened(): boolean {
    return this.file !== undefined || this.completed;
  }

  /** Creates the file with its header now. */
  open(): void {
    if (this.failure !== undefined) throw this.failure;
    if (this.file !== undefined) return;
    this.file = SafeFile.open(this.path, { what: this.options.what });
    this.write(csvLine(this.header, this.options));
  }

  writeRows(rows: readonly (readonly unknown[])[]): void {
    if (rows.length === 0) return;
    this.open();
    let text = '';
    for (const row of rows) text += csvLine(row, this.options);
    this.write(text);
    this.rows += rows.length;
  }

  private write(text: string): void {
    try {
      this.file!.write(text);
    } catch (err) {
      this.fail(err);
    }
  }

  private fail(err: unknown): never {
    this.abort();
    this.failure = err;
    throw err;
  }

  /** Completes the file under its final name (nothing happens when it was never opened). */
  close(): void {
    if (this.file === undefined) return;
    try {
      this.file.commit();
    } catch (err) {
      this.fail(err);
    }
    this.file = undefined;
    this.completed = true;
  }

  abort(): void {
    this.file?.discard();
    this.file = undefined;
  }
}

/**
 * What a failed write of a rejects file is reported as: the error itself when leadctl already
 * named it, else the environment's account (a full disk, a read-only folder), else a bug.
 */
export function rejectsFileFailure(err: unknown, path: string): LeadctlError {
  if (err instanceof LeadctlError) return err;
  return (
    environmentError(err, path, 'the rejects file') ??
    new LeadctlError('unexpected', ExitCode.UNEXPECTED, `the rejects file ${path}: ${String(err)}`, { cause: err })
  );
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
    // A stream that failed (a full disk) never drains: say why instead of waiting for ever.
    if (this.out.errored) throw this.out.errored;
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
 * The export goes to a temporary file beside FILE, renamed when complete, so a file with the final
 * name is never half-written (a crash or Ctrl-C leaves only the temporary file; a failure removes
 * it); a device or FIFO is written in place (see src/io/safe-file.ts).
 */
export function exportToFile<T>(path: string, run: (out: Writable) => Promise<T>, what = '--out'): Promise<T> {
  return writeStreamSafely(path, run, { what });
}
