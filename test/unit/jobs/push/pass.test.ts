import { describe, expect, it } from 'vitest';
import { LeadctlError } from '../../../../src/errors.js';
import type { CustomerGroup } from '../../../../src/ingest/lms/groups.js';
import type { CustomerDelta } from '../../../../src/jobs/delta/customers.js';
import { RunAccount } from '../../../../src/jobs/push/accounting.js';
import type { Chunk } from '../../../../src/jobs/push/chunker.js';
import { checkAndChunk, type PassOptions } from '../../../../src/jobs/push/pass.js';
import { ReadingStopped } from '../../../../src/jobs/push/reading.js';
import type { RejectsWriter } from '../../../../src/jobs/push/rejects.js';
import type { StopReason } from '../../../../src/jobs/push/summary.js';
import type { Reject } from '../../../../src/jobs/push/validate.js';

const loanFields = {
  loan_id: 'L-1',
  lead_id: 42,
  application_type: 'New',
  loan_type: 'Installment',
  loan_status: 'Originated',
  loan_amount: 50000,
  funded_amount: 49000,
  first_payment_date: '2026-02-15',
  applied_at: '2026-01-05T14:30:00Z',
  management_system_id: 3,
  esigned_at: '2026-01-05T15:00:00Z',
  withdrawn_at: '2026-01-06T15:00:00Z',
  originated_at: '2026-01-07T15:00:00Z',
  is_lead_loan: true,
};

/** A customer with one valid loan and `payments` payments (already checked, as staged). */
function valid(id: string, payments = 1): CustomerGroup {
  return {
    customerId: id,
    origin: { src: 0, row: 2 },
    errors: [],
    loans: [
      {
        src: 0,
        row: 2,
        loanId: `${id}-L`,
        fields: { ...loanFields, loan_id: `${id}-L` },
        errors: [],
        payments: Array.from({ length: payments }, (_, k) => ({
          src: 1,
          row: 2 + k,
          paymentId: `${id}-P${k}`,
          fields: {},
          errors: [],
          json: `{"payment_id":"${id}-P${k}"}`,
        })),
      },
    ],
    orphans: [],
    duplicates: [],
  };
}

/** A customer with a loan the check refuses (no fields), and a valid one. */
function partly(id: string): CustomerGroup {
  const g = valid(id);
  g.loans.push({ src: 0, row: 3, loanId: `${id}-BAD`, fields: {}, errors: [], payments: [] });
  return g;
}

/** A customer with no loan at all: refused by the check. */
const invalid = (id: string): CustomerGroup => ({ ...valid(id), loans: [] });

function memoryRejects() {
  const lines: Reject[] = [];
  const writer = {
    get count() {
      return lines.length;
    },
    add: (r: Reject) => lines.push(r),
  };
  return { lines, make: () => writer as unknown as RejectsWriter };
}

interface Run {
  account: RunAccount;
  sent: string[][];
  log: string[];
  rejects: Reject[];
  options: PassOptions;
}

function run(
  over: Partial<PassOptions> & { maxCustomers?: number; stopAfter?: number; stopWith?: StopReason } = {},
): Run {
  const rejects = memoryRejects();
  const account = new RunAccount(rejects.make);
  const sent: string[][] = [];
  const log: string[] = [];
  let dispatched = 0;
  const options: PassOptions = {
    account,
    limits: { maxCustomers: over.maxCustomers ?? 2, maxBytes: 1_000_000 },
    streaming: true,
    delta: undefined,
    stop: () => (over.stopAfter !== undefined && dispatched >= over.stopAfter ? over.stopWith : undefined),
    dispatch: async (chunk: Chunk) => {
      dispatched++;
      account.made();
      sent.push(chunk.customers.map((c) => c.customerId));
      log.push(`dispatch ${chunk.index}`);
    },
    drain: async () => {
      log.push('drain');
    },
    ...over,
  };
  return { account, sent, log, rejects: rejects.lines, options };
}

/** An iterable that says whether it was closed early, and how far it was read. */
function tracked(groups: CustomerGroup[], fail?: { at: number; error: Error }) {
  const state = { closed: false, read: 0 };
  const iterable: AsyncIterable<CustomerGroup> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        if (fail && state.read === fail.at) throw fail.error;
        if (state.read >= groups.length) return { done: true, value: undefined };
        return { done: false, value: groups[state.read++]! };
      },
      return: async () => {
        state.closed = true;
        return { done: true, value: undefined };
      },
    }),
  };
  return { iterable, state };
}

const signal: StopReason = { kind: 'signal', signal: 'SIGTERM' };
const failed: StopReason = { kind: 'failed', error: new LeadctlError('x', 1, 'boom') };

