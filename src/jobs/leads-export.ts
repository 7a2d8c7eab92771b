import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { DictionaryEntry } from '../ingest/dictionary-columns.js';
import { mapOrdered } from './ordered-pool.js';
import { attemptRecord, failedRecordsExitCode, reasonOf } from './record-retry.js';
import { streamLeadIds, type LeadIdsProgress, type LeadIdsSource } from './lead-ids.js';

export interface LeadSource extends LeadIdsSource {
  lead(leadId: number | string, mapIds?: readonly string[], options?: { signal?: AbortSignal }): Promise<Record<string, unknown>>;
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
}

export type ExportEvent =
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
  for await (const page of streamLeadIds(api, { date: options.date, datetime: options.datetime, perPage: options.perPage, all: true, signal: options.signal }, progress)) {
    ids.push(...page);
  }
  onEvent({ type: 'ids', total: ids.length });

  const csv = stringify({ header: true, columns: options.columns.map((c) => ({ key: c.id, header: c.column })), cast: { boolean: (b) => String(b) } });
  // The caller owns `out` (it may be stdout, which must not be ended).
  csv.pipe(out, { end: false });
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
    const id = ids[i++]!;
    done++;
    if (result.ok) {
      const row: Record<string, unknown> = {};
      for (const [mapId, value] of Object.entries(result.value)) row[mapId] = cell(value);
      if (reportUnknown) {
        const extra = Object.keys(result.value).filter((k) => !known.has(k));
        if (extra.length) onEvent({ type: 'unknown-columns', leadId: id, mapIds: extra });
      }
      if (!csv.write(row)) await new Promise((resolve) => csv.once('drain', resolve));
      exported++;
    } else {
      missing.push({ lead_id: id, attempts: result.attempts, reason: reasonOf(result.error) });
      failures.push(result.error);
    }
    onEvent({ type: 'lead', done, total: ids.length, failed: missing.length });
  }
  csv.end();
  await finished(csv);
  return { ids: ids.length, exported, missing, missingExitCode: failures.length ? failedRecordsExitCode(failures) : 0 };
}

/** Values come in their natural JSON types; CSV wants text. Objects keep their JSON form. */
function cell(value: unknown): unknown {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return value;
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
