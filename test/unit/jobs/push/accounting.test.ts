import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExitCode, ServiceError } from '../../../../src/errors.js';
import type { CustomerGroup } from '../../../../src/ingest/lms/groups.js';
import {
  countChunk,
  countCustomers,
  countGroup,
  RunAccount,
  type RunFacts,
  Tally,
} from '../../../../src/jobs/push/accounting.js';
import type { Chunk } from '../../../../src/jobs/push/chunker.js';
import type { SkippedEntry } from '../../../../src/jobs/push/journal.js';
import type { RejectsWriter } from '../../../../src/jobs/push/rejects.js';
import type { Reject, ValidCustomer } from '../../../../src/jobs/push/validate.js';

/** A rejects file in memory: what the account writes to it, counted. */
function memoryRejects() {
  const lines: Reject[] = [];
  const writer = {
    path: 'rejects.csv',
    created: false,
    failure: undefined,
    get count() {
      return lines.length;
    },
    add(r: Reject) {
      lines.push(r);
    },
    close() {},
    reasons: () => [],
  };
  return { lines, make: () => writer as unknown as RejectsWriter };
}

const origin = { src: 0, row: 2 };

function customer(id: number, payments: readonly number[]): ValidCustomer {
  return {
    customerId: `C${id}`,
    json: JSON.stringify({
      customer_id: `C${id}`,
      loans: payments.map((p, l) => ({
        loan_id: `L${id}-${l}`,
        payments: Array.from({ length: p }, (_, k) => ({ payment_id: `P${id}-${l}-${k}` })),
      })),
    }),
    loans: payments.length,
    payments: payments.reduce((n, p) => n + p, 0),
    trace: {
      ...origin,
      customerId: `C${id}`,
      loans: payments.map((p, l) => ({
        loanId: `L${id}-${l}`,
        origin,
        payments: { src: origin.src, rows: Array.from({ length: p }, () => origin.row) },
      })),
    },
  };
}

const chunkOf = (index: number, customers: ValidCustomer[]): Chunk => ({
  index,
  customers,
  bytes: 2,
  release: () => undefined,
});

const facts = (validateOnly = false): RunFacts => ({
  stop: undefined,
  validateOnly,
  resumed: false,
  notes: [],
  splits: 0,
  retries: 0,
  elapsedSeconds: 1,
  journal: null,
});

describe('counting helpers', () => {
  it('count a chunk, some of its customers, and a group as read', () => {
    const chunk = chunkOf(0, [customer(1, [2, 0]), customer(2, [1])]);
    expect(countChunk(chunk)).toEqual({ customers: 2, loans: 3, payments: 3 });
    expect(countCustomers(chunk, [1, 7])).toEqual({ customers: 1, loans: 1, payments: 1 });
    const group = {
      customerId: 'C1',
      origin,
      errors: [],
      loans: [{ payments: [{}, {}] }, { payments: [] }],
      orphans: [{ loanId: 'X', payments: [{}] }],
      duplicates: [{ level: 'payment' }, { level: 'loan' }],
    } as unknown as CustomerGroup;
    expect(countGroup(group)).toEqual({ customers: 1, loans: 3, payments: 4 });
  });

  it('Tally.add adds and takes away at every level', () => {
    const t = new Tally();
    Tally.add(t.read, { customers: 2, loans: 3, payments: 4 });
    Tally.add(t.read, { customers: 1, loans: 1, payments: 1 }, -1);
    expect(t.level('loans')).toMatchObject({ read: 2, valid: 0, not_sent: 0 });
  });
});

