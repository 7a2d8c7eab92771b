import { createHash } from 'node:crypto';
import { configDir } from '../../config/paths.js';
import { stateDir } from '../../config/state-dir.js';
import { CHECK_ONLY, CustomerDelta, DEFAULT_MAX_AGE_DAYS, type DeltaMode } from '../delta/customers.js';
import { type CustomerDigest, DeltaRecord, type RecordTarget } from '../delta/record.js';
import type { Chunk } from './chunker.js';
import type { JournalHeader } from './journal.js';
import type { PostResult } from './sender.js';

/**
 * The record of what a target acknowledged before, as a batch push uses it (`--changed-only`,
 * `--full`). A check-only run reads it (to count what would be sent) but never makes one.
 */
export function openRunDelta(
  env: Record<string, string | undefined>,
  target: RecordTarget,
  options: { mode: DeltaMode; maxAgeDays?: number; create: boolean; warn(line: string): void },
): CustomerDelta {
  const record =
    DeltaRecord.open(stateDir(env), configDir(env), target, options.create, (line) => options.warn(line)) ??
    DeltaRecord.empty();
  return new CustomerDelta(record, { mode: options.mode, maxAgeDays: options.maxAgeDays ?? DEFAULT_MAX_AGE_DAYS });
}

/** The run's name in the record, the same when it is resumed, and the moment it first began. */
export function beginRunDelta(delta: CustomerDelta, header: JournalHeader | undefined, started: Date): void {
  if (!header) {
    delta.begin(CHECK_ONLY, started.getTime());
    return;
  }
  delta.begin(
    createHash('sha256').update(`${header.key}\n${header.created}`).digest('hex').slice(0, 16),
    Date.parse(header.created),
  );
}

/**
 * What the record learns from an answer: it remembers what the service acknowledged (a 2xx, with
 * or without a per-record verdict) and forgets customers it skipped in part or refused, so that
 * those are sent again next time.
 */
export function deltaVerdicts(
  chunk: Pick<Chunk, 'customers'>,
  result: Pick<PostResult, 'skipped' | 'refused' | 'unconfirmed'>,
  refused: boolean,
): { remember: CustomerDigest[]; forget: CustomerDigest[] } {
  const rejected = new Set<number>();
  let untrusted = false;
  for (const entry of [...result.skipped, ...result.refused]) {
    // An answer naming a customer the request did not have gave no verdict: its customers are sent again.
    if (entry.unplaced) {
      untrusted = true;
      continue;
    }
    const m = /^customers\.(\d+)/.exec(entry.path);
    if (m) rejected.add(Number(m[1]));
  }
  if (untrusted) for (const i of result.unconfirmed) rejected.add(i);
  const remember: CustomerDigest[] = [];
  const forget: CustomerDigest[] = [];
  chunk.customers.forEach((c, i) => {
    if (c.digest) (refused || rejected.has(i) ? forget : remember).push(c.digest);
  });
  return { remember, forget };
}
