import { describe, expect, it } from 'vitest';
import { accountFor, type LevelSummary } from '../../../../src/jobs/push/summary.js';

const level = (l: Partial<LevelSummary>): LevelSummary => ({
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
const base = {
  command: 'customers batch',
  status: 'completed_with_rejects' as const,
  validate_only: false,
  resumed: false,
  rows_read: 25,
  duplicates: 1,
  requests: { total: 1, sent: 1, acknowledged_before: 0, not_sent: 0 },
  retries: 0,
  elapsed_seconds: 0.2,
  rows_per_second: 125,
  rejects_file: 'r.csv',
  rejects: 13,
  journal: null,
  exit_code: 4,
};

describe('the accounting invariant of a push summary', () => {
  it('holds when every record read has one outcome, sent or not, and leaves the run as it was', () => {
    const summary = accountFor({
      ...base,
      customers: level({ read: 10, valid: 9, sent: 9, accepted: 8, unconfirmed: 0, rejected: 1, not_sent: 1 }),
      loans: level({ read: 12, valid: 10, sent: 10, accepted: 6, unconfirmed: 4, rejected: 2 }),
      payments: level({ read: 24, valid: 14, sent: 14, accepted: 14, rejected: 9, duplicates: 1 }),
    });
    expect(summary.accounting).toEqual({
      balanced: true,
      customers: { read: 10, accounted_for: 10 },
      loans: { read: 12, accounted_for: 12 },
      payments: { read: 24, accounted_for: 24 },
    });
    expect(summary).toMatchObject({ status: 'completed_with_rejects', exit_code: 4 });
  });

  it('counts valid records as their outcome when nothing is sent (validate-only)', () => {
    const summary = accountFor({
      ...base,
      validate_only: true,
      status: 'validated',
      exit_code: 0,
      customers: level({ read: 3, valid: 3 }),
      loans: level({ read: 4, valid: 3, rejected: 1 }),
      payments: level({}),
    });
    expect(summary.accounting.balanced).toBe(true);
    expect(summary.exit_code).toBe(0);
  });

  it('turns a success whose counts do not add up into an internal error (exit 1), naming the level', () => {
    const summary = accountFor({
      ...base,
      customers: level({ read: 10, accepted: 9 }),
      loans: level({}),
      payments: level({}),
    });
    expect(summary.accounting.balanced).toBe(false);
    expect(summary).toMatchObject({
      status: 'failed',
      exit_code: 1,
      error: { code: 'internal', message: expect.stringContaining('customers: 10 read, 9 accounted for') },
    });
  });

  it('leaves a run that already failed with its own exit code', () => {
    const summary = accountFor({
      ...base,
      status: 'service_unavailable',
      exit_code: 5,
      customers: level({ read: 10, accepted: 2 }),
      loans: level({}),
      payments: level({}),
    });
    expect(summary).toMatchObject({ status: 'service_unavailable', exit_code: 5, accounting: { balanced: false } });
  });
});
