import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { BATCH_ANSWER, type ApiClient } from '../../api/client.js';
import type { IO, Signal } from '../../io/io.js';
import { noRecords } from '../../ingest/table/reader.js';
import {
  AuthError,
  environmentError,
  ExitCode,
  InputError,
  LeadctlError,
  PayloadTooLargeError,
  UsageError,
  ValidationError,
} from '../../errors.js';
import type { CustomerGroup } from '../../ingest/lms/groups.js';
import { stageExport, type BatchInput } from '../../ingest/lms/inputs.js';
import { formatFromName, type InputFormat, type RowProblem } from '../../ingest/lms/rows.js';
import { NotSortedError, streamGroups, streamTwoFiles } from '../../ingest/lms/stream.js';
import { IDENTITY_MAPPING, loadMapping, type Mapping } from '../../ingest/mapping/mapping.js';
import { openInput, type InputSource } from '../../ingest/sources.js';
import { hashFile } from '../../ingest/stamp.js';
import { Staging } from '../../ingest/lms/staging.js';
import { BatchResponseSchema } from '../../schema/loan-performance.js';
import { Chunker, customersBody, type Chunk } from './chunker.js';
import { paymentLooksValid } from './quick-check.js';
import { Journal, journalKey, type SkippedEntry } from './journal.js';
import { PushLock } from './lock.js';
import type { PushEvent } from './progress.js';
import { defaultRejectsName, RejectsWriter } from './rejects.js';
import { applySkips } from './service-skips.js';
import { stateDir } from '../../config/state-dir.js';
import { configDir } from '../../config/paths.js';
import { CustomerDelta, DEFAULT_MAX_AGE_DAYS, type DeltaMode } from '../delta/customers.js';
import { DeltaRecord, type CustomerDigest } from '../delta/record.js';
import { accountFor, outcomeOf, Tally, type PushSummary, type StopReason } from './summary.js';
import { validateGroup, type LevelCounts, type Reject, type ValidCustomer } from './validate.js';

/**
 * `customers batch`: check every record of the export, cut the valid customers into
 * deterministic chunks and send them with a few requests in flight, journaling each chunk the
 * service acknowledges. A single file sorted by customer streams straight through; anything else
 * (several files, any row order, JSON) is staged first. Stops cleanly on SIGINT/SIGTERM, on an
 * authentication failure or when the service stays unavailable: what was not acknowledged is
 * left for `--resume`.
 */

export const BATCH_PATH = '/api/v1/loan-performance/batches/customers';
/**
 * How long in-flight requests may take to finish after SIGINT/SIGTERM before they are cut off:
 * short, so that a signal ends a run within 2 s even while an answer hangs. A request cut off is
 * not acknowledged, and --resume sends it again (upserts are safe to repeat).
 */
export const DEFAULT_STOP_GRACE_MS = 1_000;

export interface BatchPushRequest {
  inputs: BatchInput[];
  mappingPath?: string;
  format?: InputFormat;
  rejectsPath?: string;
  chunkSize: number;
  maxBytes: number;
  concurrency: number;
  validateOnly: boolean;
  resume: boolean;
  /** `changed-only`: send only what differs from the record; `full`: send all and refresh the record. */
  delta?: DeltaMode;
  /** With `changed-only`: resend customers last sent longer ago than this. */
  maxAgeDays?: number;
}

/** Where a push goes: the journal and the lock are per profile, base URL and client. */
export interface PushTarget {
  profile: string;
  baseUrl: string;
  clientId?: string;
}

export interface PushEnvironment {
  io: IO;
  /** Profile name and base URL the run talks to (journal key, lock). */
  target(): Promise<PushTarget>;
  api(): Promise<ApiClient>;
  onEvent(event: PushEvent): void;
  /** A diagnostic line on stderr. */
  warn(line: string): void;
  stopGraceMs?: number;
}

export interface PushOutcome {
  summary: PushSummary;
  exitCode: number;
}

type Mode = 'streamed' | 'staged';

/** What became of the customers of one request (paths and indices relative to it). */
interface PostResult {
  /** Records the service skipped, in its per-record answer. */
  skipped: SkippedEntry[];
  /** Customers of a request the service refused as a whole. */
  refused: SkippedEntry[];
  /** Customers sent and answered 2xx without a per-record verdict. */
  unconfirmed: number[];
  refusal?: { status: number | null; reason: string };
}

class ReadingStopped extends Error {}

export function runBatchPush(request: BatchPushRequest, env: PushEnvironment): Promise<PushOutcome> {
  return new BatchRun(request, env).execute();
}

