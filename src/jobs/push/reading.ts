import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { InputError } from '../../errors.js';
import type { CustomerGroup, RawCounts, RawCustomer } from '../../ingest/lms/groups.js';
import { type BatchInput, type StagedExport, stageExport } from '../../ingest/lms/inputs.js';
import { type RowMap, type SortFile, sortByCustomer } from '../../ingest/lms/line-sort.js';
import { streamBatchJson } from '../../ingest/lms/json.js';
import { formatFromName, type InputFormat } from '../../ingest/lms/rows.js';
import type { Staging } from '../../ingest/lms/staging.js';
import type { TempFolder } from '../../ingest/lms/temp-folder.js';
import { type RowsListener, streamGroups, streamTwoFiles } from '../../ingest/lms/stream.js';
import type { Mapping } from '../../ingest/mapping/mapping.js';
import { type InputSource, openInput } from '../../ingest/sources.js';
import {
  currentStamp,
  describeStamp,
  hashFile,
  type InputStamp,
  isRegularFile,
  sameStamp,
} from '../../ingest/stamp.js';
import type { IO } from '../../io/io.js';
import type { RunAccount } from './accounting.js';
import type { PushEvent } from './progress.js';
import { paymentLooksValid } from './quick-check.js';

/**
 * The two ways into a batch push: a file sorted by customer streams straight through; anything
 * else is staged first. Rows read and rows refused are counted in the run's account as they go.
 */

/** Thrown where a signal stops the reading: the run then counts what it has and ends. */
export class ReadingStopped extends Error {}

export interface ReadingContext {
  io: IO;
  mapping: Mapping;
  account: RunAccount;
  /** Aborted by the first signal: a read waiting on a pipe or a FIFO stops at once. */
  signal: AbortSignal;
  onEvent(event: PushEvent): void;
}

/** Inputs that can be read as they stream; `documents`: a batch-shape NDJSON file. */
export interface Streamable {
  inputs: BatchInput[];
  documents?: 'ndjson';
}

/**
 * One named CSV file with a row per payment, one --loans and one --payments file, or one named
 * batch-shape NDJSON file can stream (if sorted by customer: a file found unsorted is
 * sorted by its lines, CSV, or staged after all); anything else is staged.
 */
export function streamableInput(
  inputs: readonly BatchInput[],
  format: InputFormat | undefined,
  cwd: string,
): Streamable | undefined {
  if (inputs.some((i) => !regularFile(i.path, cwd))) return undefined;
  if (inputs.length === 1) {
    const input = inputs[0]!;
    const inputFormat = format ?? formatFromName(input.path);
    if (input.role !== 'auto') return undefined;
    if (inputFormat === 'csv') return { inputs: [input] };
    // A JSON document is staged: cut short (an export still being written), it is refused whole
    // rather than sent in part; an NDJSON file's broken last line is one rejected record.
    if (inputFormat === 'ndjson') return { inputs: [input], documents: inputFormat };
    return undefined;
  }
  if (inputs.length === 2 && inputs.some((i) => i.role === 'loans') && inputs.some((i) => i.role === 'payments'))
    return { inputs: [...inputs] };
  return undefined;
}

/** Standard input, a pipe or a FIFO is staged, never streamed nor hashed ahead. */
export function regularFile(path: string, cwd: string): boolean {
  return path !== '-' && isRegularFile(resolve(cwd, path));
}

/**
 * The customer groups of one CSV file, of a --loans and a --payments file read side by side, or of
 * a batch-shape file; the generator returns the rows it read. Throws NotSortedError when a file is
 * not sorted by customer. `unchanged` (a run that keeps the record of what was sent) is asked with
 * each customer's raw CSV rows or NDJSON line before they are converted (see stream.ts, json.ts).
 */
