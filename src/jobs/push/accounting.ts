import type { CustomerGroup } from '../../ingest/lms/groups.js';
import type { RowProblem } from '../../ingest/lms/rows.js';
import type { Chunk } from './chunker.js';
import type { PushEvent } from './progress.js';
import type { RejectsWriter } from './rejects.js';
import type { PostResult } from './sender.js';
import { applySkips, paymentIdsFrom } from './service-skips.js';
import { accountFor, type LevelSummary, outcomeOf, type PushSummary, type StopReason } from './summary.js';
import type { GroupResult, LevelCounts, Reject, ValidCustomer } from './validate.js';

/**
 * Counts of a push at each level (customers, loans, payments), one per outcome. Every record read
 * ends in exactly one of accepted, rejected, duplicates, unconfirmed, unchanged or not sent (the
 * summary checks it); read, valid and sent count it once more on the way there.
 */
export class Tally {
  readonly read = counts();
  readonly valid = counts();
  readonly sent = counts();
  readonly accepted = counts();
  readonly rejected = counts();
  readonly duplicates = counts();
  readonly unconfirmed = counts();
  readonly unchanged = counts();
  readonly notSent = counts();

  static add(target: LevelCounts, source: LevelCounts, sign = 1): void {
    target.customers += sign * source.customers;
    target.loans += sign * source.loans;
    target.payments += sign * source.payments;
  }

  level(key: keyof LevelCounts): LevelSummary {
    return {
      read: this.read[key],
      valid: this.valid[key],
      sent: this.sent[key],
      accepted: this.accepted[key],
      rejected: this.rejected[key],
      duplicates: this.duplicates[key],
      unconfirmed: this.unconfirmed[key],
      unchanged: this.unchanged[key],
      not_sent: this.notSent[key],
    };
  }
}

function counts(): LevelCounts {
  return { customers: 0, loans: 0, payments: 0 };
}

/** The customers of a chunk, with their loans and payments. */
export function countChunk(chunk: Pick<Chunk, 'customers'>): LevelCounts {
  return {
    customers: chunk.customers.length,
    loans: chunk.customers.reduce((n, c) => n + c.loans, 0),
    payments: chunk.customers.reduce((n, c) => n + c.payments, 0),
  };
}

/** Loans and payments of the customers at `indices` in the chunk (indices it does not have count nothing). */
export function countCustomers(chunk: Pick<Chunk, 'customers'>, indices: readonly number[]): LevelCounts {
  const sum = counts();
  for (const i of indices) {
    const c = chunk.customers[i];
    if (!c) continue;
    sum.customers++;
    sum.loans += c.loans;
    sum.payments += c.payments;
  }
  return sum;
}

/** Every record of a group as read, before it is checked: superseded records too. */
export function countGroup(g: CustomerGroup): LevelCounts {
  if (g.unchanged) return { customers: 1, ...g.unchanged };
  const sum: LevelCounts = {
    customers: 1,
    loans: g.loans.length,
    payments: g.loans.reduce((n, l) => n + l.payments.length, 0) + g.orphans.reduce((n, o) => n + o.payments.length, 0),
  };
  // Which of them is the duplicate is decided when the group is checked.
  for (const d of g.duplicates) sum[`${d.level}s`]++;
  return sum;
}

export type RequestEvent = Extract<PushEvent, { type: 'request' }>;
/** How a chunk sent (or acknowledged before) was answered. */
export type SettledOutcome = Exclude<RequestEvent['outcome'], 'would-send'>;

/** What the summary says besides the counts. */
export interface RunFacts {
  stop: StopReason | undefined;
  validateOnly: boolean;
  resumed: boolean;
  notes: readonly string[];
  /** Requests refused as too large and sent in halves. */
  splits: number;
  retries: number;
  elapsedSeconds: number;
  journal: string | null;
  delta?: PushSummary['delta'];
}

