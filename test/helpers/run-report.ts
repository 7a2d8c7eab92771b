import { join } from 'node:path';
import type { ApiEvent } from '../../src/api/client.js';
import { RejectsWriter } from '../../src/jobs/push/rejects.js';
import { accountFor, type LevelSummary, type PushSummary } from '../../src/jobs/push/summary.js';
import type { RunContext } from '../../src/jobs/run-facts.js';
import { RunRecorder } from '../../src/jobs/run-record.js';

/** A clock the test moves by hand. */
export function manualClock(start = Date.UTC(2026, 10, 26, 2, 0, 0)) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

export const level = (l: Partial<LevelSummary>): LevelSummary => ({
  read: 0,
  valid: 0,
  sent: 0,
  accepted: 0,
  rejected: 0,
  duplicates: 0,
  unconfirmed: 0,
  unchanged: 0,
  not_sent: 0,
  ...l,
});

export function runContext(recorder: RunRecorder, over: Partial<RunContext> = {}): RunContext {
  return {
    command: 'customers batch',
    target: { profile: 'nightly', baseUrl: 'https://api.example.com', production: true },
    inputs: [],
    cwd: process.cwd(),
    recorder,
    hashInputs: false,
    ...over,
  };
}

const response = (status: number, durationMs: number, bytes: number, attempt = 1): ApiEvent => ({
  type: 'response',
  method: 'POST',
  path: '/api/v1/loan-performance/batches/customers',
  status,
  durationMs,
  attempt,
  bytes,
});

/**
 * A night's push of a million customers (one row each) with 10,000 rejects over 50 kinds and more,
 * written to a rejects file like the push's, as the recorder hears it: 1,000 requests over 40
 * minutes, some answered 503 and retried. Returns the summary, the recorder and the rejects path.
 */
export function millionRowRun(dir: string): { summary: PushSummary; recorder: RunRecorder; rejectsFile: string } {
  const clock = manualClock();
  const recorder = new RunRecorder(clock.now);
  const customers = 1_000_000;
  const rejected = 10_000;
  const kinds = 60;
  const rejectsFile = join(dir, 'rejects.csv');
  // The push's own writer: the same file and the same grouping by reason as a real run's.
  const writer = new RejectsWriter(rejectsFile, dir, ['export.csv'], true);
  for (let i = 0; i < rejected; i++) {
    // Uneven kinds, as in life: a few frequent ones and a long tail (more kinds than the summary tells apart).
    const kind = i < 5000 ? 0 : i < 8000 ? 1 + (i % 3) : 4 + (i % (kinds - 4));
    const field = `field_${String.fromCharCode(97 + (kind % 26))}${String.fromCharCode(97 + Math.floor(kind / 26))}`;
    writer.add({
      level: 'customer',
      src: 0,
      row: 2 + i * 97,
      customerId: `C${100000 + i}`,
      loanId: `LN-${i}`,
      field,
      reason: `${field}: "${'x'.repeat(20)}${i}" is not valid (account 123456789012 <b>bold</b>)`,
    });
  }
  writer.close();
  const reasons = writer.reasons();

  for (let i = 0; i < 1000; i++) {
    clock.advance(2_400);
    if (i % 50 === 7) {
      recorder.api(response(503, 800, 900_000));
      recorder.api({ type: 'retry', method: 'POST', path: '/x', attempt: 1, delayMs: 500, reason: 'HTTP 503' });
      clock.advance(500);
    }
    recorder.api(response(200, 300 + (i % 97) * 10, 1_000_000, i % 50 === 7 ? 2 : 1));
    recorder.push({
      type: 'request',
      index: i,
      outcome: 'accepted',
      customers: 990,
      loans: 990,
      payments: 0,
      skipped: 10,
      unconfirmed: 0,
      doneCustomers: (i + 1) * 1000,
      totalCustomers: customers,
      requestsDone: i + 1,
    });
  }
  const summary = accountFor({
    command: 'customers batch',
    status: 'completed_with_rejects',
    validate_only: false,
    resumed: false,
    rows_read: customers,
    customers: level({
      read: customers,
      valid: customers,
      sent: customers,
      accepted: customers - rejected,
      rejected,
    }),
    loans: level({ read: customers, valid: customers, sent: customers, accepted: customers }),
    payments: level({}),
    duplicates: 0,
    requests: { total: 1000, sent: 1000, acknowledged_before: 0, not_sent: 0 },
    retries: 20,
    elapsed_seconds: 2900,
    rows_per_second: 345,
    rejects_file: rejectsFile,
    rejects: rejected,
    reasons,
    journal: join(dir, 'journal.ndjson'),
    exit_code: 4,
  });
  return { summary, recorder, rejectsFile };
}
