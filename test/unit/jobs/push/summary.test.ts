import { describe, expect, it } from 'vitest';
import { LeadctlError } from '../../../../src/errors.js';
import type { RejectReason } from '../../../../src/jobs/push/rejects.js';
import {
  accountFor,
  type LevelSummary,
  outcomeOf,
  type PushSummary,
  renderReasons,
  renderSummary,
  statusWords,
} from '../../../../src/jobs/push/summary.js';

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

  it('validate-only: the valid records neither unchanged nor sent count as their own outcome', () => {
    const at = (l: Partial<LevelSummary>) =>
      accountFor({
        ...base,
        validate_only: true,
        status: 'validated',
        exit_code: 0,
        customers: level(l),
        loans: level({}),
        payments: level({}),
      }).accounting.customers.accounted_for;
    expect(at({ read: 9, valid: 7, unchanged: 2, sent: 1, rejected: 2 })).toBe(2 + 2 + (7 - 2 - 1));
    expect(at({ read: 9, valid: 7, unchanged: 2, sent: 1, rejected: 2, not_sent: 1, duplicates: 3 })).toBe(
      2 + 3 + 2 + 1 + 4,
    );
    expect(at({ read: 4, valid: 4, accepted: 1, unconfirmed: 1 })).toBe(1 + 1 + 4);
    // A run that sends: only the outcomes count, the valid ones are among them.
    const sending = accountFor({
      ...base,
      customers: level({ read: 5, valid: 5, sent: 3, accepted: 1, unconfirmed: 1, unchanged: 1, not_sent: 1 }),
      loans: level({}),
      payments: level({}),
    });
    expect(sending.accounting.customers).toEqual({ read: 5, accounted_for: 4 });
  });

  it('a completed run (exit 0) whose counts do not add up fails too, naming every level off', () => {
    const summary = accountFor({
      ...base,
      status: 'completed',
      exit_code: 0,
      customers: level({}),
      loans: level({ read: 3, accepted: 2 }),
      payments: level({ read: 1, accepted: 2 }),
    });
    expect(summary).toMatchObject({
      status: 'failed',
      exit_code: 1,
      accounting: {
        balanced: false,
        customers: { read: 0, accounted_for: 0 },
        loans: { read: 3, accounted_for: 2 },
        payments: { read: 1, accounted_for: 2 },
      },
      error: {
        code: 'internal',
        message:
          'the counts of this run do not add up (loans: 3 read, 2 accounted for; payments: 1 read, 2 accounted for): a bug in leadctl',
        hint: 'keep the input and this summary, and report it; check the service for what arrived before rerunning',
      },
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

const stopped = (kind: 'auth' | 'service' | 'failed', exitCode: number, hint?: string) => ({
  kind,
  error: new LeadctlError(`${kind}_code`, exitCode, `${kind} message`, hint ? { hint } : {}),
});

describe('outcomeOf: status and exit code', () => {
  it('a signal: interrupted, 130 for SIGINT and 143 for SIGTERM, without an error', () => {
    expect(outcomeOf({ kind: 'signal', signal: 'SIGINT' }, false, true)).toEqual({
      status: 'interrupted',
      exitCode: 130,
    });
    expect(outcomeOf({ kind: 'signal', signal: 'SIGTERM' }, true, false)).toEqual({
      status: 'interrupted',
      exitCode: 143,
    });
  });

  it('refused credentials: authentication_failed, exit 3, with the error and its hint', () => {
    expect(outcomeOf(stopped('auth', 3, 'log in again'), false, false)).toEqual({
      status: 'authentication_failed',
      exitCode: 3,
      error: { code: 'auth_code', message: 'auth message', hint: 'log in again' },
    });
  });

  it('a service down: service_unavailable with its exit code; an error without a hint has none', () => {
    const outcome = outcomeOf(stopped('service', 5), false, true);
    expect(outcome).toEqual({
      status: 'service_unavailable',
      exitCode: 5,
      error: { code: 'service_code', message: 'service message' },
    });
    expect('hint' in outcome.error!).toBe(false);
  });

  it('another error: failed, with the error exit code', () => {
    expect(outcomeOf(stopped('failed', 2, 'fix it'), false, false)).toEqual({
      status: 'failed',
      exitCode: 2,
      error: { code: 'failed_code', message: 'failed message', hint: 'fix it' },
    });
  });

  it('a run to the end: completed or validated, with rejects exit 4', () => {
    expect(outcomeOf(undefined, false, false)).toEqual({ status: 'completed', exitCode: 0 });
    expect(outcomeOf(undefined, false, true)).toEqual({ status: 'completed_with_rejects', exitCode: 4 });
    expect(outcomeOf(undefined, true, false)).toEqual({ status: 'validated', exitCode: 0 });
    expect(outcomeOf(undefined, true, true)).toEqual({ status: 'validated_with_rejects', exitCode: 4 });
  });
});

type Words = Parameters<typeof statusWords>[0];
const words = (over: Partial<Words>): string =>
  statusWords({
    status: 'completed',
    journal: null,
    validate_only: false,
    customers: level({}),
    loans: level({}),
    payments: level({}),
    ...over,
  });

describe('statusWords', () => {
  it('says what each status means, with --resume only for a push that has a journal', () => {
    expect(words({ status: 'completed' })).toBe('completed: everything was accepted');
    expect(words({ status: 'completed_with_rejects' })).toBe('completed, with rejected records (see the rejects file)');
    expect(words({ status: 'validated', validate_only: true })).toBe(
      'validated: everything would be sent (nothing was sent)',
    );
    expect(words({ status: 'validated_with_rejects', validate_only: true })).toBe(
      'validated, with records that would be rejected (nothing was sent)',
    );
    expect(words({ status: 'interrupted', journal: 'j.ndjson' })).toBe(
      'interrupted: rerun with --resume to send the rest',
    );
    expect(words({ status: 'interrupted' })).toBe(
      'interrupted: the records not sent (or not answered) are counted below; run the same input again to send them (upserts are safe to repeat)',
    );
    expect(words({ status: 'service_unavailable', journal: 'j' })).toBe(
      'stopped: the service stayed unavailable; rerun with --resume to send the rest',
    );
    expect(words({ status: 'service_unavailable' })).toBe(
      'stopped: the service stayed unavailable; the records not sent (or not answered) are counted below; run the same input again later (upserts are safe to repeat)',
    );
    expect(words({ status: 'authentication_failed', journal: 'j' })).toBe(
      'stopped: authentication failed; fix the credentials and rerun with --resume',
    );
    expect(words({ status: 'authentication_failed' })).toBe(
      'stopped: authentication failed; fix the credentials and run the command again',
    );
    expect(words({ status: 'failed', journal: 'j' })).toBe(
      'failed: an error stopped the run (below); what the service acknowledged is counted here and kept in the journal',
    );
    expect(words({ status: 'failed' })).toBe(
      'failed: an error stopped the run (below); what the service acknowledged is counted here',
    );
    // A check-only run (no journal either) is not offered the words of a push without journal.
    expect(words({ status: 'failed', validate_only: true })).toBe(
      'failed: an error stopped the run (below); what the service acknowledged is counted here and kept in the journal',
    );
  });

  it('says when the service did not confirm every record', () => {
    expect(words({ status: 'completed', payments: level({ unconfirmed: 1 }) })).toBe(
      'completed: everything was sent; the service did not confirm every record (see unconfirmed)',
    );
    expect(words({ status: 'completed_with_rejects', loans: level({ unconfirmed: 2 }) })).toBe(
      'completed, with rejected records (see the rejects file) and records the service did not confirm (see unconfirmed)',
    );
    expect(words({ status: 'completed', customers: level({ unconfirmed: 3 }) })).toContain('did not confirm');
    expect(words({ status: 'interrupted', journal: 'j', loans: level({ unconfirmed: 2 }) })).toBe(
      'interrupted: rerun with --resume to send the rest',
    );
  });

  it('counts unchanged customers (--changed-only): nothing changed, or what changed', () => {
    expect(words({ status: 'completed', customers: level({ valid: 1, unchanged: 1 }) })).toBe(
      'completed: nothing changed, nothing was sent (1 customer unchanged since the last acknowledged send)',
    );
    expect(
      words({ status: 'validated', validate_only: true, customers: level({ valid: 1200, unchanged: 1200 }) }),
    ).toBe(
      'validated: nothing changed, nothing would be sent (1,200 customers unchanged since the last acknowledged send)',
    );
    expect(words({ status: 'completed', customers: level({ valid: 3500, unchanged: 2 }) })).toBe(
      'completed: 3,498 changed customer(s) sent; 2 customers unchanged since the last acknowledged send',
    );
    expect(words({ status: 'validated', validate_only: true, customers: level({ valid: 5, unchanged: 2 }) })).toBe(
      'validated: 3 changed customer(s) would be sent; 2 customers unchanged since the last acknowledged send (nothing was sent)',
    );
    // Not for a run with rejects or unconfirmed records, nor a stopped one.
    expect(words({ status: 'completed_with_rejects', customers: level({ valid: 5, unchanged: 2 }) })).toBe(
      'completed, with rejected records (see the rejects file)',
    );
    expect(words({ status: 'completed', customers: level({ valid: 5, unchanged: 2, unconfirmed: 1 }) })).toBe(
      'completed: everything was sent; the service did not confirm every record (see unconfirmed)',
    );
    expect(words({ status: 'interrupted', customers: level({ valid: 5, unchanged: 2 }) })).toBe(
      'interrupted: the records not sent (or not answered) are counted below; run the same input again to send them (upserts are safe to repeat)',
    );
  });
});

const reason = (n: number, over: Partial<RejectReason['example']> = {}): RejectReason => ({
  reason: `reason ${n}`,
  count: n,
  example: {
    source_file: '/data/in/loans.csv',
    row: n + 1,
    customer_id: `C${n}`,
    loan_id: null,
    payment_id: null,
    field: 'x',
    reason: `example ${n}`,
    ...over,
  },
});

describe('renderReasons', () => {
  it('shows each reason with its count, aligned, and its first record by file name, row and ids', () => {
    expect(
      renderReasons([
        reason(1234, { loan_id: 'L1', payment_id: 'P1' }),
        reason(5, { source_file: '', customer_id: null }),
        reason(7, { customer_id: '', loan_id: 'L7' }),
      ]),
    ).toEqual([
      'rejected, by reason (first of each):',
      '  1,234  reason 1234',
      '           e.g. loans.csv row 1235 (customer C1234, loan L1, payment P1): example 1234',
      '      5  reason 5',
      '           e.g. row 6: example 5',
      '      7  reason 7',
      '           e.g. loans.csv row 8 (loan L7): example 7',
    ]);
  });

  it('shows ten reasons, and counts the rest in one line', () => {
    const eleven = Array.from({ length: 11 }, (_, i) => reason(i + 1));
    const out = renderReasons(eleven);
    expect(out).toHaveLength(1 + 2 * 10 + 1);
    expect(out.at(-1)).toBe('  11  more, for 1 other reason (in the rejects file)');
    const twelve = renderReasons([...eleven, reason(1000)]);
    expect(twelve.at(-1)).toBe('  1,011  more, for 2 other reasons (in the rejects file)');
    expect(renderReasons(eleven.slice(0, 10)).at(-1)).toBe('        e.g. loans.csv row 11 (customer C10): example 10');
  });
});

const summaryOf = (over: Partial<PushSummary>): PushSummary =>
  accountFor({
    ...base,
    status: 'completed',
    exit_code: 0,
    rejects_file: null,
    rejects: 0,
    customers: level({}),
    loans: level({}),
    payments: level({}),
    ...over,
  });

describe('renderSummary', () => {
  it('draws the table, the totals and where the files are', () => {
    const text = renderSummary(
      summaryOf({
        command: 'customers batch',
        status: 'completed_with_rejects',
        exit_code: 4,
        rows_read: 12345,
        customers: level({ read: 1200, valid: 1100, sent: 1100, accepted: 1099, rejected: 101 }),
        loans: level({ read: 3, valid: 3, sent: 3, accepted: 2, rejected: 1 }),
        payments: level({ read: 2, valid: 1, sent: 1, accepted: 1, duplicates: 1 }),
        requests: { total: 1500, sent: 1200, acknowledged_before: 0, not_sent: 0 },
        retries: 1234,
        elapsed_seconds: 2,
        rows_per_second: 6172,
        rejects_file: 'rejects.csv',
        rejects: 102,
        journal: 'state/j.ndjson',
      }),
    );
    expect(text).toBe(
      [
        'customers batch: completed, with rejected records (see the rejects file)',
        '',
        '            read  valid   sent  accepted  rejected  duplicates  not sent',
        'customers  1,200  1,100  1,100     1,099       101           0         0',
        'loans          3      3      3         2         1           0         0',
        'payments       2      1      1         1         0           1         0',
        '',
        'rows read      12,345',
        'requests       1,200 sent (of 1,500)',
        'retries        1,234',
        'elapsed        2.0 s (6,172 rows/s)',
        'rejects file   rejects.csv (102 lines)',
        '',
      ].join('\n'),
    );
  });

  it('a check-only run: what would be sent, and the journal of a run that stopped', () => {
    const text = renderSummary(
      summaryOf({
        validate_only: true,
        status: 'validated',
        customers: level({ read: 4, valid: 4, unchanged: 1 }),
        requests: { total: 1234, sent: 0, acknowledged_before: 0, not_sent: 0 },
        journal: 'state/j.ndjson',
      }),
    );
    const lines = text.split('\n');
    expect(lines[2]).toBe('           read  valid  unchanged  would send  accepted  rejected  duplicates  not sent');
    expect(lines[3]).toBe('customers     4      4          1           3         0         0           0         0');
    expect(text).toContain('\nrequests       1,234 would be sent\n');
    expect(text).toContain('\njournal        state/j.ndjson\n');
  });

  it('shows the unconfirmed column only when there are some, and what earlier runs and this one left', () => {
    const text = renderSummary(
      summaryOf({
        status: 'interrupted',
        exit_code: 130,
        customers: level({ read: 5, valid: 5, sent: 3, accepted: 1, unconfirmed: 2, not_sent: 2 }),
        requests: { total: 9000, sent: 1000, acknowledged_before: 3000, not_sent: 5000 },
        journal: 'state/j.ndjson',
        error: { code: 'x', message: 'the service stayed down' },
        notes: ['first note', 'second note'],
      }),
    );
    const lines = text.split('\n');
    expect(lines[2]).toBe('           read  valid  sent  accepted  rejected  duplicates  unconfirmed  not sent');
    expect(lines[3]).toBe('customers     5      5     3         1         0           0            2         2');
    expect(text).toContain(
      '\nrequests       1,000 sent, 3,000 acknowledged in an earlier run, 5,000 not sent (of 9,000)\n',
    );
    expect(text).toContain('\njournal        state/j.ndjson\n');
    expect(text).toContain('\nerror          the service stayed down\n');
    expect(text.endsWith('note           first note\nnote           second note\n')).toBe(true);
    expect(text).not.toContain('rejects file');
  });

  it('no journal line for a run that completed', () => {
    expect(renderSummary(summaryOf({ journal: 'state/j.ndjson' }))).not.toContain('journal');
    expect(
      renderSummary(summaryOf({ status: 'completed_with_rejects', exit_code: 4, journal: 'state/j.ndjson' })),
    ).not.toContain('journal');
    expect(renderSummary(summaryOf({ status: 'failed', exit_code: 2, journal: 'j.ndjson' }))).toContain(
      '\njournal        j.ndjson\n',
    );
  });

  it('one rejects line in the singular; with reasons, the reasons first', () => {
    const one = renderSummary(summaryOf({ rejects_file: 'r.csv', rejects: 1 }));
    expect(one).toContain('\nrejects file   r.csv (1 line)\n');
    const withReasons = renderSummary(
      summaryOf({ rejects_file: 'r.csv', rejects: 3, reasons: [{ ...reason(3), reason: 'too big' }] }),
    );
    expect(withReasons).toContain(
      '\nrejected, by reason (first of each):\n  3  too big\n       e.g. loans.csv row 4 (customer C3): example 3\n\nrejects file   r.csv (3 lines: every record, row by row)\n',
    );
    expect(renderSummary(summaryOf({ reasons: [] }))).not.toContain('rejected, by reason');
  });

  it('the delta line: --full, or --changed-only with its --max-age and what was known from raw rows', () => {
    const line = (delta: PushSummary['delta']) =>
      renderSummary(summaryOf({ delta }))
        .split('\n')
        .find((l) => l.startsWith('delta'));
    expect(line({ mode: 'full', max_age_days: 30, record: null, unchanged_raw: 0 })).toBe(
      'delta          everything sent; the record of what was sent is refreshed',
    );
    expect(line({ mode: 'changed-only', max_age_days: 1, record: null, unchanged_raw: 1 })).toBe(
      'delta          only what changed since the last acknowledged send, or was last sent over 1 day ago (1 unchanged customer known from their raw rows, not converted)',
    );
    expect(line({ mode: 'changed-only', max_age_days: 30, record: null, unchanged_raw: 0 })).toBe(
      'delta          only what changed since the last acknowledged send, or was last sent over 30 days ago',
    );
    expect(line({ mode: 'full', max_age_days: 30, record: null, unchanged_raw: 2500 })).toBe(
      'delta          everything sent; the record of what was sent is refreshed (2,500 unchanged customers known from their raw rows, not converted)',
    );
    expect(line(undefined)).toBeUndefined();
  });

  it('--changed-only shows the unchanged column even when nothing is unchanged', () => {
    const text = renderSummary(
      summaryOf({ delta: { mode: 'changed-only', max_age_days: 30, record: null, unchanged_raw: 0 } }),
    );
    expect(text.split('\n')[2]).toContain('unchanged');
    const full = renderSummary(
      summaryOf({ delta: { mode: 'full', max_age_days: 30, record: null, unchanged_raw: 0 } }),
    );
    expect(full.split('\n')[2]).not.toContain('unchanged');
  });
});
