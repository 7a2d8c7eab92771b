import { existsSync } from 'node:fs';
import { type LeadctlError, UsageError } from '../../errors.js';
import { CsvFile, type CsvWriteOptions, rejectsFileFailure } from '../../ingest/table/writer.js';
import type { Reject } from './validate.js';

/**
 * The rejects file: one CSV line per problem of a record that was not accepted — refused here,
 * skipped by the service, or superseded by a later duplicate — naming the source file and row so
 * the LMS team can fix the export. Records merely not sent yet (interrupted run, service down)
 * are never written here: they belong to the journal and `--resume`.
 */

export const REJECT_COLUMNS = [
  'source_file',
  'row',
  'customer_id',
  'loan_id',
  'payment_id',
  'field',
  'reason',
] as const;

const FLUSH_AT = 256;
/** Reasons told apart in a summary; the rest are counted together. */
const MAX_REASONS = 50;

/** One kind of reject: how many records, and the first one as an example (as in the rejects file). */
export interface RejectReason {
  /** The reason with its particular values left out, e.g. `payment_at: … is not a real date and time (column …)`. */
  reason: string;
  count: number;
  example: {
    source_file: string;
    row: number;
    customer_id: string | null;
    loan_id: string | null;
    payment_id: string | null;
    field: string | null;
    reason: string;
  };
}

/**
 * The kind of a reject: its field and reason without the values particular to the record (quoted
 * text, ids and numbers), so that "$12.345" and "$0.001" with a fraction of a cent count together.
 */
export function reasonKind(field: string | undefined, reason: string): string {
  const general = reason.replace(/"(?:[^"]|"")*"/g, '…').replace(/[^\s;:()]*\d[^\s;:()]*/g, '…');
  return field && !general.startsWith(`${field}:`) && !general.startsWith(`${field} `)
    ? `${field}: ${general}`
    : general;
}

export class RejectsWriter {
  private readonly file: CsvFile;
  private pending: string[][] = [];
  private readonly kinds = new Map<string, RejectReason>();
  private other = 0;
  private added = 0;
  private error: LeadctlError | undefined;
  private readonly onFailure: ((error: LeadctlError) => void) | undefined;

  /**
   * `explicit`: the user named the file, so it is created now (with just the header if nothing is
   * rejected), which lets a cron script rely on it. Otherwise it appears only when needed. Either
   * way the path is checked now, before any work.
   *
   * Writing never throws once the run is under way (a reject may come from an answer of the
   * service, which must still be counted): a file that cannot be written (a full disk) is removed,
   * the rejects are still counted and grouped, and `onFailure` hears it once, to stop the run.
   */
  constructor(
    path: string,
    cwd: string,
    private readonly sources: readonly string[],
    readonly explicit: boolean,
    options: CsvWriteOptions & { onFailure?: (error: LeadctlError) => void } = {},
  ) {
    try {
      this.file = new CsvFile(path, cwd, REJECT_COLUMNS, { ...options, what: 'the rejects file' });
    } catch (err) {
      // Refused before anything is sent, even for a run that will reject nothing: found later, a
      // reject would stop a push half-sent. The default file is in the working folder (cron's HOME).
      if (explicit || !(err instanceof UsageError)) throw err;
      throw new UsageError(`${err.message} (the default, in the working folder)`, {
        hint: 'name a rejects file in a folder you can write to, with --rejects FILE',
        cause: err,
      });
    }
    this.onFailure = options.onFailure;
    if (explicit) this.file.open();
  }

  get path(): string {
    return this.file.path;
  }

  /** Reject lines of the run (written, or not written when the file failed). */
  get count(): number {
    return this.added;
  }

  /** True once the file exists on disk (under a temporary name until closed); false after it failed. */
  get created(): boolean {
    return this.error === undefined && (this.file.opened || this.file.count > 0);
  }

  /** Why the file could not be written, if it could not. */
  get failure(): LeadctlError | undefined {
    return this.error;
  }

  add(reject: Reject): void {
    this.added++;
    const source = this.sources[reject.src] ?? '';
    let reason = reject.reason;
    if (reject.supersededBy) {
      const winner = reject.supersededBy;
      const where =
        winner.src === reject.src ? `row ${winner.row}` : `${this.sources[winner.src] ?? '?'} row ${winner.row}`;
      reason = `${reason}: superseded by the later record at ${where} (the last one wins)`;
    }
    this.pending.push([
      source,
      String(reject.row),
      reject.customerId ?? '',
      reject.loanId ?? '',
      reject.paymentId ?? '',
      reject.field ?? '',
      reason,
    ]);
    const kind = reasonKind(reject.field, reason);
    const known = this.kinds.get(kind);
    if (known) known.count++;
    else if (this.kinds.size >= MAX_REASONS) this.other++;
    else {
      this.kinds.set(kind, {
        reason: kind,
        count: 1,
        example: {
          source_file: source,
          row: reject.row,
          customer_id: reject.customerId || null,
          loan_id: reject.loanId || null,
          payment_id: reject.paymentId || null,
          field: reject.field || null,
          reason,
        },
      });
    }
    if (this.pending.length >= FLUSH_AT) this.flush();
  }

  /** The rejects so far grouped by kind, most frequent first (beyond MAX_REASONS kinds, one "other reasons" group). */
  reasons(): RejectReason[] {
    const list = [...this.kinds.values()].sort((a, b) => b.count - a.count);
    if (this.other > 0)
      list.push({ reason: 'other reasons', count: this.other, example: list[list.length - 1]!.example });
    return list;
  }

  flush(): void {
    const rows = this.pending;
    this.pending = [];
    if (this.error) return;
    this.guard(() => this.file.writeRows(rows));
  }

  close(): void {
    this.flush();
    if (!this.error) this.guard(() => this.file.close());
  }

  /**
   * Closes the file of a run that ended in an error before it sent anything (another run holds
   * the lock, a bad mapping, refused credentials): with no reject of its own, the file of an
   * earlier run at that path stays as it was; with none there, the file is made (header only),
   * as a cron script may rely on it.
   */
  closeKeepingEarlier(): void {
    if (this.added === 0 && existsSync(this.file.path)) this.file.abort();
    else this.close();
  }

  private guard(write: () => void): void {
    try {
      write();
    } catch (err) {
      this.file.abort();
      this.error = rejectsFileFailure(err, this.file.path);
      this.onFailure?.(this.error);
    }
  }
}

/** The default rejects file when --rejects is not given: in the working folder, named after the run's start. */
export function defaultRejectsName(now: Date): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')
    .replace('T', '-');
  return `leadctl-rejects-${stamp}.csv`;
}
