import { stateDir } from '../../config/state-dir.js';
import { InputError, UsageError } from '../../errors.js';
import type { CustomerGroup } from '../../ingest/lms/groups.js';
import type { BatchInput } from '../../ingest/lms/inputs.js';
import type { InputFormat } from '../../ingest/lms/rows.js';
import { Staging } from '../../ingest/lms/staging.js';
import { TempFolder } from '../../ingest/lms/temp-folder.js';
import { NotSortedError } from '../../ingest/lms/stream.js';
import { IDENTITY_MAPPING, loadMapping, type Mapping, withDelimiter } from '../../ingest/mapping/mapping.js';
import type { InputStamp } from '../../ingest/stamp.js';
import { noRecords } from '../../ingest/table/reader.js';
import type { IO } from '../../io/io.js';
import { type CustomerDelta, DEFAULT_MAX_AGE_DAYS, type DeltaMode } from '../delta/customers.js';
import { RunAccount, type SettledOutcome } from './accounting.js';
import type { Chunk } from './chunker.js';
import type { Journal } from './journal.js';
import type { PushEnvironment, PushOutcome, PushTarget } from './environment.js';
import { PushLock } from './lock.js';
import { checkAndChunk } from './pass.js';
import {
  changedInputs,
  inputsDigest,
  type ReadingContext,
  ReadingStopped,
  stagedDigest,
  stageInputs,
  stampInputs,
  type Streamable,
  streamableInput,
  sortedGroups,
  streamedGroups,
} from './reading.js';
import { defaultRejectsName, RejectsWriter } from './rejects.js';
import { ChunkSender, type PostResult } from './sender.js';
import { beginRunDelta, deltaVerdicts, openRunDelta } from './run-delta.js';
import { ackEntry, earlierAck, type Mode, openRunJournal } from './run-journal.js';
import { RunStop } from './stopping.js';

/**
 * `customers batch`: check every record of the export, cut the valid customers into
 * deterministic chunks and send them with a few requests in flight, journaling each chunk the
 * service acknowledges. A single file sorted by customer streams straight through; anything else
 * (several files, any row order, JSON) is staged first. Stops cleanly on SIGINT/SIGTERM, on an
 * authentication failure or when the service stays unavailable: what was not acknowledged is
 * left for `--resume`.
 */

export { BATCH_PATH, shiftCustomerPath } from './sender.js';

export type { PushEnvironment, PushOutcome, PushTarget } from './environment.js';
export { DEFAULT_STOP_GRACE_MS } from './stopping.js';

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

export function runBatchPush(request: BatchPushRequest, env: PushEnvironment): Promise<PushOutcome> {
  return new BatchRun(request, env).execute();
}

/**
 * One run, start to summary: the lock, the journal, the record of what was sent, the reading (see
 * reading.ts), the checks and chunks, the sending (sender.ts) and the counts (accounting.ts).
 */
class BatchRun {
  private readonly io: IO;
  private readonly started: Date;
  private readonly startedMs = performance.now();
  private readonly notes: string[] = [];
  private mapping: Mapping = IDENTITY_MAPPING;
  /** Size and modification time of each input file when the run started. */
  private inputStamps = new Map<string, InputStamp>();
  private account: RunAccount;
  private readonly stop: RunStop;
  private lock: PushLock | undefined;
  private journal: Journal | undefined;
  private target: PushTarget | undefined;
  private sender: ChunkSender | undefined;
  private staging: Staging | undefined;
  /** Where files not sorted by customer are sorted (line-sort.ts). */
  private folder: TempFolder | undefined;
  private delta: CustomerDelta | undefined;
  private resumed = false;

  constructor(
    private readonly request: BatchPushRequest,
    private readonly env: PushEnvironment,
  ) {
    this.io = env.io;
    this.started = this.io.now();
    this.stop = new RunStop(env.stopGraceMs);
    this.account = this.newAccount();
  }

  private newAccount(): RunAccount {
    return new RunAccount(
      (sources) =>
        new RejectsWriter(
          this.request.rejectsPath ?? defaultRejectsName(this.started),
          this.io.cwd,
          sources,
          this.request.rejectsPath !== undefined,
          // A rejects file that cannot be written (a full disk) stops the run: what was sent is counted,
          // the rest is left for --resume, which writes the rejects again.
          { raw: this.io.csv?.raw, onFailure: (error) => this.stop.fail(error) },
        ),
    );
  }

  private readingContext(): ReadingContext {
    return {
      io: this.io,
      mapping: this.mapping,
      account: this.account,
      signal: this.stop.readingSignal,
      onEvent: (event) => this.env.onEvent(event),
    };
  }

