/**
 * Progress events of a push, and their wording. On a terminal a live line (counts, rate, ETA) is
 * replaced in place; in a log (cron) there is one line per request and, while reading, one line
 * every 10 seconds. Where the text goes is the caller's affair (src/output's progress).
 */

import { count, seconds } from '../../output/words.js';

export type PushEvent =
  | { type: 'reading'; file: string; rows: number }
  /** An input file's SHA-256 (of its bytes, as `sha256sum` gives it), taken for the journal's key. */
  | { type: 'input'; file: string; sha256: string }
  | { type: 'staged'; rows: number; seconds: number }
  | { type: 'resuming'; acknowledged: number; journal: string }
  | {
      type: 'request';
      index: number;
      outcome: 'accepted' | 'unconfirmed' | 'refused' | 'from-journal' | 'would-send';
      customers: number;
      loans: number;
      payments: number;
      skipped: number;
      /** Customers sent without a per-record verdict (a 2xx without detail). */
      unconfirmed: number;
      /** Why the service refused the whole request. */
      refusal?: { status: number | null; reason: string };
      doneCustomers: number;
      totalCustomers: number;
      requestsDone: number;
    }
  | { type: 'record'; done: number; total: number; rejected: number }
  | { type: 'stopping'; reason: string; inFlight: number };

export interface ProgressSink {
  /** Replaces the live status (terminal); logs print it only occasionally. */
  update(text: string): void;
  /** A line that stays. */
  note(line: string): void;
}

const LOG_EVERY_MS = 10_000;

export class PushReporter {
  private lastLogAt = -Infinity;
  private startedSending: number | undefined;

  constructor(
    private readonly sink: ProgressSink,
    private readonly live: boolean,
    private readonly now: () => number,
  ) {}

  handle(event: PushEvent): void {
    switch (event.type) {
      case 'reading': {
        const text = `reading ${event.file}: ${count(event.rows, 'row')}`;
        this.throttled(text);
        return;
      }
      case 'input':
        return;
      case 'staged':
        this.note(`read ${count(event.rows, 'row')} in ${seconds(event.seconds)}; checking and sending`);
        return;
      case 'resuming':
        this.note(
          event.acknowledged === 0
            ? `resuming an earlier run of these inputs, of which no request had been acknowledged: sending everything (journal ${event.journal})`
            : `resuming: ${event.acknowledged} request${event.acknowledged === 1 ? ' was' : 's were'} acknowledged in an earlier run (journal ${event.journal})`,
        );
        return;
      case 'request': {
        this.startedSending ??= this.now();
        const elapsed = (this.now() - this.startedSending) / 1000;
        const rate = elapsed > 0 ? event.doneCustomers / elapsed : 0;
        const remaining = Math.max(0, event.totalCustomers - event.doneCustomers);
        // Nothing to estimate from before a request has taken measurable time, nor once all is done.
        const eta = rate > 0 && remaining > 0 ? ` · ETA ${formatDuration(remaining / rate)}` : '';
        const totals = `${event.doneCustomers.toLocaleString('en-US')}/${event.totalCustomers.toLocaleString('en-US')} customers`;
        if (this.live) {
          this.sink.update(
            `sending: request ${event.requestsDone} · ${totals}${rate > 0 ? ` · ${Math.round(rate).toLocaleString('en-US')} customers/s` : ''}${eta}`,
          );
          return;
        }
        const what = `${count(event.customers, 'customer')}, ${count(event.loans, 'loan')}, ${count(event.payments, 'payment')}`;
        const words = {
          accepted: `request ${event.index + 1} accepted: ${what}${event.skipped ? ` (${event.skipped} skipped by the service)` : ''}`,
          unconfirmed: `request ${event.index + 1} sent: ${what}; the service answered without a verdict per record (${count(event.unconfirmed, 'customer')} unconfirmed)`,
          refused: `request ${event.index + 1} refused by the service${event.refusal?.status ? ` (HTTP ${event.refusal.status})` : ''}: ${what} rejected; --resume sends it again`,
          'from-journal': `request ${event.index + 1} already acknowledged in an earlier run: ${what}${event.unconfirmed ? ` (${count(event.unconfirmed, 'customer')} unconfirmed)` : ''}`,
          'would-send': `request ${event.index + 1} would send ${what}`,
        } as const;
        this.sink.note(`${words[event.outcome]} · ${totals}${eta}`);
        return;
      }
      case 'record': {
        const text = `sending: ${event.done.toLocaleString('en-US')}/${event.total.toLocaleString('en-US')} records${event.rejected ? `, ${event.rejected} rejected` : ''}`;
        this.throttled(text);
        return;
      }
      case 'stopping':
        this.note(`stopping (${event.reason}): no new requests; waiting for ${event.inFlight} in flight`);
        return;
    }
  }

  private throttled(text: string): void {
    if (this.live) {
      this.sink.update(text);
      return;
    }
    const now = this.now();
    if (now - this.lastLogAt >= LOG_EVERY_MS) {
      this.lastLogAt = now;
      this.sink.note(text);
    }
  }

  private note(line: string): void {
    this.sink.note(line);
  }
}

export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return h > 0
    ? `${h}:${String(m).padStart(2, '0')}:${String(r).padStart(2, '0')}`
    : `${m}:${String(r).padStart(2, '0')}`;
}
