import { closeSync, openSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { InputError } from '../../errors.js';
import type { Reject } from './validate.js';

/**
 * The rejects file: one CSV line per problem of a record that was not accepted — refused here,
 * skipped by the service, or superseded by a later duplicate — naming the source file and row so
 * the LMS team can fix the export. Records merely not sent yet (interrupted run, service down)
 * are never written here: they belong to the journal and `--resume`.
 */

export const REJECT_COLUMNS = ['source_file', 'row', 'customer_id', 'loan_id', 'payment_id', 'field', 'reason'] as const;

const FLUSH_AT = 256;

export class RejectsWriter {
  private fd: number | undefined;
  private pending: string[][] = [];
  private written = 0;
  readonly path: string;

  /**
   * `explicit`: the user named the file, so it is created now (with just the header if nothing is
   * rejected), which lets a cron script rely on it. Otherwise it appears only when needed.
   */
  constructor(
    path: string,
    cwd: string,
    private readonly sources: readonly string[],
    readonly explicit: boolean,
  ) {
    this.path = resolve(cwd, path);
    if (explicit) this.open();
  }

  get count(): number {
    return this.written + this.pending.length;
  }

  /** True once the file exists on disk. */
  get created(): boolean {
    return this.fd !== undefined || this.written > 0;
  }

  add(reject: Reject): void {
    const source = this.sources[reject.src] ?? '';
    let reason = reject.reason;
    if (reject.supersededBy) {
      const winner = reject.supersededBy;
      const where = winner.src === reject.src ? `row ${winner.row}` : `${this.sources[winner.src] ?? '?'} row ${winner.row}`;
      reason = `${reason}: superseded by the later record at ${where} (the last one wins)`;
    }
    this.pending.push([source, String(reject.row), reject.customerId ?? '', reject.loanId ?? '', reject.paymentId ?? '', reject.field ?? '', reason]);
    if (this.pending.length >= FLUSH_AT) this.flush();
  }

  flush(): void {
    if (this.pending.length === 0) return;
    this.open();
    writeSync(this.fd!, stringify(this.pending));
    this.written += this.pending.length;
    this.pending = [];
  }

  close(): void {
    this.flush();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private open(): void {
    if (this.fd !== undefined) return;
    try {
      this.fd = openSync(this.path, 'w', 0o600);
    } catch (err) {
      throw new InputError(`cannot write the rejects file: ${(err as Error).message}`, { file: this.path });
    }
    writeSync(this.fd, stringify([[...REJECT_COLUMNS]]));
  }
}

/** The default rejects file when --rejects is not given: in the working folder, named after the run's start. */
export function defaultRejectsName(now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z').replace('T', '-');
  return `leadctl-rejects-${stamp}.csv`;
}
