import type { Writable } from 'node:stream';
import { CsvStream } from '../ingest/table/writer.js';
import type { DictionaryEntry } from '../ingest/leads/columns.js';
import { mapOrdered } from './ordered-pool.js';
import { attemptRecord, failedRecordsExitCode, reasonOf } from './record-retry.js';
import { streamLeadIds, type LeadIdsProgress, type LeadIdsSource } from './lead-ids.js';

export interface LeadSource extends LeadIdsSource {
  lead(
    leadId: number | string,
    mapIds?: readonly string[],
    options?: { signal?: AbortSignal },
  ): Promise<Record<string, unknown>>;
}

export interface ExportOptions {
  date?: string;
  datetime?: string;
  /** The CSV's columns, in order. */
  columns: readonly DictionaryEntry[];
  /** Map ids to ask for; undefined asks for every column (no filter). */
  mapIds?: readonly string[];
  concurrency: number;
  /** Further attempts per lead after the API client's own retries. */
  retries: number;
  retryDelayMs?: number;
  perPage?: number;
  signal?: AbortSignal;
  /** --csv-raw: no formula neutralising. */
  csvRaw?: boolean;
}

export type ExportEvent =
  | { type: 'listing'; ids: number }
  | { type: 'ids'; total: number }
  | { type: 'lead'; done: number; total: number; failed: number }
  | { type: 'unknown-columns'; leadId: number; mapIds: string[] };

export interface MissingLead {
  lead_id: number;
  attempts: number;
  reason: string;
}

export interface ExportResult {
  ids: number;
  exported: number;
  missing: MissingLead[];
  /** The exit code the missing leads call for: 0 when none, 4, or 5 when the service stayed unavailable for some. */
  missingExitCode: number;
}

/** Collects the day's ids, then fetches every lead with bounded concurrency and writes CSV rows in id order. */
export async function exportLeads(
  api: LeadSource,
  options: ExportOptions,
  out: Writable,
  onEvent: (event: ExportEvent) => void = () => undefined,
): Promise<ExportResult> {
  const ids: number[] = [];
  const progress: LeadIdsProgress = { pages: 0, ids: 0 };
  for await (const page of streamLeadIds(
    api,
    { date: options.date, datetime: options.datetime, perPage: options.perPage, all: true, signal: options.signal },
    progress,
  )) {
    ids.push(...page);
    // A large day takes many pages before the first lead is fetched: said as they come.
    onEvent({ type: 'listing', ids: ids.length });
  }
  options.signal?.throwIfAborted();
  onEvent({ type: 'ids', total: ids.length });

  // The caller owns `out` (it may be stdout, which must not be ended).
  const csv = new CsvStream(
    out,
    options.columns.map((c) => c.column),
    { raw: options.csvRaw },
  );
  const known = new Set(options.columns.map((c) => c.id));
  const reportUnknown = options.mapIds === undefined;
  const missing: MissingLead[] = [];
  const failures: unknown[] = [];
  let exported = 0;
  let done = 0;

  const results = mapOrdered(ids, options.concurrency, (id) =>
    attemptRecord(() => api.lead(id, options.mapIds ?? [], { signal: options.signal }), {
      retries: options.retries,
      baseDelayMs: options.retryDelayMs,
      signal: options.signal,
    }),
  );
  let i = 0;
  for await (const result of results) {
    // Stopped (Ctrl-C, SIGTERM): the leads not fetched are not "missing"; the file is not written.
    options.signal?.throwIfAborted();
    const id = ids[i++]!;
    done++;
    if (result.ok) {
      const row = options.columns.map((c) => (result.value as Record<string, unknown>)[c.id]);
      if (reportUnknown) {
        const extra = Object.keys(result.value).filter((k) => !known.has(k));
        if (extra.length) onEvent({ type: 'unknown-columns', leadId: id, mapIds: extra });
      }
      await csv.write(row);
      exported++;
    } else {
      missing.push({ lead_id: id, attempts: result.attempts, reason: reasonOf(result.error) });
      failures.push(result.error);
    }
    onEvent({ type: 'lead', done, total: ids.length, failed: missing.length });
  }
  await csv.end();
  return { ids: ids.length, exported, missing, missingExitCode: failures.length ? failedRecordsExitCode(failures) : 0 };
}
