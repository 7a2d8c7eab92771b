import { resolve } from 'node:path';
import type { ApiClient } from '../api/client.js';
import type { IO } from '../io/io.js';
import { ExitCode, LeadctlError, quoteValue, UsageError, ValidationError } from '../errors.js';
import { createDistinctSet, digitsToNumber, isNumericDistinctSet } from '../ingest/lists/dedupe.js';
import { isRowProblem } from '../ingest/lists/cells.js';
import { headerMatcher, LIST_VALUE_KINDS, listCellProblem, normaliserFor } from '../ingest/lists/normalise.js';
import { openListReader, type ListFileFormat } from '../ingest/lists/reader.js';
import { openInput } from '../ingest/sources.js';
import { maskLongNumbers, maskSsn } from '../io/mask.js';
import { count } from '../output/words.js';
import { validateListItem } from '../schema/list-items.js';
import { didYouMean } from '../suggest.js';
import {
  LIST_TYPE_ALIASES,
  LIST_TYPES,
  MAX_LIST_NAME_LENGTH,
  resolveListType,
  type ListType,
} from '../schema/list-types.js';
import type { List } from '../schema/lists.js';
import { CollectedValues } from './list-body.js';
import type { ListChanges } from './list-diff.js';
import { ListRejectsWriter, type ListProblem } from './list-rejects.js';

/** How many problems are kept for display; the rejects file gets all of them. */
export const SHOWN_PROBLEMS = 20;
const PROGRESS_EVERY_ROWS = 100_000;

export type ListApi = Pick<ApiClient, 'createList' | 'updateList'>;

export interface ListUploadOptions {
  /** A path, or `-` for standard input. */
  input: string;
  name: string;
  type: ListType;
  /** Set for `lists update`: the items of that list are replaced. */
  listId?: number;
  column?: string;
  header?: boolean;
  skipInvalid?: boolean;
  validateOnly?: boolean;
  rejectsPath?: string;
}

export type ListUploadEvent =
  | { type: 'reading'; file: string; format: ListFileFormat; column?: string; headerRow?: number }
  /** Plain lines gave way to CSV at this row (it has a quoted value or a delimiter). */
  | { type: 'csv-from'; file: string; row: number; delimiter?: string }
  | { type: 'rows'; rows: number }
  | { type: 'uploading'; items: number };

export interface ListUploadDeps {
  io: Pick<IO, 'stdin' | 'cwd' | 'now' | 'input' | 'csv'>;
  /** The client, asked for only when something is to be sent. */
  api?: () => Promise<ListApi>;
  onEvent?: (event: ListUploadEvent) => void;
  /**
   * Asked once the file is read and checked, before anything is sent (a confirmation); throws to
   * stop. May return what the upload changes, which the summary then carries.
   */
  beforeUpload?: (values: number, collected: CollectedValues) => Promise<ListChanges | void>;
  signal?: AbortSignal;
}

export interface ListUploadSummary {
  list_id: number | null;
  name: string;
  type: ListType;
  file: string;
  /** How the file was read in the end; `csv_from_row` says where plain lines gave way to CSV. */
  format: ListFileFormat;
  csv_from_row: number | null;
  /** The value column: its number and header name, e.g. `2 (ssn)`. */
  column: string | null;
  header_row: number | null;
  /** Rows after the header, blank ones included. */
  rows_read: number;
  blank: number;
  valid: number;
  /** Valid values that normalisation changed (delimiters, case, ZIP+4...). */
  normalised: number;
  duplicates: number;
  rejected: number;
  distinct: number;
  uploaded: number;
  validate_only: boolean;
  rejects_file: string | null;
  elapsed_seconds: number;
  /** What the upload changed against the values last uploaded from here (null: no record of them). */
  changes?: ListChanges | null;
  /** rows_read = blank + valid + rejected, checked on every run. */
  accounting?: { balanced: boolean; rows_read: number; accounted_for: number };
}

/**
 * - `uploaded` / `validated`: done (some rows may have been skipped with --skip-invalid);
 * - `invalid`: problems found and --skip-invalid not given: nothing was sent;
 * - `empty`: no valid value at all: nothing was sent;
 * - `refused`: the service answered 422; `problems` are its messages mapped to input rows.
 */
export type ListUploadOutcome = 'uploaded' | 'validated' | 'invalid' | 'empty' | 'refused';

