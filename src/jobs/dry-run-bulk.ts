import type { Writable } from 'node:stream';
import { CsvStream, type CsvWriteOptions } from '../ingest/table/writer.js';
import { ExitCode, LeadctlError, ValidationError } from '../errors.js';
import type { DryRunRequest } from '../schema/index.js';
import type { DryRunFile } from '../ingest/dry-run/input.js';
import { count } from '../output/words.js';
import { mapOrdered } from './ordered-pool.js';
import { attemptRecord, reasonOf } from './record-retry.js';

export interface DryRunSource {
  dryRun(body: DryRunRequest, options?: { signal?: AbortSignal }): Promise<{ pass: boolean; reason?: string | null }>;
}

export type DryRunRowStatus = 'passed' | 'failed' | 'invalid' | 'error';

export interface DryRunRowResult {
  row: number;
  cells: string[];
  status: DryRunRowStatus;
  /** `true`/`false` for checked rows; empty for rows that could not be checked. */
  /** null when the row could not be checked (invalid, or the service could not answer). */
  pass: boolean | null;
  /** The service's reason for a failure; the problem for an invalid row; the error for the rest. */
  reason: string;
}

export interface DryRunBulkSummary {
  rows: number;
  passed: number;
  failed: number;
  invalid: number;
  errors: number;
  /** Failures counted by the service's reason. */
  reasons: Record<string, number>;
  /** rows = passed + failed + invalid + errors, checked on every run. */
  accounting?: { balanced: boolean };
}

export interface DryRunBulkOptions {
  concurrency: number;
  retries: number;
  retryDelayMs?: number;
  signal?: AbortSignal;
}

export const PASS_COLUMN = 'pass';
export const REASON_COLUMN = 'reason';

/**
 * Checks every row of the file (invalid rows are not sent) and writes the input's columns plus
 * `pass` and `reason`, in the file's order. Every row ends in the output: nothing is dropped.
 */
export async function runDryRunBulk(
  api: DryRunSource,
  file: DryRunFile,
  options: DryRunBulkOptions,
  onRow: (result: DryRunRowResult) => void | Promise<void>,
): Promise<DryRunBulkSummary> {
  const summary: DryRunBulkSummary = { rows: 0, passed: 0, failed: 0, invalid: 0, errors: 0, reasons: {} };
  const results = mapOrdered(file.rows, options.concurrency, async (row): Promise<DryRunRowResult> => {
    const base = { row: row.row, cells: row.cells };
    if (!row.check.ok)
      return { ...base, status: 'invalid', pass: null, reason: `invalid: ${row.check.problems.join('; ')}` };
    const request = row.check.request;
    const attempt = await attemptRecord(() => api.dryRun(request, { signal: options.signal }), {
      retries: options.retries,
      baseDelayMs: options.retryDelayMs,
      signal: options.signal,
    });
    if (attempt.ok) {
      return attempt.value.pass
        ? { ...base, status: 'passed', pass: true, reason: '' }
        : { ...base, status: 'failed', pass: false, reason: attempt.value.reason ?? 'unknown' };
    }
    // The service refusing the row's content is the row's problem, not an outage.
    if (attempt.error instanceof ValidationError)
      return { ...base, status: 'invalid', pass: null, reason: `invalid: ${reasonOf(attempt.error)}` };
    return { ...base, status: 'error', pass: null, reason: `error: ${reasonOf(attempt.error)}` };
  });
  for await (const result of results) {
    // Stopped (Ctrl-C, SIGTERM): the rows not checked are not "errors"; an --out file is not written.
    options.signal?.throwIfAborted();
    summary.rows++;
    if (result.status === 'passed') summary.passed++;
    else if (result.status === 'failed') {
      summary.failed++;
      summary.reasons[result.reason] = (summary.reasons[result.reason] ?? 0) + 1;
    } else if (result.status === 'invalid') summary.invalid++;
    else summary.errors++;
    await onRow(result);
  }
  const accounted = summary.passed + summary.failed + summary.invalid + summary.errors;
  summary.accounting = { balanced: accounted === summary.rows };
  if (!summary.accounting.balanced) {
    throw new LeadctlError(
      'internal',
      ExitCode.UNEXPECTED,
      `${file.name}: the counts do not add up (${count(summary.rows, 'row')}, ${accounted} accounted for): a bug in leadctl`,
    );
  }
  return summary;
}

/** CSV writer of the results: the input's header plus pass and reason. The caller owns `out`. */
export function dryRunCsvWriter(
  header: readonly string[],
  out: Writable,
  options: CsvWriteOptions = {},
): { write(r: DryRunRowResult): Promise<void>; end(): Promise<void> } {
  const csv = new CsvStream(out, [...header, PASS_COLUMN, REASON_COLUMN], options);
  return {
    async write(r) {
      const cells = header.map((_, i) => r.cells[i] ?? '');
      // Rows longer than the header keep their extra cells in the reason, so nothing is lost.
      const extra = r.cells.length > header.length ? ` (extra cells: ${r.cells.slice(header.length).join(' | ')})` : '';
      await csv.write([...cells, r.pass, r.reason + extra]);
    },
    end: () => csv.end(),
  };
}

/** Exit code of a bulk run: 5 when rows could not be checked, 4 when any row failed or was invalid, else 0. */
export function dryRunBulkExitCode(s: DryRunBulkSummary): number {
  if (s.errors > 0) return 5;
  if (s.failed > 0 || s.invalid > 0) return 4;
  return 0;
}
