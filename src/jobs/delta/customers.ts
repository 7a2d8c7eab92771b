import { createHash } from 'node:crypto';
import type { RawCounts, RawCustomer } from '../../ingest/lms/groups.js';
import type { Mapping } from '../../ingest/mapping/mapping.js';
import { packageVersion } from '../../version.js';
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
 *
 * The first look is at the raw lines (a sorted CSV export, streamed, see first-look.ts): a customer
 * sent before with nothing refused is recorded with a keyed digest of its lines and of what gives
 * them meaning (the files' headers, the mapping, leadctl's version and conversion rules, the time
 * zone data), with the loans and payments they hold, kept with the payload digest it was sent
 * with. When a later run reads the same lines for a customer whose record still holds that
 * payload, recent enough and not this run's, the customer is `unchanged` without parsing,
 * conversion or checks (it would convert to the same payload, and its checks would refuse nothing,
 * as before). Anything else takes the full path above.
 */

export type DeltaMode = 'changed-only' | 'full';

export const DEFAULT_MAX_AGE_DAYS = 30;
const DAY_MS = 24 * 3600 * 1000;
/** Bump when conversion or checks change what a row gives (beyond a version bump): raw digests recorded before then match nothing. */
const RAW_RULES = 2;
/** Raw digests learnt for customers found unchanged by their payload, written in batches of this many. */
const RAW_BATCH = 1024;
/**
 * Acknowledged customers written to the record in one transaction per this many (or per
 * SETTLE_MS), not one per request: the record's ids are digests, so every commit rewrites pages
 * all over the file (a commit per request of 1,000 made a 100,000-customer push 2.4 s slower). One
 * lost to a crash is only sent again next time.
 */
const SETTLE_BATCH = 5_000;
const SETTLE_MS = 30_000;

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

interface Settled {
  remember: readonly CustomerDigest[];
  forget: readonly CustomerDigest[];
  atMs: number;
}

export interface CustomerDeltaOptions {
  mode: DeltaMode;
  maxAgeDays: number;
}

export class CustomerDelta {
  private run = '';
  private reference = 0;
  /** What gives raw rows their meaning besides the files' headers; empty until the mapping is known. */
  private rules = '';
  private readonly contexts = new Map<string, (text: string) => string>();
  private rawLearnt: CustomerDigest[] = [];
  private settled: Settled[] = [];
  private settledCount = 0;
  private settledSince = 0;

  constructor(
    readonly record: DeltaRecord,
    readonly options: CustomerDeltaOptions,
  ) {}

  /** `run` names the push (the same across its resumes); `referenceMs` is when it first began. */
  begin(run: string, referenceMs: number): void {
    this.run = run;
    this.reference = referenceMs;
  }

  /** The run's mapping: raw rows read under another mapping (or leadctl) match nothing recorded. */
  useMapping(mapping: Pick<Mapping, 'spec' | 'identity'>): void {
    this.rules = JSON.stringify({
      leadctl: packageVersion(),
      rules: RAW_RULES,
      icu: process.versions.icu ?? null,
      tz: process.versions.tz ?? null,
      identity: mapping.identity === true,
      mapping: mapping.spec,
    });
    this.contexts.clear();
  }

  digestOf(customerId: string, payload: SentPayload, raw?: RawCustomer & RawCounts): CustomerDigest {
    const digest: CustomerDigest = {
      id: this.record.digest('customer', customerId),
      payload: this.record.digest('payload', canonicalPayload(customerId, payload)),
    };
    if (raw && this.rules) digest.raw = { digest: this.rawDigest(raw), loans: raw.loans, payments: raw.payments };
    return digest;
  }

  /**
   * The first look (see above), for many customers at once: for each, the counts recorded with its
   * lines when they are those recorded with the payload the record holds for it, and that record
   * is one `shouldSend` would leave alone; else undefined. Gives each raw its `digest`.
   */
  unchangedRaw(raws: readonly RawCustomer[]): (RawCounts | undefined)[] {
    if (!this.rules) return raws.map(() => undefined);
    // Each raw is given its digest here, with --full too: the look then drops the lines. Kept until
    // the customer was checked and hashed there, they were a fifth of what a --full push promoted.
    const digests = raws.map((raw) => (raw.digest = this.rawDigest(raw)));
    if (this.options.mode === 'full') return raws.map(() => undefined);
    return this.record.knownRaw(digests, this.run, this.oldest());
  }

  /** Whether to send: always with `--full`; with `--changed-only`, when new, changed, old or this run's. */
  shouldSend(customer: CustomerDigest): boolean {
    if (this.options.mode === 'full') return true;
    const known = this.record.customer(customer.id);
    if (!known) return true;
    if (!known.payload.equals(customer.payload)) return true;
    if (known.run === this.run || known.sentAt < this.oldest()) return true;
    // Unchanged, though the first look did not know these rows: their digest spares the next run the work.
    if (customer.raw && this.run !== CHECK_ONLY) this.learnRaw(customer);
    return false;
  }

  /** Sent before this, a customer is sent again (`--max-age`). */
  private oldest(): number {
    return this.reference - this.options.maxAgeDays * DAY_MS;
  }

  /** The keyed digest of raw rows, with what gives them meaning (see above). */
  private rawDigest(raw: RawCustomer): string {
    if (raw.digest !== undefined) return raw.digest;
    let digester = this.contexts.get(raw.context);
    if (digester === undefined) {
      digester = this.record.rawDigester(createHash('sha256').update(`${this.rules}\n${raw.context}`).digest('hex'));
      this.contexts.set(raw.context, digester);
    }
    return digester(raw.text);
  }

  private learnRaw(customer: CustomerDigest): void {
    this.rawLearnt.push(customer);
    if (this.rawLearnt.length >= RAW_BATCH) this.flushRaw();
  }

  /** Writes the raw digests learnt so far (the pass calls it at its end). */
  flushRaw(): void {
    const learnt = this.rawLearnt;
    this.rawLearnt = [];
    try {
      this.record.recordRaw(learnt);
    } catch {
      // A raw digest only spares the next run some work: one that cannot be kept (a full disk) changes nothing sent.
    }
  }

  /**
   * Acknowledged customers are remembered; refused or skipped ones forgotten (sent next time).
   * Written in batches (see SETTLE_BATCH): `flushSettled` writes what is pending.
   */
  settle(remember: readonly CustomerDigest[], forget: readonly CustomerDigest[], atMs: number): void {
    if (remember.length === 0 && forget.length === 0) return;
    if (this.settled.length === 0) this.settledSince = Date.now();
    this.settled.push({ remember, forget, atMs });
    this.settledCount += remember.length + forget.length;
    if (this.settledCount >= SETTLE_BATCH || Date.now() - this.settledSince >= SETTLE_MS) this.flushSettled();
  }

  /** Writes the settled customers not yet written, in the order they were settled (one transaction). */
  flushSettled(): void {
    const settled = this.settled;
    this.settled = [];
    this.settledCount = 0;
    this.record.settleAll(settled, this.run);
  }

  close(): void {
    this.record.close();
  }
}

/** The name `beginRunDelta` gives a run without a journal (a check-only run): it records nothing. */
export const CHECK_ONLY = 'check-only';