/**
 * The accounting of one pass over the input: the tally, the requests, the rejects file and the
 * progress. Each change of a count is a method here, so that what the summary adds up is changed in
 * one place; a pass begun again (an unsorted export staged after all) starts from a new account.
 */
export class RunAccount {
  readonly tally = new Tally();
  readonly requests = { total: 0, sent: 0, acknowledgedBefore: 0, notSent: 0 };
  /** The inputs' names as opened, which the rejects file (and staging) refer to by index. */
  readonly sources: string[] = [];
  readonly rejects: RejectsWriter;
  doneCustomers = 0;
  totalCustomers = 0;
  /** Customers found unchanged from their raw rows (`--changed-only`), never converted nor checked. */
  unchangedRaw = 0;
  rowsRead = 0;
  /** False when a stop left part of the input unread (the summary says so). */
  inputFullyRead = true;

  constructor(rejects: (sources: string[]) => RejectsWriter) {
    this.rejects = rejects(this.sources);
  }

  /** A request made of a chunk (sent, acknowledged before, or not sent). */
  made(): void {
    this.requests.total++;
  }

  /** A request the service answered (a split request answers once per part). */
  answered(): void {
    this.requests.sent++;
  }

  /** A request the journal says an earlier run had acknowledged. */
  acknowledgedBefore(): void {
    this.requests.acknowledgedBefore++;
  }

  /** A row that could not be made a record: read, and rejected. */
  readonly readProblem = (p: RowProblem): void => {
    const key = `${p.level}s` as keyof LevelCounts;
    this.tally.read[key]++;
    this.tally.rejected[key]++;
    this.rejects.add({ ...p, customerId: p.customerId ?? '' });
  };

  /** A customer group checked: what it held, what was refused or superseded, and what is valid. */
  checked(result: GroupResult): void {
    Tally.add(this.tally.read, result.seen);
    Tally.add(this.tally.rejected, result.rejected);
    Tally.add(this.tally.duplicates, result.duplicates);
    this.reject(result.rejects);
    if (result.valid) Tally.add(this.tally.valid, customerCounts(result.valid));
  }

  /** A valid customer the service already has as it is (`--changed-only`): done, not sent. */
  unchanged(valid: ValidCustomer): void {
    Tally.add(this.tally.unchanged, customerCounts(valid));
    this.doneCustomers++;
  }

  /**
   * A customer whose raw rows are those recorded as sent (`--changed-only`): read, valid and
   * unchanged (it had nothing refused when recorded, and the same rows refuse nothing now).
   */
  unchangedAsRead(counts: { loans: number; payments: number }): void {
    const sum = { customers: 1, ...counts };
    Tally.add(this.tally.read, sum);
    Tally.add(this.tally.valid, sum);
    Tally.add(this.tally.unchanged, sum);
    this.unchangedRaw++;
    this.doneCustomers++;
  }

  /** A group read after the run stopped: counted, never checked nor sent. */
  readNotSent(g: CustomerGroup): void {
    const sum = countGroup(g);
    Tally.add(this.tally.read, sum);
    Tally.add(this.tally.notSent, sum);
  }

  /** A request made but not sent (a stop, a failure), left for --resume. */
  pending(chunk: Chunk): void {
    this.requests.notSent++;
    Tally.add(this.tally.notSent, countChunk(chunk));
  }

  /** A request a check-only run would send. */
  wouldSend(chunk: Chunk): RequestEvent {
    const sent = countChunk(chunk);
    this.doneCustomers += sent.customers;
    return this.requestEvent(chunk, 'would-send', sent, { skipped: 0, unconfirmed: 0 }, this.requests.total);
  }