  async execute(): Promise<PushOutcome> {
    const { request, env, io } = this;
    const dir = stateDir(io.env);
    let releaseSignals: (() => void) | undefined;
    let keepRejects = true;
    try {
      this.mapping = withDelimiter(
        request.mappingPath ? await loadMapping(request.mappingPath, io.cwd) : IDENTITY_MAPPING,
        io.input?.delimiter,
      );
      this.inputStamps = stampInputs(request.inputs, io.cwd);
      if (!request.validateOnly) {
        this.target = await env.target();
        this.lock = PushLock.acquire(dir, this.target.profile, 'customers batch', this.started);
      }
      releaseSignals = io.onSignal((signal) =>
        this.stop.signal(signal, () =>
          env.onEvent({ type: 'stopping', reason: signal, inFlight: this.sender?.inFlightCount ?? 0 }),
        ),
      );
      if (request.delta)
        this.delta = openRunDelta(io.env, this.target ?? (await env.target()), {
          mode: request.delta,
          maxAgeDays: request.maxAgeDays,
          create: !request.validateOnly,
          warn: (line) => env.warn(line),
        });
      this.delta?.useMapping(this.mapping);
      if (!request.validateOnly) {
        const client = await env.api();
        // Fail on bad credentials before reading a million rows, not after: a new token, as a
        // cached one outlives a rotated secret until its first use (the service cuts it off then).
        await client.checkCredentials();
        this.sender = new ChunkSender({
          client,
          signal: this.stop.requestSignal,
          concurrency: request.concurrency,
          answered: () => this.account.answered(),
        });
      }

      const streamable = streamableInput(request.inputs, request.format, io.cwd);
      // The journal key needs a hash of the whole file; a check-only run opens no journal, so it skips that extra read.
      const digest =
        streamable && !request.validateOnly ? await inputsDigest(streamable.inputs, this.readingContext()) : undefined;
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
          if (this.stop.stopped) {
            // Found while the rest was read only to be counted (the service refused or went away):
            // a staged pass would send nothing, and its fresh account would drop what was acknowledged.
            this.account.inputFullyRead = false;
            return this.finish();
          }
          // The next pass asks the record about the customers this one sent.
          this.writeRecord();
          // Two files are tried side by side on the chance that both are sorted: only a resend is worth a note.
          const { sent } = this.account.requests;
          if (streamable!.inputs.length === 1 || sent) {
            this.notes.push(
              `${err.file ?? streamable!.inputs[0]!.path} is not sorted by customer (${err.message}); it was staged instead${sent ? `, and the ${sent} request(s) already sent were sent again (upserts are safe to repeat)` : ''}`,
            );
          }
          // What the streamed pass counted is counted again by the staged one.
          this.account.rejects.close();
          this.account = this.newAccount();
          mode = 'staged';
          if (!request.validateOnly) this.openJournal(dir, digest!, mode, true);
          await this.pushStaged(dir, digest);
        }
      } else {
        await this.pushStaged(dir, digest);
      }
      return this.finish();
    } catch (err) {
      if (err instanceof ReadingStopped) return this.summarize();
      // Once a journal is open the operator must learn what was acknowledged, whatever went wrong;
      // bad input and bad flags are still reported as such (file, row and field).
      if (this.journal === undefined || err instanceof InputError || err instanceof UsageError) {
        // A streamed file found unreadable mid-way: what the service acknowledged before stays recorded.
        this.writeRecord();
        keepRejects = this.account.requests.sent > 0;
        throw this.sentBefore(err);
      }
      this.stop.fail(err);
      this.stop.cutOff(err);
      await this.drain();
      return this.summarize();
    } finally {
      this.stop.cutOff(new Error('the push ended'));
      releaseSignals?.();
      if (keepRejects) this.account.rejects.close();
      else this.account.rejects.closeKeepingEarlier();
      this.journal?.close();
      this.delta?.close();
      this.staging?.close();
      this.folder?.close();
      this.lock?.release();
    }
  }

  /** Bad input found after requests went (a streamed file): the error says so, as no summary will. */
  private sentBefore(err: unknown): unknown {
    const { sent } = this.account.requests;
    if (!(err instanceof InputError) || sent === 0) return err;
    const hint = `${sent} request(s) had already been sent from the part read before; what the service acknowledged is kept, and pushing the corrected file again is safe (upserts)`;
    return new InputError(
      err.message,
      {},
      { details: err.details, cause: err, hint: err.hint ? `${err.hint}; ${hint}` : hint },
    );
  }

  /** The end of a run that was not cut short by an error: the record, the complete mark, the summary. */
  private finish(): PushOutcome {
    this.writeRecord();
    const complete = !this.stop.stopped && !this.request.validateOnly;
    if (complete) this.journal!.markComplete(this.io.now());
    return this.summarize();
  }

  /** Opens (or, with --resume, continues) the journal; returns the mode an earlier run used. */
  private openJournal(dir: string, digest: string, mode: Mode, fresh = false): Mode | undefined {
    const { request, env } = this;
    this.journal?.close();
    const run = {
      ...request,
      dir,
      target: this.target!,
      started: this.started,
      warn: (line: string) => env.warn(line),
    };
    const opened = openRunJournal(run, digest, mode, request.resume && !fresh);
    this.journal = opened.journal;
    if (fresh) return undefined;
    this.resumed = opened.resumed;
    if (request.resume && !opened.resumed && !opened.restarted)
      env.warn('nothing to resume for these inputs (no journal of an interrupted push); sending everything');
    if (opened.resumed)
      env.onEvent({ type: 'resuming', acknowledged: this.journal.acknowledged, journal: this.journal.path });
    return opened.resumed ? (this.journal.header.mode ?? 'staged') : undefined;
  }

  // ---- the two ways in (reading.ts) ---------------------------------------------------------

  private async pushStreamed(streamable: Streamable): Promise<void> {
    const delta = this.delta;
    const groups = await streamedGroups(
      streamable,
      this.readingContext(),
      delta ? (raws) => delta.unchangedRaw(raws) : undefined,
    );
    await this.pushCounted(groups);
  }

  /** Groups read as they stream (from a sorted file, or one sorted here); the generator returns the rows read. */
  private async pushCounted(groups: AsyncGenerator<CustomerGroup, number>): Promise<void> {
    this.account.totalCustomers = 0;
    let rows = 0;
    const counted = (async function* () {
      rows = yield* groups;
    })();
    await this.pushGroups(counted, true);
    const { account } = this;
    account.rowsRead = Math.max(account.rowsRead, rows);
    if (account.rowsRead === 0 && account.inputFullyRead && !this.stop.stopped) throw noRecords(account.sources);
  }

  private async pushStaged(dir: string, knownDigest: string | undefined): Promise<void> {
    const { request, io } = this;
    const streamable = streamableInput(request.inputs, request.format, io.cwd);
    // Batch-shape files are staged: their lines are customers, whose order the staging gives.
    const sortable = streamable?.documents ? undefined : streamable?.inputs;
    if (sortable) {
      try {
        if (await this.pushSorted(sortable, dir, knownDigest)) return;
      } catch (err) {
        // The reader found the sorted lines out of order: the cut grouped a line otherwise than the reader.
        if (!(err instanceof NotSortedError)) throw err;
        await this.drain();
        this.writeRecord();
        const { sent } = this.account.requests;
        this.notes.push(
          `the export could not be sorted by its lines (${err.message}); it was staged instead${sent ? `, and the ${sent} request(s) already sent were sent again (upserts are safe to repeat)` : ''}`,
        );
        // The staged pass's chunks need not be those the sorted pass journaled: a journal of its own.
        if (this.journal !== undefined)
          this.openJournal(dir, knownDigest ?? (await inputsDigest(sortable, this.readingContext())), 'staged', true);
      }
      this.account.rejects.close();
      this.account = this.newAccount();
      this.folder?.close();
      this.folder = undefined;
    }
    await this.pushStagedRows(dir, knownDigest);
  }

  /**
   * CSV files sorted by their lines, then read as sorted ones (line-sort.ts); false when the lines
   * cannot be sorted for sure (nothing has been read into the account then).
   */
  private async pushSorted(inputs: BatchInput[], dir: string, knownDigest: string | undefined): Promise<boolean> {
    const { request, io } = this;
    this.folder = new TempFolder(io.env.LEADCTL_TMPDIR || undefined);
    const delta = this.delta;
    const sorted = await sortedGroups(
      inputs,
      this.readingContext(),
      this.folder,
      () => this.stop.stopped,
      delta ? (raws) => delta.unchangedRaw(raws) : undefined,
    );
    if (sorted === undefined) return false;
    this.env.onEvent({ type: 'staged', rows: sorted.lines, seconds: (performance.now() - this.startedMs) / 1000 });
    if (!request.validateOnly && this.journal === undefined)
      this.openJournal(dir, knownDigest ?? (await inputsDigest(inputs, this.readingContext())), 'staged');
    await this.pushCounted(sorted.groups);
    return true;
  }

  private async pushStagedRows(dir: string, knownDigest: string | undefined): Promise<void> {
    const { request, io, account } = this;
    this.staging = new Staging(io.env.LEADCTL_TMPDIR || undefined, account.sources);
    const staged = await stageInputs(
      request.inputs,
      request.format,
      this.readingContext(),
      this.staging,
      () => this.stop.stopped,
    );
    account.rowsRead = staged.rowsRead;
    if (staged.rowsRead === 0) throw noRecords(account.sources);
    this.env.onEvent({ type: 'staged', rows: staged.rowsRead, seconds: (performance.now() - this.startedMs) / 1000 });
    account.totalCustomers = this.staging.customerCount(staged.shape);
    if (!request.validateOnly && this.journal === undefined)
      this.openJournal(
        dir,
        knownDigest ?? (await stagedDigest(request.inputs, staged.digest, this.readingContext())),
        'staged',
      );
    await this.pushGroups(staged.groups(), false);
  }

  // ---- check, chunk, send ----------------------------------------------------------------

  private async pushGroups(
    groups: Iterable<CustomerGroup> | AsyncIterable<CustomerGroup>,
    streaming: boolean,
  ): Promise<void> {
    const { request } = this;
    if (this.delta) beginRunDelta(this.delta, this.journal?.header, this.started);
    await checkAndChunk(groups, {
      account: this.account,
      limits: { maxCustomers: request.chunkSize, maxBytes: request.maxBytes },
      streaming,
      delta: this.delta,
      stop: () => this.stop.reason,
      dispatch: (chunk) => this.dispatch(chunk),
      drain: () => this.drain(),
    });
  }

  private async drain(): Promise<void> {
    await this.sender?.drain();
  }

  /** Counts a chunk the service answered, tells the record, and reports it. */
  private settle(chunk: Chunk, result: PostResult, outcome: SettledOutcome): void {
    const event = this.account.settle(chunk, result, outcome);
    if (this.delta) {
      const { remember, forget } = deltaVerdicts(chunk, result, outcome === 'refused');
      this.keep(() => this.delta!.settle(remember, forget, this.io.now().getTime()));
    }
    this.env.onEvent(event);
  }

  /**
   * Book-keeping of an answer (journal, record) that fails (a full disk) stops the run, but the
   * answer is still counted: the service has those customers whatever the disk says.
   */
  private keep(write: () => void): void {
    try {
      write();
    } catch (err) {
      this.stop.fail(err);
    }
  }

  private async dispatch(chunk: Chunk): Promise<void> {
    this.account.made();
    if (this.request.validateOnly) {
      this.env.onEvent(this.account.wouldSend(chunk));
      chunk.release();
      await turn();
      return;
    }
    const ack = earlierAck(this.journal!, chunk);
    if (ack) {
      this.account.acknowledgedBefore();
      this.settle(chunk, { skipped: ack.skipped, refused: [], unconfirmed: ack.unconfirmed ?? [] }, 'from-journal');
      chunk.release();
      await turn();
      return;
    }
    const sender = this.sender!;
    await sender.free(() => this.stop.stopped);
    if (this.stop.stopped) {
      this.account.pending(chunk);
      return;
    }
    sender.start(
      () => this.send(chunk),
      (err) => this.stop.fail(err),
      () => chunk.release(),
    );
  }

  private async send(chunk: Chunk): Promise<void> {
    try {
      const result = await this.sender!.post(chunk.customers);
      if (result.refused.length === 0) {
        this.keep(() => this.journal!.record(ackEntry(chunk, result.skipped, result.unconfirmed, this.io.now())));
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
      this.account.pending(chunk);
      this.stop.requestFailed(err);
    }
  }

  // ---- summary ------------------------------------------------------------------------------

  /** Customers acknowledged and not yet written to the record (it writes them in batches). */
  private writeRecord(): void {
    const delta = this.delta;
    if (delta) this.keep(() => delta.flushSettled());
  }

  private summarize(): PushOutcome {
    const { request, account } = this;
    this.writeRecord();
    // Before the summary: a journal whose acknowledgements cannot reach the disk fails the run.
    const journal = this.journal;
    if (journal) this.keep(() => journal.sync());
    // Closed first: a rejects file that cannot be completed is the run's failure too.
    account.rejects.close();
    for (const note of changedInputs(this.inputStamps, this.io.cwd)) {
      this.notes.push(note);
      this.env.warn(`Warning: ${note}`);
    }
    const summary = account.summary({
      stop: this.stop.reason,
      validateOnly: request.validateOnly,
      resumed: this.resumed,
      notes: this.notes,
      splits: this.sender?.splits ?? 0,
      retries: this.sender?.retries ?? 0,
      elapsedSeconds: (performance.now() - this.startedMs) / 1000,
      journal: this.journal?.path ?? null,
      ...(request.delta
        ? {
            delta: {
              mode: request.delta,
              max_age_days: request.maxAgeDays ?? DEFAULT_MAX_AGE_DAYS,
              record: this.delta?.record.path ?? null,
              unchanged_raw: account.unchangedRaw,
            },
          }
        : {}),
    });
    return { summary, exitCode: summary.exit_code };
  }
}

/**
 * Back to the event loop once: signals are handled there. A chunk that sends nothing (a check, one
 * acknowledged before) awaits no I/O, and a staged or line-sorted export is read from disk
 * synchronously, so without this SIGINT/SIGTERM went unheard until the end of the export.
 */
function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
