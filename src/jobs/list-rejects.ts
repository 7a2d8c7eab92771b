import { CsvFile, type CsvWriteOptions } from '../ingest/table/writer.js';

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
 * its header) before the input is read, so a path that cannot be written fails the run before any work.
 */
export class ListRejectsWriter {
  private pending: unknown[][] = [];

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
    return this.file.count + this.pending.length;
  }

  /** Never makes the caller wait: rows are written synchronously in batches. */
  write(problem: ListProblem): Promise<void> | undefined {
    this.pending.push([this.source, problem.row ?? '', problem.value, problem.reason]);
    if (this.pending.length >= 1024) this.flush();
    return undefined;
  }

  private flush(): void {
    this.file.writeRows(this.pending);
    this.pending = [];
  }

  async close(): Promise<void> {
    this.flush();
    this.file.close();
  }
}