class BatchRun {
  private readonly io: IO;
  private readonly started: Date;
  private readonly startedMs = performance.now();
  private readonly sources: string[] = [];
  private readonly abort = new AbortController();
  /** Aborted by the first signal: a read waiting on a pipe or a FIFO stops at once. */
  private readonly reading = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly notes: string[] = [];
  private mapping: Mapping = IDENTITY_MAPPING;
  private tally = new Tally();
  private rejects: RejectsWriter;
  private stop: StopReason | undefined;
  private lock: PushLock | undefined;
  private journal: Journal | undefined;
  private target: PushTarget | undefined;
  private client: ApiClient | undefined;
  private staging: Staging | undefined;
  private delta: CustomerDelta | undefined;
  private retries = 0;
  /** Requests the service refused as too large (HTTP 413), each then sent in halves. */
  private splits = 0;
  private requests = { total: 0, sent: 0, acknowledgedBefore: 0, notSent: 0 };
  private doneCustomers = 0;
  private totalCustomers = 0;
  private rowsRead = 0;
  private inputFullyRead = true;
  private resumed = false;
  /** Size and modification time of each input file when the run started. */
  private inputStamps = new Map<string, string>();

  constructor(
    private readonly request: BatchPushRequest,
    private readonly env: PushEnvironment,
  ) {
    this.io = env.io;
    this.started = this.io.now();
    this.rejects = this.newRejectsWriter();
  }

  private newRejectsWriter(): RejectsWriter {
    return new RejectsWriter(
      this.request.rejectsPath ?? defaultRejectsName(this.started),
      this.io.cwd,
      this.sources,
      this.request.rejectsPath !== undefined,
      // A rejects file that cannot be written (a full disk) stops the run: what was sent is counted,
      // the rest is left for --resume, which writes the rejects again.
      { raw: this.io.csv?.raw, onFailure: (error) => this.failWith(error) },
    );
  }

  async execute(): Promise<PushOutcome> {
    const { request, env, io } = this;
    const dir = stateDir(io.env);
    let releaseSignals: (() => void) | undefined;
    try {
      this.mapping = request.mappingPath ? await loadMapping(request.mappingPath, io.cwd) : IDENTITY_MAPPING;
      for (const input of request.inputs) {
        const stamp = this.stampOf(input.path);
        if (stamp !== undefined) this.inputStamps.set(input.path, stamp);
      }
      if (!request.validateOnly) {
        this.target = await env.target();
        this.lock = PushLock.acquire(dir, this.target.profile, 'customers batch', this.started);
      }
      releaseSignals = io.onSignal((signal) => this.onSignal(signal));
      if (request.delta) this.delta = await this.openDelta(request.delta);
      if (!request.validateOnly) {
        this.client = await env.api();
        // Fail on bad credentials before reading a million rows, not after.
        await this.client.token();
      }

      const streamable = this.streamableInput();
      // The journal key needs a hash of the whole file; a check-only run opens no journal, so it skips that extra read.
      const digest = streamable && !request.validateOnly ? await this.fileDigest(streamable) : undefined;
      let mode: Mode = streamable ? 'streamed' : 'staged';
      if (digest !== undefined && !request.validateOnly) {
        const previous = this.openJournal(dir, digest, mode);
        if (previous === 'staged') mode = 'staged';
      }

      if (mode === 'streamed') {
        try {
          await this.pushStreamed(streamable!);
        } catch (err) {
          if (!(err instanceof NotSortedError)) throw err;
          await this.drain();
          // Two files are tried side by side on the chance that both are sorted: only a resend is worth a note.
          if (streamable!.length === 1 || this.requests.sent) {
            this.notes.push(
              `${err.file ?? streamable![0]!.path} is not sorted by customer (${err.message}); it was staged instead${this.requests.sent ? `, and the ${this.requests.sent} request(s) already sent were sent again (upserts are safe to repeat)` : ''}`,
            );
          }
          this.resetForStaging();
          mode = 'staged';
          if (!request.validateOnly) this.openJournal(dir, digest!, mode, true);
          await this.pushStaged(dir, digest);
        }
      } else {
        await this.pushStaged(dir, digest);
      }
      const complete = this.stop === undefined && !request.validateOnly;
      if (complete) this.journal!.markComplete(io.now());
      return this.summarize();
    } catch (err) {
      if (err instanceof ReadingStopped) return this.summarize();
      // Once a journal is open the operator must learn what was acknowledged, whatever went wrong;
      // bad input and bad flags are still reported as such (file, row and field).
      if (this.journal === undefined || err instanceof InputError || err instanceof UsageError) throw err;
      this.failWith(err);
      this.abort.abort(err);
      await this.drain();
      return this.summarize();
    } finally {
      this.abort.abort(new Error('the push ended'));
      releaseSignals?.();
      this.rejects.close();
      this.journal?.close();
      this.delta?.close();
      this.staging?.close();
      this.lock?.release();
    }
  }