export async function streamedGroups(
  streamable: Streamable,
  ctx: ReadingContext,
  unchanged?: (raws: readonly RawCustomer[]) => (RawCounts | undefined)[],
): Promise<AsyncGenerator<CustomerGroup, number>> {
  const opened = await openAll(streamable.inputs, ctx);
  if (streamable.documents)
    return streamBatchJson(opened[0]!, streamable.documents, {
      mapping: ctx.mapping,
      src: 0,
      problems: ctx.account.readProblem,
      onRows: readingRows(ctx, opened[0]!.name),
      unchanged,
    });
  return groupsOf(streamable.inputs, opened, ctx, { unchanged });
}

/**
 * The same for files not sorted by customer: each is sorted first (line-sort.ts, in `folder`),
 * then read as a sorted one; `lines`: the lines sorted, headers aside. Undefined when a file cannot be sorted by its lines (the caller stages
 * the export instead); `stopped()` is asked as lines go by, and stops the sort.
 */
export async function sortedGroups(
  inputs: readonly BatchInput[],
  ctx: ReadingContext,
  folder: TempFolder,
  stopped: () => boolean,
  unchanged?: (raws: readonly RawCustomer[]) => (RawCounts | undefined)[],
): Promise<{ groups: AsyncGenerator<CustomerGroup, number>; lines: number } | undefined> {
  const opened = await openAll(inputs, ctx);
  const sorted: InputSource[] = [];
  const rows: RowMap[] = [];
  let lines = 0;
  for (const [i, input] of opened.entries()) {
    const role: SortFile['role'] = inputs[i]!.role === 'auto' ? 'rows' : (inputs[i]!.role as SortFile['role']);
    const file = await sortByCustomer(
      { input, role },
      {
        mapping: ctx.mapping,
        folder,
        outChars: role === 'loans' ? LOAN_CHUNK : undefined,
        onLines: (lines) => {
          // A signal while sorting: stop here; nothing is in flight yet, so there is nothing to wait for.
          if (stopped()) {
            ctx.account.inputFullyRead = false;
            throw new ReadingStopped();
          }
          ctx.onEvent({ type: 'reading', file: input.name, rows: lines });
        },
      },
    );
    if (file === undefined) {
      for (const other of opened) other.stream.destroy();
      for (const other of sorted) other.stream.destroy();
      return undefined;
    }
    sorted.push(file.input);
    rows.push(file.rows);
    lines += file.lines - 1;
  }
  // The first look reads the sorted lines as those of a sorted file: a customer's lines, in the file's order.
  return { groups: groupsOf(inputs, sorted, ctx, { rows, unchanged }), lines };
}

/**
 * Characters of the --loans file's text read at a time. A customer's loan rows are about a seventh
 * of the bytes of its payment rows, so a chunk of loans as large as one of payments (32K
 * characters) runs some 200 customers ahead of the payments read beside it: its rows, and the
 * first look's lines, are held that long, outlive two young collections and are promoted (a fifth
 * of all the collector promoted in a push of two files). Read in pieces of 8K, they die young.
 */
const LOAN_CHUNK = 8 * 1024;

async function openAll(inputs: readonly BatchInput[], ctx: ReadingContext): Promise<InputSource[]> {
  const opened: InputSource[] = [];
  try {
    for (const input of inputs) {
      const sliceBytes = input.role === 'loans' ? LOAN_CHUNK : undefined;
      opened.push(await openInput(input.path, ctx.io, { signal: ctx.signal, sliceBytes }));
      ctx.account.sources.push(opened[opened.length - 1]!.name);
    }
  } catch (err) {
    // The files opened before the one refused are closed, not left to the collector.
    for (const source of opened) source.stream.destroy();
    throw err;
  }
  return opened;
}

function groupsOf(
  inputs: readonly BatchInput[],
  opened: InputSource[],
  ctx: ReadingContext,
  extra: { unchanged?: (raws: readonly RawCustomer[]) => (RawCounts | undefined)[]; rows?: RowMap[] },
): AsyncGenerator<CustomerGroup, number> {
  const { account } = ctx;
  if (inputs.length === 1)
    return streamGroups(opened[0]!, {
      mapping: ctx.mapping,
      src: 0,
      problems: account.readProblem,
      onRows: readingRows(ctx, opened[0]!.name),
      unchanged: extra.unchanged,
      rows: extra.rows?.[0],
    });
  const loans = inputs.findIndex((i) => i.role === 'loans');
  const payments = inputs.findIndex((i) => i.role === 'payments');
  return streamTwoFiles({
    mapping: ctx.mapping,
    problems: account.readProblem,
    loans: { input: opened[loans]!, src: loans, rows: extra.rows?.[loans] },
    payments: { input: opened[payments]!, src: payments, rows: extra.rows?.[payments] },
    onRows: readingRows(ctx, opened[payments]!.name),
    unchanged: extra.unchanged,
  });
}

