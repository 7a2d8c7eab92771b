import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { resolve } from 'node:path';
import type { Stringifier } from 'csv-stringify';
import { UsageError } from '../errors.js';

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
 * The `--rejects FILE` CSV: one line per problem (file, row, value, reason), streamed so a
 * file of a million bad rows costs no memory. The file is created (with its header) before
 * the input is read, so a path that cannot be written fails the run before any work.
 */
export class ListRejectsWriter {
  private count = 0;

  private constructor(
    readonly path: string,
    private readonly source: string,
    private readonly csv: Stringifier,
    private readonly out: WriteStream,
  ) {}

  static async open(path: string, cwd: string, source: string): Promise<ListRejectsWriter> {
    const out = createWriteStream(resolve(cwd, path));
    try {
      await once(out, 'open');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new UsageError(`cannot write the rejects file ${path}: ${code === 'ENOENT' ? 'its folder does not exist' : (err as Error).message}`, { cause: err });
    }
    const { stringify } = await import('csv-stringify');
    const csv = stringify({ header: true, columns: [...REJECTS_COLUMNS] });
    csv.pipe(out);
    return new ListRejectsWriter(path, source, csv, out);
  }

  get written(): number {
    return this.count;
  }

  /** Returns a promise only when the file is behind and the caller should wait for it. */
  write(problem: ListProblem): Promise<void> | undefined {
    this.count++;
    const ok = this.csv.write({ file: this.source, row: problem.row ?? '', value: problem.value, reason: problem.reason });
    return ok ? undefined : once(this.csv, 'drain').then(() => undefined);
  }

  async close(): Promise<void> {
    const finished = once(this.out, 'finish');
    this.csv.end();
    await finished;
  }
}