  /** An unexpected error ends the run: it outranks a signal or an outage as the reason given. */
  private failWith(err: unknown): void {
    if (this.stop?.kind === 'failed') return;
    const error =
      err instanceof LeadctlError
        ? err
        : (environmentError(err) ??
          new LeadctlError('unexpected', ExitCode.UNEXPECTED, err instanceof Error ? err.message : String(err), {
            cause: err,
          }));
    this.stop = { kind: 'failed', error };
  }

  private onSignal(signal: Signal): void {
    if (this.stop?.kind === 'signal') {
      this.abort.abort(new Error(`stopped by a second ${signal}`));
      return;
    }
    this.stop ??= { kind: 'signal', signal };
    this.reading.abort(new ReadingStopped());
    this.env.onEvent({ type: 'stopping', reason: signal, inFlight: this.inFlight.size });
    const grace = this.env.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    setTimeout(() => this.abort.abort(new Error('the wait for requests in flight ran out')), grace).unref();
  }

  /**
   * The record of what this target acknowledged before. A check-only run reads it (to count what
   * would be sent) but never makes one.
   */
  private async openDelta(mode: DeltaMode): Promise<CustomerDelta> {
    const target = this.target ?? (await this.env.target());
    const record =
      DeltaRecord.open(stateDir(this.io.env), configDir(this.io.env), target, !this.request.validateOnly, (line) =>
        this.env.warn(line),
      ) ?? DeltaRecord.empty();
    return new CustomerDelta(record, { mode, maxAgeDays: this.request.maxAgeDays ?? DEFAULT_MAX_AGE_DAYS });
  }

  /** The run's name in the record, the same when it is resumed, and the moment it first began. */
  private beginDelta(): void {
    if (!this.delta) return;
    const header = this.journal?.header;
    if (!header) {
      this.delta.begin('check-only', this.started.getTime());
      return;
    }
    this.delta.begin(
      createHash('sha256').update(`${header.key}\n${header.created}`).digest('hex').slice(0, 16),
      Date.parse(header.created),
    );
  }

  /**
   * One named CSV file with a row per payment, or one --loans and one --payments file, can stream
   * (if sorted by customer: a file found unsorted is staged after all); anything else is staged.
   */
  private streamableInput(): BatchInput[] | undefined {
    const { inputs, format } = this.request;
    if (inputs.some((i) => !this.isRegularFile(i.path))) return undefined;
    if (inputs.length === 1)
      return inputs[0]!.role === 'auto' && (format ?? formatFromName(inputs[0]!.path)) === 'csv'
        ? [inputs[0]!]
        : undefined;
    if (inputs.length === 2 && inputs.some((i) => i.role === 'loans') && inputs.some((i) => i.role === 'payments'))
      return [...inputs];
    return undefined;
  }

  /** Digest of the mapping and the files' bytes (not their names): the journal's key. */
  private async fileDigest(inputs: BatchInput[]): Promise<string> {
    const digest = createHash('sha256').update(`mapping:${JSON.stringify(this.mapping.spec)}\n`);
    for (const input of inputs) {
      const hash = createHash('sha256');
      try {
        await hashFile(resolve(this.io.cwd, input.path), hash);
      } catch (err) {
        // openInput says it better (no such file, a directory…).
        await openInput(input.path, this.io);
        throw new InputError(`could not be read: ${(err as Error).message}`, { file: input.path });
      }
      const sha256 = hash.digest('hex');
      this.env.onEvent({ type: 'input', file: input.path, sha256 });
      digest.update(`${input.role}:${sha256}\n`);
    }
    return digest.digest('hex');
  }