export interface ListUploadResult {
  outcome: ListUploadOutcome;
  summary: ListUploadSummary;
  list?: List;
  /** The first SHOWN_PROBLEMS problems (values masked where personal). */
  problems: ListProblem[];
  problemCount: number;
  /** Every problem grouped by its reason: how many, and the first as an example; most frequent first. */
  reasons: ProblemReason[];
  /** The service's own message on `refused`. */
  serviceMessage?: string;
  /** The distinct valid values read (to compare or remember them). */
  values: CollectedValues;
  /** The rejects file could not be completed after the upload (a full disk): the run reports it, exit 2. */
  rejectsFailure?: LeadctlError;
}

export interface ProblemReason {
  reason: string;
  count: number;
  example: ListProblem;
}

/** Checks done before the file is opened: a name the service accepts. */
export function checkListName(name: string | undefined): string {
  if (name === undefined || name.trim() === '') throw new UsageError('--name is required and must not be blank');
  if (name.length > MAX_LIST_NAME_LENGTH) {
    throw new UsageError(
      `--name is ${name.length} characters long; the service allows at most ${MAX_LIST_NAME_LENGTH}`,
    );
  }
  return name;
}

/** An alias (ssn, zip...) or the exact service name, else a UsageError listing both. */
export function checkListType(input: string | undefined): ListType {
  if (input === undefined || input.trim() === '') throw new UsageError('--type is required');
  const type = resolveListType(input);
  if (!type) {
    throw new UsageError(
      `unknown list type "${input}"${didYouMean(input, [...Object.keys(LIST_TYPE_ALIASES), ...LIST_TYPES])}`,
      {
        hint: `use one of: ssn, ssn4, zip, phone, email, routing, employer, affiliate, or the service's names: ${LIST_TYPES.join(', ')}`,
      },
    );
  }
  return type;
}

/**
 * Reads a list file, normalises and validates every row with the service's own rules,
 * drops duplicates, writes the rejects file, and (unless told otherwise) uploads the
 * distinct valid values as one streamed request. Memory: the distinct values only.
 */
