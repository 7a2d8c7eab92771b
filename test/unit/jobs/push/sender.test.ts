import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../../src/api/client.js';
import { PayloadTooLargeError, ServiceError, ValidationError } from '../../../../src/errors.js';
import { BATCH_PATH, ChunkSender, shiftCustomerPath } from '../../../../src/jobs/push/sender.js';
import type { ValidCustomer } from '../../../../src/jobs/push/validate.js';

const origin = { src: 0, row: 2 };
const customer = (id: string): ValidCustomer => ({
  customerId: id,
  json: JSON.stringify({ customer_id: id, loans: [] }),
  loans: 0,
  payments: 0,
  trace: { ...origin, customerId: id, loans: [] },
});
const many = (n: number) => Array.from({ length: n }, (_, i) => customer(`C${i}`));

type Answer = { body: unknown; attempts?: number } | Error;

/** A client whose answers are decided from the customer ids of each request. */
function client(answer: (ids: string[]) => Answer) {
  const requests: string[][] = [];
  const fake = {
    async send(spec: { path: string; body: () => AsyncIterable<Buffer | string> }) {
      expect(spec.path).toBe(BATCH_PATH);
      let text = '';
      for await (const part of spec.body()) text += part.toString();
      const ids = (JSON.parse(text) as { customers: { customer_id: string }[] }).customers.map((c) => c.customer_id);
      requests.push(ids);
      const a = answer(ids);
      if (a instanceof Error) throw a;
      return { status: 200, headers: {}, body: a.body, attempts: a.attempts ?? 1 };
    },
  };
  return { client: fake as unknown as ApiClient, requests };
}

const detailed = (skipped: { path: string; id: string | null; errors: string[] }[] = []) => ({
  body: { data: { accepted: { customers: 0, loans: 0, payments: 0 }, skipped } },
});

function sender(c: ApiClient, concurrency = 2) {
  let answered = 0;
  const s = new ChunkSender({
    client: c,
    signal: new AbortController().signal,
    concurrency,
    answered: () => answered++,
  });
  return { s, answered: () => answered };
}