  /** Opens (or, with --resume, continues) the journal; returns the mode an earlier run used. */
  private openJournal(dir: string, digest: string, mode: Mode, fresh = false): Mode | undefined {
    const { request } = this;
    const key = journalKey(digest, this.target!.profile, this.target!.baseUrl, this.target!.clientId);
    this.journal?.close();
    const opened = Journal.open(
      dir,
      {
        key,
        profile: this.target!.profile,
        base_url: this.target!.baseUrl,
        inputs: request.inputs.map((i) => `${i.role}:${i.path}`),
        settings: {
          maxCustomers: request.chunkSize,
          maxBytes: request.maxBytes,
          ...(request.delta
            ? {
                delta:
                  request.delta === 'full'
                    ? 'full'
                    : `changed-only, --max-age ${request.maxAgeDays ?? DEFAULT_MAX_AGE_DAYS}`,
              }
            : {}),
        },
        mode,
      },
      request.resume && !fresh,
      this.started,
      (line) => this.env.warn(line),
    );
    this.journal = opened.journal;
    if (fresh) return undefined;
    this.resumed = opened.resumed;
    if (request.resume && !opened.resumed)
      this.env.warn('nothing to resume for these inputs (no journal of an interrupted push); sending everything');
    if (opened.resumed)
      this.env.onEvent({ type: 'resuming', acknowledged: this.journal.acknowledged, journal: this.journal.path });
    return opened.resumed ? (this.journal.header.mode ?? 'staged') : undefined;
  }

  private resetForStaging(): void {
    this.rejects.close();
    this.rejects = this.newRejectsWriter();
    this.tally = new Tally();
    this.sources.length = 0;
    this.requests = { total: 0, sent: 0, acknowledgedBefore: 0, notSent: 0 };
    this.doneCustomers = 0;
    this.rowsRead = 0;
    this.inputFullyRead = true;
  }

  private readProblem = (p: RowProblem): void => {
    const key = `${p.level}s` as keyof LevelCounts;
    this.tally.read[key]++;
    this.tally.rejected[key]++;
    this.rejects.add({ ...p, customerId: p.customerId ?? '' });
  };

  // ---- the two ways in ----------------------------------------------------------------------

  private async pushStreamed(inputs: BatchInput[]): Promise<void> {
    if (inputs.length === 2) return this.pushTwoStreamed(inputs);
    const opened = await openInput(inputs[0]!.path, this.io, { signal: this.reading.signal });
    this.sources.push(opened.name);
    const groups = streamGroups(opened, {
      mapping: this.mapping,
      src: 0,
      problems: this.readProblem,
      onRows: (rows) => {
        this.rowsRead = rows;
        this.env.onEvent({ type: 'reading', file: opened.name, rows });
      },
    });
    this.totalCustomers = 0;
    let rows = 0;
    const counted = (async function* () {
      const result = yield* groups;
      rows = result;
    })();
    await this.pushGroups(counted, true);
    this.rowsRead = Math.max(this.rowsRead, rows);
    if (this.rowsRead === 0 && this.inputFullyRead && this.stop === undefined) throw noRecords([opened.name]);
  }

  /** A --loans and a --payments file, sorted by customer, read side by side. */
  private async pushTwoStreamed(inputs: BatchInput[]): Promise<void> {
    const opened: InputSource[] = [];
    for (const input of inputs) {
      opened.push(await openInput(input.path, this.io, { signal: this.reading.signal }));
      this.sources.push(opened[opened.length - 1]!.name);
    }
    const at = (role: BatchInput['role']) => inputs.findIndex((i) => i.role === role);
    const loans = at('loans');
    const payments = at('payments');
    const groups = streamTwoFiles({
      mapping: this.mapping,
      problems: this.readProblem,
      loans: { input: opened[loans]!, src: loans },
      payments: { input: opened[payments]!, src: payments },
      onRows: (rows) => {
        this.rowsRead = rows;
        this.env.onEvent({ type: 'reading', file: opened[payments]!.name, rows });
      },
    });
    this.totalCustomers = 0;
    let rows = 0;
    const counted = (async function* () {
      rows = yield* groups;
    })();
    await this.pushGroups(counted, true);
    this.rowsRead = Math.max(this.rowsRead, rows);
    if (this.rowsRead === 0 && this.inputFullyRead && this.stop === undefined) throw noRecords(this.sources);
  }

  private async pushStaged(dir: string, knownDigest: string | undefined): Promise<void> {
    const { request, io } = this;
    this.staging = new Staging(io.env.LEADCTL_TMPDIR || undefined, this.sources);
    const staged = await stageExport({
      inputs: request.inputs,
      mapping: this.mapping,
      format: request.format,
      problems: this.readProblem,
      io,
      staging: this.staging,
      precheckPayment: paymentLooksValid,
      signal: this.reading.signal,
      onRows: (file, rows) => {
        // A signal while reading: stop here; nothing is in flight yet, so there is nothing to wait for.
        if (this.stop !== undefined) {
          this.inputFullyRead = false;
          throw new ReadingStopped();
        }
        this.env.onEvent({ type: 'reading', file, rows });
      },
    });
    this.rowsRead = staged.rowsRead;
    if (staged.rowsRead === 0) throw noRecords(this.sources);
    this.env.onEvent({ type: 'staged', rows: staged.rowsRead, seconds: (performance.now() - this.startedMs) / 1000 });
    this.totalCustomers = this.staging.customerCount(staged.shape);
    if (!request.validateOnly && this.journal === undefined)
      this.openJournal(dir, knownDigest ?? (await this.stagedDigest(staged.digest)), 'staged');
    await this.pushGroups(staged.groups(), false);
  }