describe('RunAccount', () => {
  it('a new account is a reset: every count at zero, a rejects writer of its own', () => {
    const rejects = memoryRejects();
    const account = new RunAccount(rejects.make);
    account.checked({
      rejects: [],
      seen: { customers: 1, loans: 1, payments: 1 },
      rejected: { customers: 0, loans: 0, payments: 0 },
      duplicates: { customers: 0, loans: 0, payments: 0 },
      valid: customer(1, [1]),
    });
    account.made();
    account.sources.push('a.csv');
    const fresh = new RunAccount(memoryRejects().make);
    const s = fresh.summary(facts());
    expect(s.customers.read + s.rows_read + s.requests.total + fresh.sources.length).toBe(0);
    expect(account.summary(facts()).customers.read).toBe(1);
  });

  it('settles an answer: skipped and refused are rejected (with rejects lines), unconfirmed kept apart', () => {
    const rejects = memoryRejects();
    const account = new RunAccount(rejects.make);
    const customers = [customer(0, [1]), customer(1, [2, 1]), customer(2, [1]), customer(3, [0])];
    for (const c of customers)
      account.checked({
        rejects: [],
        seen: { customers: 1, loans: c.loans, payments: c.payments },
        rejected: { customers: 0, loans: 0, payments: 0 },
        duplicates: { customers: 0, loans: 0, payments: 0 },
        valid: c,
      });
    account.made();
    account.answered();
    const event = account.settle(
      chunkOf(0, customers),
      {
        skipped: [
          { path: 'customers.1.loans.0', id: 'L1-0', errors: ['loan_id: taken'] },
          { path: 'customers.1.loans.0.payments.1', id: null, errors: ['inside the loan above'] },
        ],
        refused: [],
        unconfirmed: [2],
      },
      'unconfirmed',
    );
    expect(event).toMatchObject({
      type: 'request',
      index: 0,
      outcome: 'unconfirmed',
      customers: 4,
      skipped: 2,
      unconfirmed: 1,
      doneCustomers: 4,
      requestsDone: 1,
    });
    const s = account.summary(facts());
    expect(s.loans).toMatchObject({ read: 5, sent: 5, accepted: 3, rejected: 1, unconfirmed: 1 });
    expect(s.payments).toMatchObject({ read: 5, sent: 5, accepted: 2, rejected: 2, unconfirmed: 1 });
    expect(s.accounting.balanced).toBe(true);
    expect(rejects.lines.length).toBeGreaterThan(0);
  });

  it('the counts of any run add up at every level (property, seeded)', () => {
    const payments = fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 3 });
    const group = fc.record({
      payments,
      fate: fc.constantFrom('rejected', 'unchanged', 'sent', 'sent', 'sent'),
      extraRejected: fc.record({ loans: fc.nat({ max: 2 }), payments: fc.nat({ max: 2 }) }),
      duplicates: fc.record({ loans: fc.nat({ max: 1 }), payments: fc.nat({ max: 2 }) }),
      // What the service does with the customer if it is sent.
      answer: fc.constantFrom('ok', 'skip-customer', 'skip-loan', 'skip-payment', 'unconfirmed'),
    });
    const run = fc.record({
      groups: fc.array(group, { maxLength: 40 }),
      chunkSize: fc.integer({ min: 1, max: 5 }),
      chunkFates: fc.array(fc.constantFrom('answered', 'answered', 'refused', 'pending', 'from-journal'), {
        minLength: 40,
        maxLength: 40,
      }),
      unread: fc.array(payments, { maxLength: 5 }),
    });
    fc.assert(
      fc.property(run, ({ groups, chunkSize, chunkFates, unread }) => {
        const account = new RunAccount(memoryRejects().make);
        const toSend: { c: ValidCustomer; answer: string }[] = [];
        groups.forEach((g, id) => {
          const c = customer(id, g.payments);
          const rejectedCustomer = g.fate === 'rejected';
          account.checked({
            rejects: [],
            seen: {
              customers: 1,
              loans: c.loans + g.extraRejected.loans + g.duplicates.loans,
              payments: c.payments + g.extraRejected.payments + g.duplicates.payments,
            },
            rejected: {
              customers: rejectedCustomer ? 1 : 0,
              loans: g.extraRejected.loans + (rejectedCustomer ? c.loans : 0),
              payments: g.extraRejected.payments + (rejectedCustomer ? c.payments : 0),
            },
            duplicates: { customers: 0, ...g.duplicates },
            ...(rejectedCustomer ? {} : { valid: c }),
          });
          if (g.fate === 'unchanged') account.unchanged(c);
          if (g.fate === 'sent') toSend.push({ c, answer: g.answer });
        });
        for (let i = 0; i * chunkSize < toSend.length; i++) {
          const part = toSend.slice(i * chunkSize, (i + 1) * chunkSize);
          const chunk = chunkOf(
            i,
            part.map((p) => p.c),
          );
          account.made();
          const fate = chunkFates[i % chunkFates.length];
          if (fate === 'pending') {
            account.pending(chunk);
            continue;
          }
          const skipped: SkippedEntry[] = [];
          const unconfirmed: number[] = [];
          part.forEach((p, k) => {
            if (p.answer === 'skip-customer') skipped.push({ path: `customers.${k}`, id: null, errors: ['no'] });
            if (p.answer === 'skip-loan') skipped.push({ path: `customers.${k}.loans.0`, id: null, errors: ['no'] });
            if (p.answer === 'skip-payment' && p.c.trace.loans[0]!.payments.rows.length)
              skipped.push({ path: `customers.${k}.loans.0.payments.0`, id: null, errors: ['no'] });
            if (p.answer === 'unconfirmed') unconfirmed.push(k);
          });
          if (fate === 'refused') {
            account.answered();
            const refused = part.map((p, k) => ({ path: `customers.${k}`, id: p.c.customerId, errors: ['refused'] }));
            account.settle(chunk, { skipped: [], refused, unconfirmed: [] }, 'refused');
          } else if (fate === 'from-journal') {
            account.acknowledgedBefore();
            account.settle(chunk, { skipped, refused: [], unconfirmed }, 'from-journal');
          } else {
            account.answered();
            account.settle(chunk, { skipped, refused: [], unconfirmed }, 'accepted');
          }
        }
        unread.forEach((p, k) =>
          account.readNotSent({
            customerId: `U${k}`,
            origin,
            errors: [],
            loans: p.map((n) => ({ payments: Array.from({ length: n }, () => ({})) })),
            orphans: [],
            duplicates: [],
          } as unknown as CustomerGroup),
        );
        const s = account.summary(facts());
        expect(s.accounting.balanced).toBe(true);
        expect(s.exit_code).not.toBe(ExitCode.UNEXPECTED);
        for (const level of ['customers', 'loans', 'payments'] as const) {
          expect(s[level].accepted).toBeGreaterThanOrEqual(0);
          expect(s.accounting[level].read).toBe(s.accounting[level].accounted_for);
        }
        const r = s.requests;
        expect(r.sent + r.acknowledged_before + r.not_sent).toBe(r.total);
      }),
      { seed: 2126, numRuns: 400 },
    );
  });

  it('the summary refuses counts that do not add up: exit 1, never a success', () => {
    const account = new RunAccount(memoryRejects().make);
    // A customer read, then lost: neither sent nor counted as not sent.
    account.checked({
      rejects: [],
      seen: { customers: 1, loans: 1, payments: 0 },
      rejected: { customers: 0, loans: 0, payments: 0 },
      duplicates: { customers: 0, loans: 0, payments: 0 },
      valid: customer(1, [0]),
    });
    const s = account.summary(facts());
    expect(s.accounting.balanced).toBe(false);
    expect(s.exit_code).toBe(ExitCode.UNEXPECTED);
  });
});

