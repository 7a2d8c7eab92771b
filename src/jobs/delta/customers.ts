import type { SentPayload } from '../push/validate.js';
import type { CustomerDigest, DeltaRecord } from './record.js';

/**
 * `customers batch --changed-only` and `--full`: which customers of an export to send, judged
 * against the record of what the service acknowledged before.
 *
 * A customer is sent when the record has no digest for it, when its payload's digest differs,
 * when it was last sent more than `maxAge` before the run began (so the service converges even
 * if it lost something), or when this same run (an interrupted one, now resumed) recorded it:
 * that keeps the set sent, and so the chunks, the same across `--resume`.
 */

export type DeltaMode = 'changed-only' | 'full';

export const DEFAULT_MAX_AGE_DAYS = 30;
const DAY_MS = 24 * 3600 * 1000;

/**
 * The payload in a form that row order does not change: loans, and each loan's payments, as
 * sorted sets. Values are compared as the checks converted them (numbers, ISO dates), not as the
 * file spelled them; a loan's fields and each payment are taken as the JSON they are sent as,
 * whose keys come in the order the mapping (or a JSON record) gives them.
 */
export function canonicalPayload(customerId: string, payload: SentPayload): string {
  const loans = payload.loans
    .map((loan) => `${JSON.stringify(loan.fields)}[${[...loan.payments].sort().join(',')}]`)
    .sort();
  return `${JSON.stringify(customerId)}[${loans.join(',')}]`;
}

export interface CustomerDeltaOptions {
  mode: DeltaMode;
  maxAgeDays: number;
}

export class CustomerDelta {
  private run = '';
  private reference = 0;

  constructor(
    readonly record: DeltaRecord,
    readonly options: CustomerDeltaOptions,
  ) {}

  /** `run` names the push (the same across its resumes); `referenceMs` is when it first began. */
  begin(run: string, referenceMs: number): void {
    this.run = run;
    this.reference = referenceMs;
  }

  digestOf(customerId: string, payload: SentPayload): CustomerDigest {
    return {
      id: this.record.digest('customer', customerId),
      payload: this.record.digest('payload', canonicalPayload(customerId, payload)),
    };
  }

  /** Whether to send: always with `--full`; with `--changed-only`, when new, changed, old or this run's. */
  shouldSend(customer: CustomerDigest): boolean {
    if (this.options.mode === 'full') return true;
    const known = this.record.customer(customer.id);
    if (!known) return true;
    if (!known.payload.equals(customer.payload)) return true;
    if (known.run === this.run) return true;
    return known.sentAt < this.reference - this.options.maxAgeDays * DAY_MS;
  }

  /** Acknowledged customers are remembered; refused or skipped ones forgotten (sent next time). */
  settle(remember: readonly CustomerDigest[], forget: readonly CustomerDigest[], atMs: number): void {
    this.record.settle(remember, forget, atMs, this.run);
  }

  close(): void {
    this.record.close();
  }
}