describe('ChunkSender.post', () => {
  it('splits a request refused as too large in halves, and places the second half’s skips', async () => {
    const tooLarge = new PayloadTooLargeError('too large', {}, { http: { status: 413, attempts: 1 } });
    const { client: c, requests } = client((ids) =>
      ids.length > 2
        ? tooLarge
        : ids[0] === 'C2'
          ? detailed([{ path: 'customers.1.loans.0', id: 'L', errors: ['x'] }])
          : detailed(),
    );
    const { s, answered } = sender(c);
    const result = await s.post(many(4));
    expect(requests).toEqual([
      ['C0', 'C1', 'C2', 'C3'],
      ['C0', 'C1'],
      ['C2', 'C3'],
    ]);
    expect(result.skipped).toEqual([{ path: 'customers.3.loans.0', id: 'L', errors: ['x'] }]);
    expect(result.refused).toEqual([]);
    expect(s.splits).toBe(1);
    expect(answered()).toBe(2);
  });

  it('takes no verdict of an answer that skips a customer the request did not have: every customer unconfirmed', async () => {
    for (const path of ['customers.3', 'customers.3.loans.0', '__proto__', 'customers.-1', 'loans.0']) {
      const { client: c } = client(() =>
        detailed([
          { path: 'customers.1', id: 'C1', errors: ['x'] },
          { path, id: 'Z', errors: ['z'] },
        ]),
      );
      const result = await sender(c).s.post(many(3));
      expect(result.unconfirmed, path).toEqual([0, 1, 2]);
      // Only what cannot be placed is kept, for the rejects file: the rest would count twice.
      expect(result.skipped, path).toEqual([{ path, id: 'Z', errors: ['z'], unplaced: true }]);
    }
    // Split (413): an entry of the first half placed on no customer is not shifted onto one of the second.
    const tooLarge = new PayloadTooLargeError('too large', {}, { http: { status: 413, attempts: 1 } });
    const { client: halves } = client((ids) =>
      ids.length > 2
        ? tooLarge
        : ids[0] === 'C0'
          ? detailed([{ path: 'customers.3', id: 'Z', errors: ['z'] }])
          : detailed(),
    );
    const split = await sender(halves).s.post(many(4));
    expect(split.unconfirmed).toEqual([0, 1]);
    expect(split.skipped).toEqual([{ path: 'customers.3', id: 'Z', errors: ['z'], unplaced: true }]);
    const { client: placed } = client(() => detailed([{ path: 'customers.2.loans.9', id: 'L', errors: ['y'] }]));
    const result = await sender(placed).s.post(many(3));
    expect(result.unconfirmed).toEqual([]);
    expect(result.skipped).toEqual([{ path: 'customers.2.loans.9', id: 'L', errors: ['y'] }]);
  });

  it('refuses a single customer still too large, and each customer of a request refused whole', async () => {
    const { client: c } = client(() => new ValidationError('bad request', {}, { http: { status: 422, attempts: 1 } }));
    const { s, answered } = sender(c);
    const result = await s.post(many(2));
    expect(result.refused.map((r) => r.path)).toEqual(['customers.0', 'customers.1']);
    expect(result.refused[0]!.errors[0]).toMatch(
      /refused by the service with the whole request \(HTTP 422\): bad request/,
    );
    expect(result.refusal).toEqual({ status: 422, reason: 'bad request' });
    expect(answered()).toBe(1);

    const one = client(() => new PayloadTooLargeError('too large', {}, { http: { status: 413 } }));
    const single = sender(one.client);
    const alone = await single.s.post(many(1));
    expect(alone.refused).toHaveLength(1);
    expect(single.s.splits).toBe(0);
  });

  it('leaves every customer unconfirmed when a 2xx has no per-record verdict', async () => {
    const { client: c } = client(() => ({ body: {} }));
    const { s } = sender(c);
    expect(await s.post(many(3))).toEqual({ skipped: [], refused: [], unconfirmed: [0, 1, 2] });
  });

  it('counts the client’s retries, answered or failed, and throws what is not an answer', async () => {
    let n = 0;
    const { client: c } = client(() =>
      n++ === 0 ? { ...detailed(), attempts: 3 } : new ServiceError('down', 503, { http: { attempts: 4 } }),
    );
    const { s, answered } = sender(c);
    await s.post(many(1));
    await expect(s.post(many(1))).rejects.toBeInstanceOf(ServiceError);
    expect(s.retries).toBe(2 + 3);
    expect(answered()).toBe(1);
  });
});

describe('ChunkSender in flight', () => {
  it('lets at most `concurrency` requests run, and drains them all', async () => {
    const { s } = sender(client(() => detailed()).client, 2);
    const gates: (() => void)[] = [];
    let done = 0;
    const task = () =>
      new Promise<void>((resolve) => {
        gates.push(resolve);
      });
    for (let i = 0; i < 2; i++)
      s.start(
        task,
        () => undefined,
        () => done++,
      );
    expect(s.inFlightCount).toBe(2);
    let freed = false;
    const waiting = s
      .free(() => false)
      .then(() => {
        freed = true;
      });
    await Promise.resolve();
    expect(freed).toBe(false);
    gates.shift()!();
    await waiting;
    expect(freed).toBe(true);
    expect(s.inFlightCount).toBe(1);
    const failure = new Error('boom');
    const failed: unknown[] = [];
    s.start(
      () => Promise.reject(failure),
      (e) => failed.push(e),
      () => done++,
    );
    gates.shift()!();
    await s.drain();
    expect(s.inFlightCount).toBe(0);
    expect(failed).toEqual([failure]);
    expect(done).toBe(3);
  });

  it('stops waiting for a slot once the run is stopped', async () => {
    const { s } = sender(client(() => detailed()).client, 1);
    s.start(
      () => new Promise<void>(() => undefined),
      () => undefined,
      () => undefined,
    );
    await s.free(() => true);
    expect(s.inFlightCount).toBe(1);
  });
});

describe('shiftCustomerPath', () => {
  it('moves the customer index only', () => {
    expect(shiftCustomerPath('customers.3.loans.0', 2)).toBe('customers.5.loans.0');
    expect(shiftCustomerPath('loans.3', 2)).toBe('loans.3');
  });
});