describe('one pass over the customer groups', () => {
  it('checks each group, sends the valid customers in chunks, the last one at the end, then drains', async () => {
    const r = run();
    await checkAndChunk([valid('A'), invalid('B'), valid('C', 2), partly('D'), valid('E')], r.options);
    expect(r.sent).toEqual([
      ['A', 'C'],
      ['D', 'E'],
    ]);
    expect(r.log).toEqual(['dispatch 0', 'dispatch 1', 'drain']);
    const t = r.account.tally;
    expect(t.read).toEqual({ customers: 5, loans: 5, payments: 5 });
    expect(t.valid).toEqual({ customers: 4, loans: 4, payments: 5 });
    expect(t.rejected).toEqual({ customers: 1, loans: 1, payments: 0 });
    expect(r.rejects.map((x) => x.customerId)).toContain('B');
    expect(r.account.totalCustomers).toBe(5);
    expect(r.account.inputFullyRead).toBe(true);
  });

  it('a staged export (its customers counted beforehand) counts none while reading, and takes plain iterables', async () => {
    const r = run({ streaming: false });
    r.account.totalCustomers = 9;
    await checkAndChunk([valid('A'), valid('B'), valid('C')], r.options);
    expect(r.account.totalCustomers).toBe(9);
    expect(r.sent).toEqual([['A', 'B'], ['C']]);
  });

  it('nothing valid: no request, still drained', async () => {
    const r = run();
    await checkAndChunk([invalid('A')], r.options);
    expect(r.sent).toEqual([]);
    expect(r.log).toEqual(['drain']);
  });

  it('a group the reader found unchanged is only counted: done, never checked nor sent', async () => {
    const r = run();
    const same: CustomerGroup = { ...invalid('U'), unchanged: { loans: 2, payments: 3 } };
    await checkAndChunk([same, valid('A')], r.options);
    expect(r.sent).toEqual([['A']]);
    expect(r.account.tally.unchanged).toEqual({ customers: 1, loans: 2, payments: 3 });
    expect(r.account.tally.rejected).toEqual({ customers: 0, loans: 0, payments: 0 });
    expect(r.account.unchangedRaw).toBe(1);
    expect(r.account.doneCustomers).toBe(1);
    expect(r.rejects).toEqual([]);
  });
});

describe('with the record of what was sent', () => {
  function delta(unchanged: string[]) {
    const asked: { id: string; raw: unknown }[] = [];
    const log: string[] = [];
    const d = {
      digestOf: (id: string, payload: unknown, raw: unknown) => {
        asked.push({ id, raw });
        expect(payload).toBeDefined();
        return { customerId: id, digest: `d-${id}` };
      },
      shouldSend: (digest: { customerId: string }) => !unchanged.includes(digest.customerId),
      flushRaw: () => log.push('flushRaw'),
    };
    return { delta: d as unknown as CustomerDelta, asked, log };
  }

  it('sends the changed customers with their digest, counts the others unchanged, and hands raw rows only for clean customers', async () => {
    const d = delta(['B']);
    const raw = (g: CustomerGroup, tag: string) => ({ ...g, raw: tag as unknown as CustomerGroup['raw'] });
    const r = run({ delta: d.delta, maxCustomers: 10 });
    let chunk: Chunk | undefined;
    r.options.dispatch = async (c) => {
      chunk = c;
      r.sent.push(c.customers.map((x) => x.customerId));
    };
    await checkAndChunk([raw(valid('A'), 'rawA'), raw(valid('B', 2), 'rawB'), raw(partly('C'), 'rawC')], r.options);
    expect(r.sent).toEqual([['A', 'C']]);
    expect(chunk!.customers.map((c) => c.digest)).toEqual([
      { customerId: 'A', digest: 'd-A' },
      { customerId: 'C', digest: 'd-C' },
    ]);
    expect(d.asked).toEqual([
      { id: 'A', raw: 'rawA' },
      { id: 'B', raw: 'rawB' },
      { id: 'C', raw: undefined },
    ]);
    expect(r.account.tally.unchanged).toEqual({ customers: 1, loans: 1, payments: 2 });
    expect(r.account.doneCustomers).toBe(1);
    expect(d.log).toEqual(['flushRaw']);
  });

  it('flushes the raw rows before waiting for the requests in flight', async () => {
    const d = delta([]);
    const r = run({ delta: d.delta });
    r.options.drain = async () => {
      expect(d.log).toEqual(['flushRaw']);
      r.log.push('drain');
    };
    await checkAndChunk([valid('A')], r.options);
    expect(r.log).toEqual(['dispatch 0', 'drain']);
  });
});