describe('RunAccount, each count and the summary around them', () => {
  const check = (account: RunAccount, c: ValidCustomer) =>
    account.checked({
      rejects: [],
      seen: { customers: 1, loans: c.loans, payments: c.payments },
      rejected: { customers: 0, loans: 0, payments: 0 },
      duplicates: { customers: 0, loans: 0, payments: 0 },
      valid: c,
    });

  /** An account whose one customer (2 loans, 3 payments) was sent and accepted: balanced. */
  function sentOne(rejects = memoryRejects()) {
    const account = new RunAccount(rejects.make);
    const c = customer(0, [1, 2]);
    check(account, c);
    account.made();
    account.answered();
    account.settle(chunkOf(0, [c]), { skipped: [], refused: [], unconfirmed: [] }, 'accepted');
    return account;
  }

  it('a row that could not be made a record: read and rejected at its level, and written to the rejects', () => {
    const rejects = memoryRejects();
    const account = new RunAccount(rejects.make);
    account.readProblem({ level: 'loan', src: 1, row: 4, reason: 'bad', loanId: 'L' } as never);
    account.readProblem({ level: 'payment', src: 1, row: 5, reason: 'bad', customerId: 'C9' } as never);
    expect(account.tally.read).toEqual({ customers: 0, loans: 1, payments: 1 });
    expect(account.tally.rejected).toEqual({ customers: 0, loans: 1, payments: 1 });
    expect(rejects.lines.map((l) => [l.level, l.row, l.customerId])).toEqual([
      ['loan', 4, ''],
      ['payment', 5, 'C9'],
    ]);
  });

  it('checked: a group with refused and superseded records counts them, and writes its rejects', () => {
    const rejects = memoryRejects();
    const account = new RunAccount(rejects.make);
    const reject: Reject = { level: 'payment', src: 0, row: 3, customerId: 'C0', reason: 'x' };
    account.checked({
      rejects: [reject, reject],
      seen: { customers: 1, loans: 2, payments: 5 },
      rejected: { customers: 0, loans: 1, payments: 1 },
      duplicates: { customers: 0, loans: 0, payments: 1 },
    });
    expect(account.tally.read).toEqual({ customers: 1, loans: 2, payments: 5 });
    expect(account.tally.rejected).toEqual({ customers: 0, loans: 1, payments: 1 });
    expect(account.tally.duplicates).toEqual({ customers: 0, loans: 0, payments: 1 });
    expect(account.tally.valid).toEqual({ customers: 0, loans: 0, payments: 0 });
    expect(rejects.lines).toHaveLength(2);
  });

  it('unchanged, from its check or from its raw rows: done, and counted at every level', () => {
    const account = new RunAccount(memoryRejects().make);
    const c = customer(0, [2]);
    check(account, c);
    account.unchanged(c);
    account.unchangedAsRead({ loans: 3, payments: 4 });
    expect(account.tally.unchanged).toEqual({ customers: 2, loans: 4, payments: 6 });
    expect(account.tally.read).toEqual({ customers: 2, loans: 4, payments: 6 });
    expect(account.tally.valid).toEqual({ customers: 2, loans: 4, payments: 6 });
    expect(account.unchangedRaw).toBe(1);
    expect(account.doneCustomers).toBe(2);
    expect(account.summary(facts()).accounting.balanced).toBe(true);
  });

  it('read after the stop: an unchanged group counts as one customer with its own counts', () => {
    const account = new RunAccount(memoryRejects().make);
    account.readNotSent({ unchanged: { loans: 2, payments: 7 } } as unknown as CustomerGroup);
    expect(account.tally.notSent).toEqual({ customers: 1, loans: 2, payments: 7 });
    expect(account.tally.read).toEqual({ customers: 1, loans: 2, payments: 7 });
  });

  it('a check-only run: each chunk is an event "would send", numbered by the requests made', () => {
    const account = new RunAccount(memoryRejects().make);
    account.totalCustomers = 5;
    account.made();
    account.made();
    const event = account.wouldSend(chunkOf(1, [customer(0, [1]), customer(1, [0, 3])]));
    expect(event).toEqual({
      type: 'request',
      index: 1,
      outcome: 'would-send',
      customers: 2,
      loans: 3,
      payments: 4,
      skipped: 0,
      unconfirmed: 0,
      doneCustomers: 2,
      totalCustomers: 5,
      requestsDone: 2,
    });
    expect(account.tally.sent).toEqual({ customers: 0, loans: 0, payments: 0 });
  });

  it('a request acknowledged before, and a refused one: numbered by answers and acknowledgements, the refusal kept', () => {
    const account = new RunAccount(memoryRejects().make);
    const a = customer(0, [1]);
    const b = customer(1, [1]);
    check(account, a);
    check(account, b);
    account.made();
    account.acknowledgedBefore();
    const before = account.settle(chunkOf(0, [a]), { skipped: [], refused: [], unconfirmed: [] }, 'from-journal');
    expect(before).not.toHaveProperty('refusal');
    expect(before.requestsDone).toBe(1);
    account.made();
    account.answered();
    const refusal = { status: 422, reason: 'unprocessable' };
    const refused = account.settle(
      chunkOf(1, [b]),
      { skipped: [], refused: [{ path: 'customers.0', id: 'C1', errors: ['no'] }], unconfirmed: [], refusal },
      'refused',
    );
    expect(refused).toMatchObject({ outcome: 'refused', refusal, requestsDone: 2, skipped: 0, doneCustomers: 2 });
    const s = account.summary(facts());
    expect(s.customers).toMatchObject({ sent: 2, accepted: 1, rejected: 1 });
    expect(s.requests).toEqual({ total: 2, sent: 1, acknowledged_before: 1, not_sent: 0 });
    expect(s.exit_code).toBe(ExitCode.REJECTED);
    expect(s.status).toBe('completed_with_rejects');
  });

  it('a request left for --resume counts as not sent, and the summary says how many', () => {
    const account = new RunAccount(memoryRejects().make);
    const c = customer(0, [1, 1]);
    check(account, c);
    account.made();
    account.pending(chunkOf(0, [c]));
    const s = account.summary(facts());
    expect(s.customers.not_sent).toBe(1);
    expect(s.payments.not_sent).toBe(2);
    expect(s.requests).toEqual({ total: 1, sent: 0, acknowledged_before: 0, not_sent: 1 });
    expect(s.accounting.balanced).toBe(true);
  });

  it('the summary: times rounded, the rate, duplicates added up, no notes, no delta, no error', () => {
    const account = sentOne();
    account.rowsRead = 1000;
    account.checked({
      rejects: [],
      seen: { customers: 0, loans: 1, payments: 2 },
      rejected: { customers: 0, loans: 0, payments: 0 },
      duplicates: { customers: 0, loans: 1, payments: 2 },
    });
    const s = account.summary({ ...facts(), elapsedSeconds: 3.26, retries: 2, resumed: true, journal: '/j' });
    expect(s).toMatchObject({
      command: 'customers batch',
      status: 'completed',
      exit_code: 0,
      validate_only: false,
      resumed: true,
      rows_read: 1000,
      retries: 2,
      elapsed_seconds: 3.3,
      rows_per_second: 307,
      duplicates: 3,
      rejects_file: null,
      rejects: 0,
      reasons: [],
      journal: '/j',
    });
    expect(s).not.toHaveProperty('notes');
    expect(s).not.toHaveProperty('delta');
    expect(s).not.toHaveProperty('error');
    expect(account.summary({ ...facts(), elapsedSeconds: 0 }).rows_per_second).toBe(0);
    expect(account.summary({ ...facts(), elapsedSeconds: 0.04 }).elapsed_seconds).toBe(0);
  });

  it('the summary: notes of the run, then of splits, of an unread rest and of a rejects file that failed', () => {
    const rejects = memoryRejects();
    const writer = rejects.make() as unknown as { failure: unknown; path: string };
    const account = sentOne(rejects);
    account.inputFullyRead = false;
    writer.failure = new Error('disk full');
    const notes = ['first'];
    const s = account.summary({ ...facts(), notes, splits: 2 });
    expect(s.notes).toEqual([
      'first',
      'the service refused 2 request(s) as too large (HTTP 413); each was split and sent in halves (lower --max-bytes to avoid this)',
      'the rest of the export was not read: rerun with --resume to continue',
      'the rejects file rejects.csv could not be written and was removed: its 0 line(s) are counted here and written again by the rerun',
    ]);
    // The run's own notes are not changed.
    expect(notes).toEqual(['first']);
  });

  it('the summary: the rejects file when it exists, the delta and the stop', () => {
    const rejects = memoryRejects();
    const writer = rejects.make() as unknown as { created: boolean };
    const account = sentOne(rejects);
    writer.created = true;
    const delta = { mode: 'changed-only' as const, max_age_days: 30, record: '/r', unchanged_raw: 0 };
    const error = new ServiceError('service unavailable after 6 attempts', 503);
    const s = account.summary({ ...facts(), delta, stop: { kind: 'service', error } });
    expect(s.rejects_file).toBe('rejects.csv');
    expect(s.delta).toEqual(delta);
    expect(s.status).toBe('service_unavailable');
    expect(s.exit_code).toBe(error.exitCode);
    expect(s.error).toMatchObject({ message: 'service unavailable after 6 attempts' });
  });

  it('a check-only summary with nothing rejected is "validated", exit 0', () => {
    const account = new RunAccount(memoryRejects().make);
    check(account, customer(0, [1]));
    const s = account.summary(facts(true));
    expect(s).toMatchObject({ status: 'validated', exit_code: 0, validate_only: true });
    expect(s.accounting.balanced).toBe(true);
  });
});
