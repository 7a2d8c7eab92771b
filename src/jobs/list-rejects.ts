import type { LeadctlError } from '../errors.js';
import { CsvFile, type CsvWriteOptions, rejectsFileFailure } from '../ingest/table/writer.js';

/** One problem of a list file, as written to the rejects file and shown to the operator. */
export interface ListProblem {
  /** Spreadsheet row in the input (header included); undefined for problems not tied to a row. */
  row?: number;
  /** The value as found in the file, already masked when it is personal data. */
  value: string;
  reason: string;
}

export const REJECTS_COLUMNS = ['file', 'row', 'value', 'reason'] as const;

/**
 * The `--rejects FILE` CSV: one line per problem (file, row, value, reason), through the one CSV
 * writer, in batches so a file of a million bad rows costs no memory. The file is created (with
 * its header) before the input is read, so a path that cannot be written fails the run before any
 * work. A write that fails later (a full disk) never throws: the file is removed and `failure`
 * says why, for the caller to stop before uploading (or to report after).
 */
export class ListRejectsWriter {
  private pending: unknown[][] = [];
  private error: LeadctlError | undefined;
  private added = 0;

  private constructor(
    /** As the user gave it (messages and the summary show it so). */
    readonly path: string,
    private readonly file: CsvFile,
    private readonly source: string,
  ) {}

  static async open(
    path: string,
    cwd: string,
    source: string,
    options: CsvWriteOptions = {},
  ): Promise<ListRejectsWriter> {
    const file = new CsvFile(path, cwd, REJECTS_COLUMNS, { ...options, what: 'the rejects file' });
    file.open();
    return new ListRejectsWriter(path, file, source);
  }

  get written(): number {
    return this.added;
  }

  /** Why the file could not be written, if it could not (it was removed). */
  get failure(): LeadctlError | undefined {
    return this.error;
  }

  /** Never makes the caller wait: rows are written synchronously in batches. */
  write(problem: ListProblem): Promise<void> | undefined {
    this.added++;
    if (this.error) return undefined;
    this.pending.push([this.source, problem.row ?? '', problem.value, problem.reason]);
    if (this.pending.length >= 1024) this.flush();
    return undefined;
  }

  /** Writes what is pending now (before an upload: a full disk is found before anything is sent). */
  flush(): void {
    const rows = this.pending;
    this.pending = [];
    if (!this.error) this.guard(() => this.file.writeRows(rows));
  }

  /** Completes the file; a failure is kept in `failure`, never thrown. */
  finish(): void {
    this.flush();
    if (!this.error) this.guard(() => this.file.close());
  }

  async close(): Promise<void> {
    this.finish();
  }

  private guard(write: () => void): void {
    try {
      write();
    } catch (err) {
      this.file.abort();
      this.error = rejectsFileFailure(err, this.file.path);
    }
  }
}
