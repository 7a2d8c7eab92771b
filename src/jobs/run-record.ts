import type { ApiEvent } from '../api/client.js';
import type { Bucket, ReasonFact, RunRecord, SlowRequest, StatusClass } from '../output/run-report.js';
import type { PushEvent } from './push/progress.js';

/**
 * Listens to a run from outside: the push's progress events, the API client's events and the
 * records a command settles, each stamped with the run's clock. Memory stays bounded however
 * long the run: the timeline has at most MAX_BUCKETS spans (each twice as long once they would
 * be more), and only the slowest requests are kept.
 */

export const MAX_BUCKETS = 60;
const FIRST_BUCKET_MS = 100;
const SLOWEST_KEPT = 10;
/** Kinds of problem told apart, and examples kept of each, by `sample`. */
export const SAMPLED_REASONS = 50;
export const EXAMPLES_PER_REASON = 3;

export class RunRecorder {
  readonly startedAt: number;
  private bucketMs = FIRST_BUCKET_MS;
  private buckets: Bucket[] = [];
  private readonly requests: Record<StatusClass, number> = {
    '2xx': 0,
    '3xx': 0,
    '4xx': 0,
    '5xx': 0,
    network_error: 0,
  };
  private retries = 0;
  private giveUps = 0;
  private bytesSent = 0;
  private readonly slowest: SlowRequest[] = [];
  /** The answer heard last, until the push says which of its requests it settled. */
  private lastAnswer: SlowRequest | undefined;
  private readonly hashes = new Map<string, string>();
  private recordsDone = 0;
  private readonly samples = new Map<string, ReasonFact>();
  private otherSamples = 0;

  constructor(private readonly now: () => number) {
    this.startedAt = now();
  }

  /** An event of the API client. */
  api(event: ApiEvent): void {
    this.lastAnswer = undefined;
    switch (event.type) {
      case 'response':
      case 'network-error': {
        const bucket = this.bucket();
        bucket.requests++;
        const status = event.type === 'response' ? event.status : event.code;
        if (event.type === 'response') {
          this.requests[statusClass(event.status)]++;
          this.bytesSent += event.bytes;
        } else this.requests.network_error++;
        const answer: SlowRequest = {
          at: this.now() - this.startedAt,
          method: event.method,
          // A query may carry a value (a lead id, a date): the path alone says which endpoint.
          path: event.path.replace(/\?.*$/, ''),
          status,
          durationMs: Math.round(event.durationMs),
          attempt: event.attempt,
        };
        this.keepIfSlow(answer);
        this.lastAnswer = answer;
        return;
      }
      case 'retry':
        this.retries++;
        this.bucket().retries++;
        return;
      case 'give-up':
        this.giveUps++;
        return;
      default:
        return;
    }
  }

  /** A progress event of a push. */
  push(event: PushEvent): void {
    switch (event.type) {
      case 'input':
        this.hashes.set(event.file, event.sha256);
        return;
      case 'request': {
        if (event.outcome === 'from-journal') return;
        // The push settles a request in the same turn as the client hears its answer: that answer is this request's.
        if (event.outcome !== 'would-send' && this.lastAnswer) {
          this.lastAnswer.chunk = {
            number: event.index + 1,
            customers: event.customers,
            loans: event.loans,
            payments: event.payments,
          };
        }
        this.lastAnswer = undefined;
        this.settled(event.customers);
        return;
      }
      case 'record': {
        const done = event.done - this.recordsDone;
        this.recordsDone = event.done;
        if (done > 0) this.settled(done);
        return;
      }
      default:
        return;
    }
  }

  /** `count` records were settled now (sent and answered, or checked). */
  settled(count: number): void {
    this.bucket().records += count;
  }

  /** A record not accepted, of kind `reason`: counted, and kept as an example while there are few. */
  sample(reason: string, example: () => string): void {
    const known = this.samples.get(reason);
    if (known) {
      known.count++;
      if (known.examples.length < EXAMPLES_PER_REASON) known.examples.push(example());
    } else if (this.samples.size >= SAMPLED_REASONS) this.otherSamples++;
    else this.samples.set(reason, { reason, count: 1, examples: [example()] });
  }

  /** The sampled reasons, most frequent first, and the records of reasons beyond SAMPLED_REASONS. */
  sampled(): { reasons: ReasonFact[]; other: number } {
    const reasons = [...this.samples.values()]
      .sort((a, b) => b.count - a.count)
      .map((r) => ({ ...r, examples: [...r.examples] }));
    return { reasons, other: this.otherSamples };
  }

  /** The SHA-256 of an input file that the run took while reading it. */
  hashOf(file: string): string | undefined {
    return this.hashes.get(file);
  }

  finish(): RunRecord {
    const endedAt = this.now();
    this.bucket(endedAt);
    return {
      startedAt: this.startedAt,
      endedAt,
      bucketMs: this.bucketMs,
      buckets: this.buckets.map((b) => ({ ...b })),
      requests: { ...this.requests },
      retries: this.retries,
      giveUps: this.giveUps,
      bytesSent: this.bytesSent,
      slowest: this.slowest.map((s) => ({ ...s, ...(s.chunk ? { chunk: { ...s.chunk } } : {}) })),
    };
  }

  /** The span `at` falls in, the spans before it made (empty) and merged in pairs while too many. */
  private bucket(at = this.now()): Bucket {
    const index = () => Math.max(0, Math.floor((at - this.startedAt) / this.bucketMs));
    while (index() >= MAX_BUCKETS) {
      const merged: Bucket[] = [];
      for (let i = 0; i < this.buckets.length; i += 2) {
        const a = this.buckets[i]!;
        const b = this.buckets[i + 1];
        merged.push({
          records: a.records + (b?.records ?? 0),
          requests: a.requests + (b?.requests ?? 0),
          retries: a.retries + (b?.retries ?? 0),
        });
      }
      this.buckets = merged;
      this.bucketMs *= 2;
    }
    const i = index();
    while (this.buckets.length <= i) this.buckets.push({ records: 0, requests: 0, retries: 0 });
    return this.buckets[i]!;
  }

  private keepIfSlow(answer: SlowRequest): void {
    const list = this.slowest;
    if (list.length >= SLOWEST_KEPT && answer.durationMs <= list[list.length - 1]!.durationMs) return;
    let i = list.length;
    while (i > 0 && list[i - 1]!.durationMs < answer.durationMs) i--;
    list.splice(i, 0, answer);
    if (list.length > SLOWEST_KEPT) list.pop();
  }
}

export function statusClass(status: number): StatusClass {
  if (status >= 500) return '5xx';
  if (status >= 400) return '4xx';
  if (status >= 300) return '3xx';
  return '2xx';
}