describe('a pass that stops', () => {
  const five = () => ['A', 'B', 'C', 'D', 'E'].map((id) => valid(id));

  it('a failure: the chunk being filled is counted as a request not sent, the rest is read and counted', async () => {
    const r = run({ stopAfter: 1, stopWith: failed });
    const { iterable, state } = tracked(five());
    await checkAndChunk(iterable, r.options);
    // A and B went; C was added before the stop was seen, D and E were read after it.
    expect(r.sent).toEqual([['A', 'B']]);
    expect(r.account.requests).toMatchObject({ total: 2, notSent: 1 });
    expect(r.account.tally.notSent).toEqual({ customers: 3, loans: 3, payments: 3 });
    expect(r.account.tally.read.customers).toBe(5);
    expect(state.read).toBe(5);
    expect(r.account.inputFullyRead).toBe(true);
    expect(r.log).toEqual(['dispatch 0', 'drain']);
  });

  it('stopped before anything was read: nothing made, the whole input counted as not sent', async () => {
    const r = run({ stopAfter: 0, stopWith: failed });
    await checkAndChunk(five(), r.options);
    expect(r.sent).toEqual([]);
    expect(r.account.requests.total).toBe(0);
    expect(r.account.requests.notSent).toBe(0);
    expect(r.account.tally.notSent.customers).toBe(5);
    expect(r.account.tally.valid.customers).toBe(0);
  });

  it('a signal while streaming: the rest is left unread for --resume', async () => {
    const r = run({ stopAfter: 1, stopWith: signal });
    const { iterable, state } = tracked(five());
    await checkAndChunk(iterable, r.options);
    expect(r.account.inputFullyRead).toBe(false);
    expect(state.read).toBe(3);
    expect(state.closed).toBe(true);
    expect(r.account.tally.notSent.customers).toBe(1);
    expect(r.account.requests.notSent).toBe(1);
  });

  it('a signal in a staged export: counted to its end all the same', async () => {
    const r = run({ stopAfter: 1, stopWith: signal, streaming: false });
    const { iterable, state } = tracked(five());
    await checkAndChunk(iterable, r.options);
    expect(r.account.inputFullyRead).toBe(true);
    expect(state.read).toBe(5);
    expect(r.account.tally.notSent.customers).toBe(3);
  });

  it('a reading stopped by a signal: what was read and not sent is counted, the input marked unread', async () => {
    const r = run();
    let stopped = false;
    r.options.stop = () => (stopped ? signal : undefined);
    const groups = five();
    const iterable: AsyncIterable<CustomerGroup> = {
      [Symbol.asyncIterator]: () => {
        let i = 0;
        return {
          next: async () => {
            if (i === 3) {
              stopped = true;
              throw new ReadingStopped();
            }
            return { done: false, value: groups[i++]! };
          },
        };
      },
    };
    await checkAndChunk(iterable, r.options);
    expect(r.sent).toEqual([['A', 'B']]);
    expect(r.account.inputFullyRead).toBe(false);
    expect(r.account.requests.notSent).toBe(1);
    expect(r.account.tally.notSent.customers).toBe(1);
  });

  it('any other reading error ends the pass with that error and closes the input', async () => {
    const r = run();
    const boom = new Error('disk on fire');
    const { iterable, state } = tracked(five(), { at: 3, error: boom });
    await expect(checkAndChunk(iterable, r.options)).rejects.toBe(boom);
    expect(state.closed).toBe(true);
    expect(r.log).toEqual(['dispatch 0']);
  });

  it('a failing dispatch closes the input too', async () => {
    const r = run();
    const boom = new Error('no');
    r.options.dispatch = async () => {
      throw boom;
    };
    const { iterable, state } = tracked(five());
    await expect(checkAndChunk(iterable, r.options)).rejects.toBe(boom);
    expect(state.closed).toBe(true);
    // The first chunk closes when the third customer does not fit in it.
    expect(state.read).toBe(3);
  });
});

describe('a reading that stops by itself', () => {
  /** Groups, with a ReadingStopped thrown once before the group at `at`; no `return` of its own. */
  function stopsAt(groups: CustomerGroup[], at: number) {
    const state = { read: 0, thrown: false };
    const iterable: AsyncIterable<CustomerGroup> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          if (state.read === at && !state.thrown) {
            state.thrown = true;
            throw new ReadingStopped();
          }
          if (state.read >= groups.length) return { done: true, value: undefined };
          return { done: false, value: groups[state.read++]! };
        },
      }),
    };
    return { iterable, state };
  }
  const five = () => ['A', 'B', 'C', 'D', 'E'].map((id) => valid(id));

  it('in a staged export, counts the rest to its end but says the input was not fully read', async () => {
    const r = run({ streaming: false });
    r.options.stop = () => undefined;
    const { iterable, state } = stopsAt(five(), 3);
    await checkAndChunk(iterable, r.options);
    expect(r.account.inputFullyRead).toBe(false);
    expect(state.read).toBe(5);
    expect(r.account.tally.notSent.customers).toBe(3);
  });

  it('while streaming with no stop recorded: the same, without needing a reason', async () => {
    const r = run();
    r.options.stop = () => undefined;
    const { iterable } = stopsAt(five(), 3);
    await checkAndChunk(iterable, r.options);
    expect(r.account.inputFullyRead).toBe(false);
    expect(r.sent).toEqual([['A', 'B']]);
  });

  it('an error from an input that cannot be closed early is passed on as it is', async () => {
    const r = run();
    const boom = new Error('broken pipe');
    const iterable: AsyncIterable<CustomerGroup> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          throw boom;
        },
      }),
    };
    await expect(checkAndChunk(iterable, r.options)).rejects.toBe(boom);
  });
});