export async function runListUpload(options: ListUploadOptions, deps: ListUploadDeps): Promise<ListUploadResult> {
  const started = deps.io.now().getTime();
  const type = options.type;
  const kind = LIST_VALUE_KINDS[type];
  const normalise = normaliserFor(type);
  const name = checkListName(options.name);

  if (
    options.rejectsPath !== undefined &&
    options.input !== '-' &&
    resolve(deps.io.cwd, options.rejectsPath) === resolve(deps.io.cwd, options.input)
  ) {
    // Opening the rejects file would empty the input before it is read.
    throw new UsageError(`--rejects ${options.rejectsPath} is the input file itself; name another file`);
  }
  const source = await openInput(options.input, deps.io, { signal: deps.signal });
  let rejects: ListRejectsWriter | undefined;
  try {
    rejects = options.rejectsPath
      ? await ListRejectsWriter.open(options.rejectsPath, deps.io.cwd, source.name, { raw: deps.io.csv?.raw })
      : undefined;
  } catch (err) {
    source.stream.destroy();
    throw err;
  }
  try {
    const reader = await openListReader(source, {
      column: options.column,
      delimiter: deps.io.input?.delimiter,
      header: options.header,
      headerMatches: headerMatcher(type),
      looksLikeValue: (cell) => validateListItem(type, normalise(cell)) === null,
    });
    if (reader.format === 'json' && options.column !== undefined) {
      throw new UsageError(`--column does not apply to ${source.name}: it is a JSON array of values, not a table`);
    }
    const columnLabel = reader.column
      ? `${reader.column.index + 1}${reader.column.name ? ` (${reader.column.name})` : ''}`
      : null;
    deps.onEvent?.({
      type: 'reading',
      file: source.name,
      format: reader.format,
      column: columnLabel ?? undefined,
      headerRow: reader.headerRow,
    });

    // A full SSN typed into a last-four list is personal data too.
    const masks = kind === 'ssn' || kind === 'ssn4';
    const shown: ListProblem[] = [];
    let problemCount = 0;
    // Reasons are fixed phrases (the value is beside them): a map of a few entries, however many rows.
    let reasons = new Map<string, ProblemReason>();
    const display = (raw: string) => (masks ? maskSsn(raw) : raw);
    // Synchronous unless the rejects file asks to wait (a million bad rows must not cost a million
    // awaits); the problem is only built when it will be shown or written.
    const report = (row: number | undefined, raw: string, reason: string): Promise<void> | undefined => {
      problemCount++;
      const group = reasons.get(reason);
      if (group) group.count++;
      if (group && shown.length >= SHOWN_PROBLEMS && !rejects) return undefined;
      const problem: ListProblem = { ...(row === undefined ? {} : { row }), value: display(raw), reason };
      // Shown values are cut (a value of a few KB once held the report table for minutes); the
      // rejects file keeps the whole of each.
      const short = problem.value.length > SHORT_VALUE ? { ...problem, value: shortValue(problem.value) } : problem;
      if (!group) reasons.set(reason, { reason, count: 1, example: short });
      if (shown.length >= SHOWN_PROBLEMS && !rejects) return undefined;
      if (shown.length < SHOWN_PROBLEMS) shown.push(short);
      return rejects?.write(problem);
    };

    // About ten bytes a row in the usual one-column file: a guess that only sizes the first hash table.
    const distinct = createDistinctSet(kind, source.bytes === undefined ? undefined : source.bytes / 10);
    const numeric = isNumericDistinctSet(distinct) ? distinct : undefined;
    const collected = new CollectedValues(kind);
    let wait: Promise<void> | undefined;
    let rows = 0;
    let blank = 0;
    let valid = 0;
    let normalised = 0;
    let duplicates = 0;
    let nextProgress = PROGRESS_EVERY_ROWS;

    let csvAnnounced = false;
    for await (const batch of reader.batches()) {
      if (deps.signal?.aborted) throw abortReason(deps.signal);
      if (reader.csvFromRow !== undefined && !csvAnnounced) {
        csvAnnounced = true;
        deps.onEvent?.({ type: 'csv-from', file: source.name, row: reader.csvFromRow, delimiter: reader.delimiter });
      }
      const cells = batch.cells;
      for (let i = 0; i < cells.length; i++) {
        const cell = cells[i]!;
        const row = batch.firstRow + i;
        if (isRowProblem(cell)) {
          if ((wait = report(row, masks ? cell.raw : maskLongNumbers(cell.raw), cell.problem))) await wait;
          continue;
        }
        const value = normalise(cell);
        if (value === '' && cell.trim() === '') {
          blank++;
          continue;
        }
        const reason = listCellProblem(type, cell, value);
        if (reason !== null) {
          if ((wait = report(row, cell, reason))) await wait;
          continue;
        }
        valid++;
        if (value !== cell) normalised++;
        if (numeric) {
          const n = digitsToNumber(value);
          if (numeric.addNumber(n)) collected.pushNumber(n, row);
          else duplicates++;
        } else if (distinct.add(value)) {
          collected.push(value, row);
        } else {
          duplicates++;
        }
      }
      rows += cells.length;
      if (rows >= nextProgress) {
        deps.onEvent?.({ type: 'rows', rows });
        nextProgress = rows + PROGRESS_EVERY_ROWS;
      }
    }

    // A rejects file the disk could not hold fails the run here, before anything is sent.
    rejects?.flush();
    if (rejects?.failure) throw rejects.failure;

    const summary: ListUploadSummary = {
      list_id: options.listId ?? null,
      name,
      type,
      file: source.name,
      format: reader.format,
      csv_from_row: reader.csvFromRow ?? null,
      column: columnLabel,
      header_row: reader.headerRow ?? null,
      rows_read: rows,
      blank,
      valid,
      normalised,
      duplicates,
      rejected: problemCount,
      distinct: collected.length,
      uploaded: 0,
      validate_only: options.validateOnly === true,
      rejects_file: rejects?.path ?? null,
      elapsed_seconds: 0,
    };
    const finish = (outcome: ListUploadOutcome, extra: Partial<ListUploadResult> = {}): ListUploadResult => {
      summary.elapsed_seconds = Math.round(deps.io.now().getTime() - started) / 1000;
      // Every row read ends blank, valid or rejected; a service refusal adds its rejects on top of ours.
      const accounted = summary.blank + summary.valid + summary.rejected;
      summary.accounting = {
        balanced: outcome === 'refused' ? summary.rows_read <= accounted : summary.rows_read === accounted,
        rows_read: summary.rows_read,
        accounted_for: accounted,
      };
      if (!summary.accounting.balanced) {
        throw new LeadctlError(
          'internal',
          ExitCode.UNEXPECTED,
          `${summary.file}: the counts do not add up (${count(summary.rows_read, 'row')} read, ${accounted} accounted for): a bug in leadctl; nothing was lost on the service's side, but report it`,
        );
      }
      const byCount = [...reasons.values()].sort((x, y) => y.count - x.count);
      rejects?.finish();
      if (rejects?.failure) summary.rejects_file = null;
      return {
        outcome,
        summary,
        problems: shown,
        problemCount,
        reasons: byCount,
        values: collected,
        ...extra,
        ...(rejects?.failure ? { rejectsFailure: rejects.failure } : {}),
      };
    };

    if (problemCount > 0 && !options.skipInvalid) return finish('invalid');
    if (collected.length === 0) return finish('empty');
    if (options.validateOnly) return finish('validated');
    if (!deps.api) throw new Error('runListUpload needs an API client to upload');

    const api = await deps.api();
    const changes = await deps.beforeUpload?.(collected.length, collected);
    if (options.listId !== undefined) summary.changes = changes ?? null;
    deps.onEvent?.({ type: 'uploading', items: collected.length });
    const body = () => collected.jsonBody(name, type);
    let list: List;
    try {
      list =
        options.listId === undefined
          ? await api.createList(body, { signal: deps.signal })
          : await api.updateList(options.listId, body, { signal: deps.signal });
    } catch (err) {
      if (deps.signal?.aborted) throw abortReason(deps.signal);
      if (!(err instanceof ValidationError)) throw err;
      const refused = serviceProblems(err.fieldErrors, collected);
      // A refusal found nothing of ours to blame: keep the service's own words.
      if (refused.length === 0) refused.push({ value: '', reason: err.message });
      shown.length = 0;
      problemCount = 0;
      reasons = new Map();
      for (const problem of refused) await report(problem.row, problem.value, problem.reason);
      summary.rejected += problemCount;
      return finish('refused', { serviceMessage: messageOf(err) });
    }
    summary.list_id = list.id;
    summary.uploaded = collected.length;
    return finish('uploaded', { list });
  } finally {
    // Refused part-way (a row past the limit, a bad header), the reader stops without finishing the
    // input: its file must be closed now, not when the collector finds it (Node then warns on stderr,
    // after the JSON error document).
    source.stream.destroy();
    await rejects?.close();
  }
}

