import { ExitCode, LeadctlError } from '../../errors.js';
import type { BatchInput } from '../../ingest/lms/inputs.js';
import { DEFAULT_MAX_AGE_DAYS, type DeltaMode } from '../delta/customers.js';
import type { Chunk } from './chunker.js';
import { Journal, type JournalAck, journalKey, type OpenedJournal, type SkippedEntry } from './journal.js';

/**
 * The journal as a batch push keeps it: keyed on the inputs' digest and the target, with the
 * settings a resume must repeat, and checked chunk by chunk against what an earlier run cut.
 */

/** How the chunks were cut: straight from a sorted file, or from the staging. */
export type Mode = 'streamed' | 'staged';

export interface JournalOfRun {
  dir: string;
  target: { profile: string; baseUrl: string; clientId?: string };
  inputs: readonly BatchInput[];
  chunkSize: number;
  maxBytes: number;
  delta?: DeltaMode;
  maxAgeDays?: number;
  started: Date;
  warn(line: string): void;
}

/** Opens the journal of these inputs and target, continuing the one found when `resume`. */
export function openRunJournal(run: JournalOfRun, digest: string, mode: Mode, resume: boolean): OpenedJournal {
  const { target } = run;
  return Journal.open(
    run.dir,
    {
      key: journalKey(digest, target.profile, target.baseUrl, target.clientId),
      profile: target.profile,
      base_url: target.baseUrl,
      inputs: run.inputs.map((i) => `${i.role}:${i.path}`),
      settings: {
        maxCustomers: run.chunkSize,
        maxBytes: run.maxBytes,
        ...(run.delta
          ? {
              delta:
                run.delta === 'full' ? 'full' : `changed-only, --max-age ${run.maxAgeDays ?? DEFAULT_MAX_AGE_DAYS}`,
            }
          : {}),
      },
      mode,
    },
    resume,
    run.started,
    (line) => run.warn(line),
  );
}

/** The journal's line for an acknowledged chunk: its first and last customer and count identify it. */
export function ackEntry(
  chunk: Pick<Chunk, 'index' | 'customers'>,
  skipped: SkippedEntry[],
  unconfirmed: number[],
  at: Date,
): Omit<JournalAck, 'type'> {
  return {
    chunk: chunk.index,
    first: chunk.customers[0]!.customerId,
    last: chunk.customers[chunk.customers.length - 1]!.customerId,
    customers: chunk.customers.length,
    skipped,
    ...(unconfirmed.length ? { unconfirmed } : {}),
    at: at.toISOString(),
  };
}

/**
 * What an earlier run of these inputs acknowledged of `chunk`, if anything. A chunk cut otherwise
 * than then (other customers at that index) is a bug, not something to send around.
 */
export function earlierAck(journal: Journal, chunk: Pick<Chunk, 'index' | 'customers'>): JournalAck | undefined {
  const ack = journal.ack(chunk.index);
  if (!ack) return undefined;
  const entry = ackEntry(chunk, [], [], new Date(0));
  if (ack.first !== entry.first || ack.last !== entry.last || ack.customers !== entry.customers) {
    throw new LeadctlError(
      'journal_mismatch',
      ExitCode.UNEXPECTED,
      `the journal ${journal.path} does not match request ${chunk.index + 1} of these inputs`,
      { hint: 'rerun without --resume to send everything again (upserts are safe to repeat)' },
    );
  }
  return ack;
}
