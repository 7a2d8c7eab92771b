import { BATCH_ANSWER, type ApiClient } from '../../api/client.js';
import { serviceProse, serviceText } from '../../api/errors.js';
import { LeadctlError, PayloadTooLargeError, ValidationError } from '../../errors.js';
import { BatchResponseSchema } from '../../schema/loan-performance.js';
import { customersBody } from './chunker.js';
import type { SkippedEntry } from './journal.js';
import type { ValidCustomer } from './validate.js';

export const BATCH_PATH = '/api/v1/loan-performance/batches/customers';

/** What became of the customers of one request (paths and indices relative to it). */
export interface PostResult {
  /** Records the service skipped, in its per-record answer. */
  skipped: SkippedEntry[];
  /** Customers of a request the service refused as a whole. */
  refused: SkippedEntry[];
  /** Customers sent and answered 2xx without a per-record verdict. */
  unconfirmed: number[];
  refusal?: { status: number | null; reason: string };
}

export interface ChunkSenderOptions {
  client: ApiClient;
  /** Cuts off every request in flight (and the retries' waits) when aborted. */
  signal: AbortSignal;
  concurrency: number;
  /** Called once for each request the service answered (a split request answers more than once). */
  answered(): void;
}

/**
 * Sends the chunks of a batch push: at most `concurrency` requests in flight, the client's retries
 * counted, and a request refused as too large split in halves. It says what the service answered
 * for each customer; what that means for the run (journal, accounting) is the caller's.
 */
export class ChunkSender {
  /** Attempts beyond the first, over every request sent. */
  retries = 0;
  /** Requests the service refused as too large (HTTP 413), each then sent in halves. */
  splits = 0;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: ChunkSenderOptions) {}

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Waits until a request may start: fewer than `concurrency` in flight, or `stopped()`. */
  async free(stopped: () => boolean): Promise<void> {
    while (this.inFlight.size >= this.options.concurrency && !stopped()) await Promise.race(this.inFlight);
  }

  /** Runs `task` in flight; a failure goes to `failed`, then `done` runs whatever happened. */
  start(task: () => Promise<void>, failed: (err: unknown) => void, done: () => void): void {
    const running: Promise<void> = task()
      .catch(failed)
      .finally(() => {
        this.inFlight.delete(running);
        done();
      });
    this.inFlight.add(running);
  }

  /** Waits for every request in flight to end. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.race(this.inFlight);
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
  async post(customers: readonly ValidCustomer[]): Promise<PostResult> {
    const body = customersBody(customers);
    try {
      const res = await this.options.client.send({
        method: 'POST',
        path: BATCH_PATH,
        body: () =>
          (async function* () {
            yield body;
          })(),
        auth: 'bearer',
        repeat: 'safe',
        answer: BATCH_ANSWER,
        signal: this.options.signal,
      });
      this.retries += res.attempts - 1;
      this.options.answered();
      const parsed = BatchResponseSchema.safeParse(res.body);
      if (parsed.success) {
        const skipped = parsed.data.data.skipped.map((s) => ({
          path: serviceText(s.path),
          id: s.id === null ? null : serviceText(s.id),
          errors: s.errors.map((e) => serviceProse(e)),
        }));
        // A skip of a customer the request did not have cannot be placed on any record sent: no
        // verdict of the answer is then taken for one (the service's words go to the rejects file).
        const unplaced = skipped.filter((s) => customerIndex(s.path, customers.length) === undefined);
        if (unplaced.length)
          return {
            skipped: unplaced.map((s) => ({ ...s, unplaced: true as const })),
            refused: [],
            unconfirmed: customers.map((_, i) => i),
          };
        return { skipped, refused: [], unconfirmed: [] };
      }
      return { skipped: [], refused: [], unconfirmed: customers.map((_, i) => i) };
    } catch (err) {
      this.retries += attemptsOf(err) - 1;
      if (err instanceof PayloadTooLargeError && customers.length > 1) {
        const half = Math.ceil(customers.length / 2);
        this.splits++;
        const first = await this.post(customers.slice(0, half));
        const second = await this.post(customers.slice(half));
        // An entry placed on no customer keeps the service's words (its index was the half's, and no customer's).
        const shift = (list: SkippedEntry[]) =>
          list.map((s) => (s.unplaced ? s : { ...s, path: shiftCustomerPath(s.path, half) }));
        return {
          skipped: [...first.skipped, ...shift(second.skipped)],
          refused: [...first.refused, ...shift(second.refused)],
          unconfirmed: [...first.unconfirmed, ...second.unconfirmed.map((i) => i + half)],
          refusal: first.refusal ?? second.refusal,
        };
      }
      if (err instanceof ValidationError) {
        this.options.answered();
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
}

/** The customer a skip's path names, when the request had it (`customers.3.loans.0` → 3). */
function customerIndex(path: string, customers: number): number | undefined {
  const m = /^customers\.(\d+)(?:\.|$)/.exec(path);
  const index = m ? Number(m[1]) : Number.NaN;
  return index < customers ? index : undefined;
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