/** Values longer than this are shown cut, with their length. */
const SHORT_VALUE = 60;

function shortValue(value: string): string {
  return quoteValue(value, { max: SHORT_VALUE, quotes: false });
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

function messageOf(err: ValidationError): string | undefined {
  const body = err.http?.body as { message?: unknown } | undefined;
  return typeof body?.message === 'string' ? body.message : undefined;
}

const ROW_MESSAGE = /^\s*(?:row|item)\s+#?(\d+)\s*[:.,-]?\s*(.*)$/i;
const ITEM_KEY = /^list\.(\d+)$/;

/**
 * The service's 422 `errors` mapped back to the input: `list` messages name the row of the
 * uploaded list (1-based, "Row 3: …"); Laravel-style `list.2` keys name a 0-based index.
 * Either way the item's source row and value (unmasked: the caller masks) come from what was uploaded.
 */
export function serviceProblems(
  fieldErrors: Record<string, string[]>,
  collected: Pick<CollectedValues, 'rowAt' | 'valueAt'>,
): ListProblem[] {
  const problems: ListProblem[] = [];
  const item = (index: number, reason: string) => {
    const row = collected.rowAt(index);
    const value = collected.valueAt(index);
    if (row === undefined || value === undefined)
      problems.push({ value: '', reason: `item ${index + 1} of the upload: ${reason}` });
    else problems.push({ row, value, reason: `refused by the service: ${reason}` });
  };
  for (const [key, messages] of Object.entries(fieldErrors)) {
    const keyed = ITEM_KEY.exec(key);
    for (const message of messages) {
      if (keyed) {
        item(Number(keyed[1]), message);
        continue;
      }
      const numbered = key === 'list' ? ROW_MESSAGE.exec(message) : null;
      if (numbered) item(Number(numbered[1]) - 1, numbered[2] || message);
      else problems.push({ value: '', reason: key && key !== 'list' ? `${key}: ${message}` : message });
    }
  }
  return problems;
}