function readingRows(ctx: ReadingContext, file: string): RowsListener {
  return (rows, last) => {
    ctx.account.rowsRead = rows;
    // The last count is for the summary; progress was told as the rows went by.
    if (!last) ctx.onEvent({ type: 'reading', file, rows });
  };
}

/** Reads every input into `staging`; `stopped()` is asked as rows come, and stops the reading. */
export async function stageInputs(
  inputs: readonly BatchInput[],
  format: InputFormat | undefined,
  ctx: ReadingContext,
  staging: Staging,
  stopped: () => boolean,
): Promise<StagedExport> {
  const { account } = ctx;
  return stageExport({
    inputs,
    mapping: ctx.mapping,
    format,
    problems: account.readProblem,
    io: ctx.io,
    staging,
    precheckPayment: paymentLooksValid,
    signal: ctx.signal,
    onRows: (file, rows) => {
      // A signal while reading: stop here; nothing is in flight yet, so there is nothing to wait for.
      if (stopped()) {
        account.inputFullyRead = false;
        throw new ReadingStopped();
      }
      ctx.onEvent({ type: 'reading', file, rows });
    },
  });
}

/** Digest of the mapping and the files' bytes (not their names): the journal's key. */
export async function inputsDigest(
  inputs: readonly BatchInput[],
  ctx: Omit<ReadingContext, 'account'>,
): Promise<string> {
  const digest = createHash('sha256').update(`mapping:${JSON.stringify(ctx.mapping.spec)}\n`);
  for (const input of inputs) {
    const hash = createHash('sha256');
    try {
      await hashFile(resolve(ctx.io.cwd, input.path), hash);
    } catch (err) {
      // openInput says it better (no such file, a directory…).
      (await openInput(input.path, ctx.io)).stream.destroy();
      throw new InputError(`could not be read: ${(err as Error).message}`, { file: input.path });
    }
    const sha256 = hash.digest('hex');
    ctx.onEvent({ type: 'input', file: input.path, sha256 });
    digest.update(`${input.role}:${sha256}\n`);
  }
  return digest.digest('hex');
}

/** Files are keyed by their bytes; standard input (or a pipe, a FIFO) only by what was read from it. */
export async function stagedDigest(
  inputs: readonly BatchInput[],
  readDigest: string,
  ctx: Omit<ReadingContext, 'account'>,
): Promise<string> {
  if (inputs.some((i) => !regularFile(i.path, ctx.io.cwd))) return readDigest;
  return inputsDigest(inputs, ctx);
}

/** Size and modification time of each named input file as the run starts. */
export function stampInputs(inputs: readonly BatchInput[], cwd: string): Map<string, InputStamp> {
  const stamps = new Map<string, InputStamp>();
  for (const input of inputs) {
    const stamp = input.path === '-' ? undefined : currentStamp(resolve(cwd, input.path));
    if (stamp !== undefined) stamps.set(input.path, stamp);
  }
  return stamps;
}

/** An export still being written when cron starts the push is read half-way, and nothing else would tell. */
export function changedInputs(stamps: ReadonlyMap<string, InputStamp>, cwd: string): string[] {
  const notes: string[] = [];
  for (const [path, before] of stamps) {
    const after = currentStamp(resolve(cwd, path));
    if (sameStamp(before, after)) continue;
    notes.push(
      `${path} changed while it was read (${describeStamp(before)} at the start, ${after ? describeStamp(after) : 'gone'} at the end): it was probably still being written; rerun once the export is complete (upserts are safe to repeat)`,
    );
  }
  return notes;
}