  /**
   * A chunk the service answered (now or, per the journal, in an earlier run): what it skipped or
   * refused is rejected, what it took without a per-record verdict is unconfirmed, and only the
   * rest is accepted. Returns the progress event that reports it.
   */
  settle(chunk: Chunk, result: PostResult, outcome: SettledOutcome): RequestEvent {
    const sent = countChunk(chunk);
    const traces = chunk.customers.map((c) => c.trace);
    const ids = paymentIdsFrom(chunk.customers);
    const skips = applySkips(traces, result.skipped, ids);
    const refusals = applySkips(traces, result.refused, ids, 'refused');
    const unconfirmed = countCustomers(chunk, result.unconfirmed);
    this.reject(skips.rejects);
    this.reject(refusals.rejects);
    Tally.add(this.tally.sent, sent);
    Tally.add(this.tally.accepted, sent);
    for (const part of [skips.rejected, refusals.rejected]) {
      Tally.add(this.tally.accepted, part, -1);
      Tally.add(this.tally.rejected, part);
    }
    Tally.add(this.tally.accepted, unconfirmed, -1);
    Tally.add(this.tally.unconfirmed, unconfirmed);
    this.doneCustomers += sent.customers;
    const answer = { skipped: result.skipped.length, unconfirmed: unconfirmed.customers, refusal: result.refusal };
    return this.requestEvent(chunk, outcome, sent, answer, this.requests.sent + this.requests.acknowledgedBefore);
  }

  private requestEvent(
    chunk: Chunk,
    outcome: RequestEvent['outcome'],
    sent: LevelCounts,
    answer: { skipped: number; unconfirmed: number; refusal?: PostResult['refusal'] },
    requestsDone: number,
  ): RequestEvent {
    return {
      type: 'request',
      index: chunk.index,
      outcome,
      ...sent,
      skipped: answer.skipped,
      unconfirmed: answer.unconfirmed,
      ...(answer.refusal ? { refusal: answer.refusal } : {}),
      doneCustomers: this.doneCustomers,
      totalCustomers: this.totalCustomers,
      requestsDone,
    };
  }

  /**
   * The run's summary, its counts from this account: `accountFor` checks that they add up. The
   * rejects file is closed by then (a rejects file that cannot be completed is the run's failure).
   */
  summary(run: RunFacts): PushSummary {
    const { tally, requests, rejects } = this;
    const { status, exitCode, error } = outcomeOf(run.stop, run.validateOnly, rejects.count > 0);
    const notes = [...run.notes];
    if (run.splits)
      notes.push(
        `the service refused ${run.splits} request(s) as too large (HTTP 413); each was split and sent in halves (lower --max-bytes to avoid this)`,
      );
    if (!this.inputFullyRead) notes.push('the rest of the export was not read: rerun with --resume to continue');
    if (rejects.failure)
      notes.push(
        `the rejects file ${rejects.path} could not be written and was removed: its ${rejects.count} line(s) are counted here and written again by the rerun`,
      );
    const elapsed = run.elapsedSeconds;
    return accountFor({
      command: 'customers batch',
      status,
      validate_only: run.validateOnly,
      resumed: run.resumed,
      rows_read: this.rowsRead,
      customers: tally.level('customers'),
      loans: tally.level('loans'),
      payments: tally.level('payments'),
      duplicates: tally.duplicates.customers + tally.duplicates.loans + tally.duplicates.payments,
      requests: {
        total: requests.total,
        sent: requests.sent,
        acknowledged_before: requests.acknowledgedBefore,
        not_sent: requests.notSent,
      },
      retries: run.retries,
      elapsed_seconds: Math.round(elapsed * 10) / 10,
      rows_per_second: elapsed > 0 ? Math.round(this.rowsRead / elapsed) : 0,
      rejects_file: rejects.created ? rejects.path : null,
      rejects: rejects.count,
      reasons: rejects.reasons(),
      journal: run.journal,
      exit_code: exitCode,
      ...(run.delta ? { delta: run.delta } : {}),
      ...(error ? { error } : {}),
      ...(notes.length ? { notes } : {}),
    });
  }

  private reject(list: readonly Reject[]): void {
    for (const r of list) this.rejects.add(r);
  }
}

function customerCounts(valid: ValidCustomer): LevelCounts {
  return { customers: 1, loans: valid.loans, payments: valid.payments };
}