  /** Files are keyed by their bytes; standard input (or a pipe, a FIFO) only by what was read from it. */
  private async stagedDigest(readDigest: string): Promise<string> {
    if (this.request.inputs.some((i) => !this.isRegularFile(i.path))) return readDigest;
    return this.fileDigest(this.request.inputs);
  }

  // ---- check, chunk, send ----------------------------------------------------------------

  private async pushGroups(
    groups: Iterable<CustomerGroup> | AsyncIterable<CustomerGroup>,
    streaming: boolean,
  ): Promise<void> {
    const { request } = this;
    const chunker = new Chunker({ maxCustomers: request.chunkSize, maxBytes: request.maxBytes });
    this.beginDelta();
    const iterator =
      Symbol.asyncIterator in groups
        ? (groups as AsyncIterable<CustomerGroup>)[Symbol.asyncIterator]()
        : (groups as Iterable<CustomerGroup>)[Symbol.iterator]();
    let stoppedEarly = false;
    try {
      while (true) {
        if (this.stop !== undefined) {
          stoppedEarly = true;
          break;
        }
        let next: IteratorResult<CustomerGroup>;
        try {
          next = await iterator.next();
        } catch (err) {
          // A signal stopped the reading itself (it was waiting on a pipe, say): stop as above.
          if (!(err instanceof ReadingStopped)) throw err;
          this.inputFullyRead = false;
          stoppedEarly = true;
          break;
        }
        if (next.done) break;
        if (streaming) this.totalCustomers++;
        const result = validateGroup(next.value);
        Tally.add(this.tally.read, result.seen);
        Tally.add(this.tally.rejected, result.rejected);
        Tally.add(this.tally.duplicates, result.duplicates);
        this.writeRejects(result.rejects);
        if (!result.valid) continue;
        Tally.add(this.tally.valid, { customers: 1, loans: result.valid.loans, payments: result.valid.payments });
        if (this.delta) {
          const digest = this.delta.digestOf(result.valid.customerId, result.payload!);
          if (!this.delta.shouldSend(digest)) {
            Tally.add(this.tally.unchanged, {
              customers: 1,
              loans: result.valid.loans,
              payments: result.valid.payments,
            });
            this.doneCustomers++;
            continue;
          }
          result.valid.digest = digest;
        }
        const closed = chunker.add(result.valid);
        if (closed) await this.dispatch(closed);
      }
      if (!stoppedEarly) {
        const last = chunker.finish();
        if (last) await this.dispatch(last);
      }
      await this.drain();
    } catch (err) {
      await iterator.return?.();
      throw err;
    }
    if (!stoppedEarly) return;
    // What was read but not sent is accounted as not sent; a staged export is counted to the end.
    const unsent = chunker.finish();
    if (unsent) {
      this.requests.total++;
      this.pending(unsent);
    }
    if (streaming && this.stop?.kind === 'signal') {
      // Someone is waiting for the process to end: reading the rest just to count it can wait for --resume.
      this.inputFullyRead = false;
      await iterator.return?.();
      return;
    }
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const g = next.value;
      const counts: LevelCounts = {
        customers: 1,
        loans: g.loans.length,
        payments:
          g.loans.reduce((n, l) => n + l.payments.length, 0) + g.orphans.reduce((n, o) => n + o.payments.length, 0),
      };
      // Superseded records too: which of them is the duplicate is decided when the group is checked.
      for (const d of g.duplicates) counts[`${d.level}s`]++;
      Tally.add(this.tally.read, counts);
      Tally.add(this.tally.notSent, counts);
    }
  }

  private async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.race(this.inFlight);
  }

  private writeRejects(list: readonly Reject[]): void {
    for (const r of list) this.rejects.add(r);
  }

  private countChunk(chunk: Chunk): LevelCounts {
    return {
      customers: chunk.customers.length,
      loans: chunk.customers.reduce((n, c) => n + c.loans, 0),
      payments: chunk.customers.reduce((n, c) => n + c.payments, 0),
    };
  }

  /** Loans and payments of the customers at `indices` in the chunk. */
  private countCustomers(chunk: Chunk, indices: readonly number[]): LevelCounts {
    const counts = { customers: 0, loans: 0, payments: 0 };
    for (const i of indices) {
      const c = chunk.customers[i];
      if (!c) continue;
      counts.customers++;
      counts.loans += c.loans;
      counts.payments += c.payments;
    }
    return counts;
  }

  /**
   * Counts a chunk the service answered: what it skipped or refused is rejected, what it took
   * without a per-record verdict is unconfirmed, and only the rest is accepted.
   */
  private settle(
    chunk: Chunk,
    result: PostResult,
    outcome: 'accepted' | 'unconfirmed' | 'refused' | 'from-journal',
  ): void {
    const sent = this.countChunk(chunk);
    const traces = chunk.customers.map((c) => c.trace);
    const skips = applySkips(traces, result.skipped);
    const refusals = applySkips(traces, result.refused, 'refused');
    const unconfirmed = this.countCustomers(chunk, result.unconfirmed);
    this.writeRejects(skips.rejects);
    this.writeRejects(refusals.rejects);
    Tally.add(this.tally.sent, sent);
    Tally.add(this.tally.accepted, sent);
    for (const part of [skips.rejected, refusals.rejected]) {
      Tally.add(this.tally.accepted, part, -1);
      Tally.add(this.tally.rejected, part);
    }
    Tally.add(this.tally.accepted, unconfirmed, -1);
    Tally.add(this.tally.unconfirmed, unconfirmed);
    this.rememberDelta(chunk, result, outcome === 'refused');
    this.doneCustomers += sent.customers;
    this.env.onEvent({
      type: 'request',
      index: chunk.index,
      outcome,
      ...sent,
      skipped: result.skipped.length,
      unconfirmed: unconfirmed.customers,
      ...(result.refusal ? { refusal: result.refusal } : {}),
      doneCustomers: this.doneCustomers,
      totalCustomers: this.totalCustomers,
      requestsDone: this.requests.sent + this.requests.acknowledgedBefore,
    });
  }

  /**
   * The record learns what the service acknowledged (a 2xx, with or without a per-record verdict)
   * and forgets customers it skipped in part or refused, so that those are sent again next time.
   */
  private rememberDelta(chunk: Chunk, result: PostResult, refused: boolean): void {
    if (!this.delta) return;
    const rejected = new Set<number>();
    for (const entry of [...result.skipped, ...result.refused]) {
      const m = /^customers\.(\d+)/.exec(entry.path);
      if (m) rejected.add(Number(m[1]));
    }
    const remember: CustomerDigest[] = [];
    const forget: CustomerDigest[] = [];
    chunk.customers.forEach((c, i) => {
      if (c.digest) (refused || rejected.has(i) ? forget : remember).push(c.digest);
    });
    this.keep(() => this.delta!.settle(remember, forget, this.io.now().getTime()));
  }

  /**
   * Book-keeping of an answer (journal, record) that fails (a full disk) stops the run, but the
   * answer is still counted: the service has those customers whatever the disk says.
   */
  private keep(write: () => void): void {
    try {
      write();
    } catch (err) {
      this.failWith(err);
    }
  }

  private pending(chunk: Chunk): void {
    this.requests.notSent++;
    Tally.add(this.tally.notSent, this.countChunk(chunk));
  }

  private ackEntry(chunk: Chunk, skipped: SkippedEntry[], unconfirmed: number[] = []) {
    return {
      chunk: chunk.index,
      first: chunk.customers[0]!.customerId,
      last: chunk.customers[chunk.customers.length - 1]!.customerId,
      customers: chunk.customers.length,
      skipped,
      ...(unconfirmed.length ? { unconfirmed } : {}),
      at: this.io.now().toISOString(),
    };
  }

  private async dispatch(chunk: Chunk): Promise<void> {
    const { request } = this;
    this.requests.total++;
    if (request.validateOnly) {
      const sent = this.countChunk(chunk);
      this.doneCustomers += sent.customers;
      this.env.onEvent({
        type: 'request',
        index: chunk.index,
        outcome: 'would-send',
        ...sent,
        skipped: 0,
        unconfirmed: 0,
        doneCustomers: this.doneCustomers,
        totalCustomers: this.totalCustomers,
        requestsDone: this.requests.total,
      });
      chunk.release();
      return;
    }
    const ack = this.journal!.ack(chunk.index);
    if (ack) {
      const entry = this.ackEntry(chunk, []);
      if (ack.first !== entry.first || ack.last !== entry.last || ack.customers !== entry.customers) {
        throw new LeadctlError(
          'journal_mismatch',
          ExitCode.UNEXPECTED,
          `the journal ${this.journal!.path} does not match request ${chunk.index + 1} of these inputs`,
          {
            hint: 'rerun without --resume to send everything again (upserts are safe to repeat)',
          },
        );
      }
      this.requests.acknowledgedBefore++;
      this.settle(chunk, { skipped: ack.skipped, refused: [], unconfirmed: ack.unconfirmed ?? [] }, 'from-journal');
      return;
    }
    while (this.inFlight.size >= request.concurrency && this.stop === undefined) await Promise.race(this.inFlight);
    if (this.stop !== undefined) {
      this.pending(chunk);
      return;
    }
    const task: Promise<void> = this.send(chunk)
      .catch((err) => this.failWith(err))
      .finally(() => {
        this.inFlight.delete(task);
        chunk.release();
      });
    this.inFlight.add(task);
  }

  private async send(chunk: Chunk): Promise<void> {
    try {
      const result = await this.post(chunk.customers);
      if (result.refused.length === 0) {
        this.keep(() => this.journal!.record(this.ackEntry(chunk, result.skipped, result.unconfirmed)));
        this.settle(chunk, result, result.unconfirmed.length ? 'unconfirmed' : 'accepted');
      } else {
        // Not an acknowledgement: --resume sends a refused request again (upserts are safe to repeat).
        this.keep(() =>
          this.journal!.refused({
            chunk: chunk.index,
            status: result.refusal?.status ?? null,
            reason: result.refusal?.reason ?? '',
            at: this.io.now().toISOString(),
          }),
        );
        this.settle(chunk, result, 'refused');
      }
    } catch (err) {
      this.pending(chunk);
      if (this.abort.signal.aborted) return;
      if (err instanceof AuthError) this.stop ??= { kind: 'auth', error: err };
      else if (err instanceof LeadctlError && err.exitCode === ExitCode.SERVICE)
        this.stop ??= { kind: 'service', error: err };
      else throw err;
    }
  }

  /**
   * Posts one request of customers and says what became of each, paths and indices relative to
   * `customers`. A 413 means the request, not its records, was at fault: it is halved and both
   * halves sent, down to a single customer, which is then refused as too large. Any other refusal
   * of the whole request (400, 409, 422: nothing stored) refuses each of its customers with the
   * reason. A 2xx in the sandbox's documented shape gives a verdict per record; any other
   * well-formed 2xx (`{}`, `{"data": {}}`, 204) leaves every customer unconfirmed. A 2xx that is
   * not a well-formed answer (an HTML page, an empty or cut-off body, JSON of another shape) is
   * no acknowledgement at all: the client retries it like a 5xx, then fails (exit 5), so the
   * chunk is neither journaled nor remembered.
   */
  private async post(customers: readonly ValidCustomer[]): Promise<PostResult> {
    const body = customersBody(customers);
    try {
      const res = await this.client!.send({
        method: 'POST',
        path: BATCH_PATH,
        body: () =>
          (async function* () {
            yield body;
          })(),
        auth: 'bearer',
        repeat: 'safe',
        answer: BATCH_ANSWER,
        signal: this.abort.signal,
      });
      this.retries += res.attempts - 1;
      this.requests.sent++;
      const parsed = BatchResponseSchema.safeParse(res.body);
      if (parsed.success)
        return {
          skipped: parsed.data.data.skipped.map((s) => ({ path: s.path, id: s.id, errors: s.errors })),
          refused: [],
          unconfirmed: [],
        };
      return { skipped: [], refused: [], unconfirmed: customers.map((_, i) => i) };
    } catch (err) {
      this.retries += attemptsOf(err) - 1;
      if (err instanceof PayloadTooLargeError && customers.length > 1) {
        const half = Math.ceil(customers.length / 2);
        this.splits++;
        const first = await this.post(customers.slice(0, half));
        const second = await this.post(customers.slice(half));
        const shift = (list: SkippedEntry[]) => list.map((s) => ({ ...s, path: shiftCustomerPath(s.path, half) }));
        return {
          skipped: [...first.skipped, ...shift(second.skipped)],
          refused: [...first.refused, ...shift(second.refused)],
          unconfirmed: [...first.unconfirmed, ...second.unconfirmed.map((i) => i + half)],
          refusal: first.refusal ?? second.refusal,
        };
      }
      if (err instanceof ValidationError) {
        this.requests.sent++;
        const refusal = { status: err.http?.status ?? null, reason: err.message };
        const reason = `refused by the service with the whole request${refusal.status ? ` (HTTP ${refusal.status})` : ''}: ${err.message}`;
        return {
          skipped: [],
          refused: customers.map((c, i) => ({ path: `customers.${i}`, id: c.customerId, errors: [reason] })),
          unconfirmed: [],
          refusal,
        };
      }
      throw err;
    }
  }

  // ---- summary ------------------------------------------------------------------------------

  /**
   * Standard input, a pipe or a FIFO can be read only once (and opening a FIFO to hash it would
   * wait for a writer): they are staged, never streamed. A missing file counts as regular here, so
   * that reading it says what is wrong.
   */
  private isRegularFile(path: string): boolean {
    if (path === '-') return false;
    try {
      return statSync(resolve(this.io.cwd, path)).isFile();
    } catch {
      return true;
    }
  }

  private stampOf(path: string): string | undefined {
    if (path === '-') return undefined;
    try {
      const st = statSync(resolve(this.io.cwd, path));
      return `${st.size} bytes, modified ${st.mtime.toISOString()}`;
    } catch {
      return undefined;
    }
  }

  /** An export still being written when cron starts the push is read half-way, and nothing else would tell. */
  private noteChangedInputs(): void {
    for (const [path, before] of this.inputStamps) {
      const after = this.stampOf(path);
      if (after === before) continue;
      const note = `${path} changed while it was read (${before} at the start, ${after ?? 'gone'} at the end): it was probably still being written; rerun once the export is complete (upserts are safe to repeat)`;
      this.notes.push(note);
      this.env.warn(`Warning: ${note}`);
    }
  }

  private summarize(): PushOutcome {
    // Closed first: a rejects file that cannot be completed is the run's failure too.
    this.rejects.close();
    const { request, tally, stop } = this;
    this.noteChangedInputs();
    const { status, exitCode, error } = outcomeOf(stop, request.validateOnly, this.rejects.count > 0);
    const notes = [...this.notes];
    if (this.splits)
      notes.push(
        `the service refused ${this.splits} request(s) as too large (HTTP 413); each was split and sent in halves (lower --max-bytes to avoid this)`,
      );
    if (!this.inputFullyRead) notes.push('the rest of the export was not read: rerun with --resume to continue');
    if (this.rejects.failure)
      notes.push(
        `the rejects file ${this.rejects.path} could not be written and was removed: its ${this.rejects.count} line(s) are counted here and written again by the rerun`,
      );
    const elapsed = (performance.now() - this.startedMs) / 1000;
    const summary = accountFor({
      command: 'customers batch',
      status,
      validate_only: request.validateOnly,
      resumed: this.resumed,
      rows_read: this.rowsRead,
      customers: tally.level('customers'),
      loans: tally.level('loans'),
      payments: tally.level('payments'),
      duplicates: tally.duplicates.customers + tally.duplicates.loans + tally.duplicates.payments,
      requests: {
        total: this.requests.total,
        sent: this.requests.sent,
        acknowledged_before: this.requests.acknowledgedBefore,
        not_sent: this.requests.notSent,
      },
      retries: this.retries,
      elapsed_seconds: Math.round(elapsed * 10) / 10,
      rows_per_second: elapsed > 0 ? Math.round(this.rowsRead / elapsed) : 0,
      rejects_file: this.rejects.created ? this.rejects.path : null,
      rejects: this.rejects.count,
      reasons: this.rejects.reasons(),
      journal: this.journal?.path ?? null,
      exit_code: exitCode,
      ...(request.delta
        ? {
            delta: {
              mode: request.delta,
              max_age_days: request.maxAgeDays ?? DEFAULT_MAX_AGE_DAYS,
              record: this.delta?.record.path ?? null,
            },
          }
        : {}),
      ...(error ? { error } : {}),
      ...(notes.length ? { notes } : {}),
    });
    return { summary, exitCode: summary.exit_code };
  }
}

/** `customers.3.loans.0` → `customers.(3 + by).loans.0`, for skips reported by the second half of a split request. */
export function shiftCustomerPath(path: string, by: number): string {
  return path.replace(/^customers\.(\d+)/, (_, n: string) => `customers.${Number(n) + by}`);
}

/** Attempts a failed request made, as the API client's error reports them (1 when it does not say). */
function attemptsOf(err: unknown): number {
  const attempts = err instanceof LeadctlError ? err.http?.attempts : undefined;
  return attempts !== undefined && attempts >= 1 ? attempts : 1;
}
