import { describe, expect, it } from 'vitest';
import { Chunker } from '../../../../src/jobs/push/chunker.js';
import { applySkips as applySkipsWith, paymentIdsFrom } from '../../../../src/jobs/push/service-skips.js';
import type { CustomerTrace, ValidCustomer } from '../../../../src/jobs/push/validate.js';

/** The payment ids the customers' JSON carries (read back from the request's body in a run), by customer and loan id. */
const sentIds: Record<string, string[]> = { 'C0/L0': ['P0', 'P1'], 'C1/L2': ['P2'] };

function applySkips(
  traces: readonly CustomerTrace[],
  skipped: Parameters<typeof applySkipsWith>[1],
  how?: 'skipped' | 'refused',
) {
  const ids = (c: number, l: number) => sentIds[`${traces[c]!.customerId}/${traces[c]!.loans[l]!.loanId}`] ?? [];
  return applySkipsWith(traces, skipped, ids, how);
}

/** Two customers: C0 (rows 2 and 3 of file 0) with loans L0 (payments P0, P1) and L1 (none); C1 with L2 (P2). */
const traces: CustomerTrace[] = [
  {
    customerId: 'C0',
    src: 0,
    row: 2,
    loans: [
      {
        loanId: 'L0',
        origin: { src: 0, row: 2 },
        payments: { src: 1, rows: [5, 6] },
      },
      { loanId: 'L1', origin: { src: 0, row: 3 }, payments: { src: 0, rows: [] } },
    ],
  },
  {
    customerId: 'C1',
    src: 2,
    row: 4,
    loans: [{ loanId: 'L2', origin: { src: 2, row: 4 }, payments: { src: 3, rows: [7] } }],
  },
];

describe('the service skipped part of a request', () => {
  it('a customer: its errors at customer level, field split off, and its loans and payments not stored', () => {
    const r = applySkips(traces, [
      { path: 'customers.1', id: 'C1', errors: ['customer_id: already taken', 'blocked'] },
    ]);
    expect(r.rejected).toEqual({ customers: 1, loans: 1, payments: 1 });
    expect(r.rejects).toEqual([
      {
        level: 'customer',
        src: 2,
        row: 4,
        customerId: 'C1',
        field: 'customer_id',
        reason: 'skipped by the service: already taken',
      },
      {
        level: 'customer',
        src: 2,
        row: 4,
        customerId: 'C1',
        field: undefined,
        reason: 'skipped by the service: blocked',
      },
      {
        level: 'loan',
        src: 2,
        row: 4,
        customerId: 'C1',
        loanId: 'L2',
        reason: 'not stored: its customer was skipped by the service',
      },
      {
        level: 'payment',
        src: 3,
        row: 7,
        customerId: 'C1',
        loanId: 'L2',
        paymentId: 'P2',
        reason: 'not stored: its customer was skipped by the service',
      },
    ]);
  });

  it('a loan: its errors at loan level, and its payments not stored', () => {
    const r = applySkips(traces, [{ path: 'customers.0.loans.0', id: 'L0', errors: ['loan_amount: too large'] }]);
    expect(r.rejected).toEqual({ customers: 0, loans: 1, payments: 2 });
    expect(r.rejects).toEqual([
      {
        level: 'loan',
        src: 0,
        row: 2,
        customerId: 'C0',
        loanId: 'L0',
        field: 'loan_amount',
        reason: 'skipped by the service: too large',
      },
      ...['P0', 'P1'].map((paymentId, k) => ({
        level: 'payment',
        src: 1,
        row: 5 + k,
        customerId: 'C0',
        loanId: 'L0',
        paymentId,
        reason: 'not stored: its loan was skipped by the service',
      })),
    ]);
  });

  it('a payment: one line per error, naming its own row', () => {
    const r = applySkips(traces, [
      { path: 'customers.0.loans.0.payments.1', id: 'P1', errors: ['payment_at: required', 'fees: negative'] },
    ]);
    expect(r.rejected).toEqual({ customers: 0, loans: 0, payments: 1 });
    expect(r.rejects).toEqual([
      {
        level: 'payment',
        src: 1,
        row: 6,
        customerId: 'C0',
        loanId: 'L0',
        paymentId: 'P1',
        field: 'payment_at',
        reason: 'skipped by the service: required',
      },
      {
        level: 'payment',
        src: 1,
        row: 6,
        customerId: 'C0',
        loanId: 'L0',
        paymentId: 'P1',
        field: 'fees',
        reason: 'skipped by the service: negative',
      },
    ]);
  });

  it('an entry without errors still gives a line that says the service skipped it', () => {
    const r = applySkips(traces, [{ path: 'customers.0.loans.1', id: 'L1', errors: [] }]);
    expect(r.rejects).toEqual([
      {
        level: 'loan',
        src: 0,
        row: 3,
        customerId: 'C0',
        loanId: 'L1',
        field: undefined,
        reason: 'skipped by the service: skipped by the service',
      },
    ]);
  });

  it('an error is split at "field: " only when it starts with a field name', () => {
    const reasons = (error: string) =>
      applySkips(traces, [{ path: 'customers.0.loans.1', id: null, errors: [error] }]).rejects.map((r) => [
        r.field,
        r.reason,
      ]);
    expect(reasons('loans[0].loan_id: taken')).toEqual([['loans[0].loan_id', 'skipped by the service: taken']]);
    expect(reasons('_x: a: b')).toEqual([['_x', 'skipped by the service: a: b']]);
    expect(reasons('two words: no field')).toEqual([[undefined, 'skipped by the service: two words: no field']]);
    expect(reasons('1abc: no field')).toEqual([[undefined, 'skipped by the service: 1abc: no field']]);
    expect(reasons('x:no space')).toEqual([[undefined, 'skipped by the service: x:no space']]);
    expect(reasons('x: ')).toEqual([[undefined, 'skipped by the service: x: ']]);
    expect(reasons('say x: y')).toEqual([[undefined, 'skipped by the service: say x: y']]);
    expect(reasons('x: line one\nline two')).toEqual([['x', 'skipped by the service: line one\nline two']]);
  });

  it('what is inside a skipped object counts once, whatever the order the service lists them in', () => {
    const r = applySkips(traces, [
      { path: 'customers.0.loans.0.payments.0', id: 'P0', errors: ['inner'] },
      { path: 'customers.0.loans.0', id: 'L0', errors: ['outer'] },
      { path: 'customers.0.loans.0.payments.0', id: 'P0', errors: ['again'] },
    ]);
    expect(r.rejected).toEqual({ customers: 0, loans: 1, payments: 2 });
    expect(r.rejects.map((x) => x.reason)).toEqual([
      'skipped by the service: outer',
      'not stored: its loan was skipped by the service',
      'not stored: its loan was skipped by the service',
    ]);
    // Under a skipped customer, a loan listed as well adds nothing either.
    const c = applySkips(traces, [
      { path: 'customers.0.loans.1', id: 'L1', errors: ['inner'] },
      { path: 'customers.0', id: 'C0', errors: ['outer'] },
    ]);
    expect(c.rejected).toEqual({ customers: 1, loans: 2, payments: 2 });
    expect(c.rejects).toHaveLength(5);
  });

  it('the same payment listed twice counts once; two payments of one loan count twice', () => {
    const twice = applySkips(traces, [
      { path: 'customers.0.loans.0.payments.0', id: 'P0', errors: ['a'] },
      { path: 'customers.0.loans.0.payments.0', id: 'P0', errors: ['b'] },
    ]);
    expect(twice.rejected.payments).toBe(1);
    expect(twice.rejects).toHaveLength(1);
    const both = applySkips(traces, [
      { path: 'customers.0.loans.0.payments.0', id: 'P0', errors: ['a'] },
      { path: 'customers.0.loans.0.payments.1', id: 'P1', errors: ['b'] },
    ]);
    expect(both.rejected.payments).toBe(2);
    // Another customer's loan with the same index is another loan.
    const other = applySkips(traces, [
      { path: 'customers.0.loans.0', id: 'L0', errors: ['a'] },
      { path: 'customers.1.loans.0', id: 'L2', errors: ['b'] },
    ]);
    expect(other.rejected).toEqual({ customers: 0, loans: 2, payments: 3 });
  });

  it('a path this run did not send is reported as the service said it, against the first input (outermost first)', () => {
    const r = applySkips(traces, [
      { path: 'customers.9', id: 'C9', errors: ['x', 'y'] },
      { path: 'things.0', id: null, errors: [] },
      { path: 'xcustomers.0', id: 'W', errors: ['w'] },
    ]);
    expect(r.rejected).toEqual({ customers: 0, loans: 0, payments: 0 });
    const not = 'which this request did not have';
    expect(r.rejects).toEqual([
      {
        level: 'customer',
        src: 0,
        row: 0,
        customerId: 'C9',
        reason: `skipped by the service at customers.9, ${not}: x; y`,
      },
      {
        level: 'customer',
        src: 0,
        row: 0,
        customerId: '',
        reason: `skipped by the service at things.0, ${not}: skipped by the service`,
      },
      {
        level: 'customer',
        src: 0,
        row: 0,
        customerId: 'W',
        reason: `skipped by the service at xcustomers.0, ${not}: w`,
      },
    ]);
    // Marked unplaced by the sender (a half's index, after a split): never placed on the customer of that index here.
    const marked = applySkips(traces, [{ path: 'customers.1', id: 'Z', errors: ['z'], unplaced: true }]);
    expect(marked.rejected).toEqual({ customers: 0, loans: 0, payments: 0 });
    expect(marked.rejects).toEqual([
      {
        level: 'customer',
        src: 0,
        row: 0,
        customerId: 'Z',
        reason: `skipped by the service at customers.1, ${not}: z`,
      },
    ]);
    const elsewhere = applySkips([{ ...traces[1]!, src: 3 }], [{ path: 'customers.5', id: null, errors: ['q'] }]);
    expect(elsewhere.rejects[0]!.src).toBe(3);
    expect(applySkips([], [{ path: 'customers.0', id: null, errors: ['q'] }]).rejects[0]!.src).toBe(0);
  });

  it('a loan or payment the customer was not sent with makes the whole customer skipped, saying what the service named', () => {
    for (const path of [
      'customers.0.loans.7',
      'customers.0.loans.1.payments.3',
      // One past the last payment of a loan that has two.
      'customers.0.loans.0.payments.2',
      'customers.0.loans.7.payments.0',
      'customers.0.loans.0.extra',
    ]) {
      const r = applySkips(traces, [
        // Inside the customer, and at the other customer: the first is covered by it, the second stays.
        { path: 'customers.0.loans.0.payments.1', id: 'P1', errors: ['payment_at: required'] },
        { path, id: 'X', errors: ['x'] },
        { path: 'customers.1.loans.0.payments.0', id: 'P2', errors: ['fees: negative'] },
      ]);
      expect(r.rejected, path).toEqual({ customers: 1, loans: 2, payments: 3 });
      expect(r.rejects[0], path).toEqual({
        level: 'customer',
        src: 0,
        row: 2,
        customerId: 'C0',
        field: undefined,
        reason: `skipped by the service: a record this request did not have (${path}: x); what it stored of this customer is unknown: check it, then push it again`,
      });
      expect(r.rejects.filter((x) => x.customerId === 'C0').map((x) => `${x.level} ${x.row}`)).toEqual([
        'customer 2',
        'loan 2',
        'payment 5',
        'payment 6',
        'loan 3',
      ]);
      expect(r.rejects.at(-1)).toMatchObject({ customerId: 'C1', paymentId: 'P2', field: 'fees' });
    }
  });
});

describe('indices past 9', () => {
  it('a loan or payment at index 10 or more is found like any other', () => {
    const many: CustomerTrace = {
      customerId: 'M',
      src: 0,
      row: 2,
      loans: Array.from({ length: 12 }, (_, l) => ({
        loanId: `L${l}`,
        origin: { src: 0, row: 10 + l },
        payments: { src: 1, rows: Array.from({ length: 12 }, (_, p) => 100 + p) },
      })),
    };
    for (let l = 0; l < 12; l++) sentIds[`M/L${l}`] = Array.from({ length: 12 }, (_, p) => `L${l}P${p}`);
    const r = applySkips(
      [many],
      [
        { path: 'customers.0.loans.11', id: 'L11', errors: ['x'] },
        { path: 'customers.0.loans.3.payments.10', id: 'L3P10', errors: ['y'] },
      ],
    );
    expect(r.rejected).toEqual({ customers: 0, loans: 1, payments: 13 });
    expect(r.rejects[0]).toMatchObject({ level: 'loan', loanId: 'L11', row: 21 });
    expect(r.rejects.at(-1)).toMatchObject({ level: 'payment', paymentId: 'L3P10', row: 110 });
  });
});

describe('the service refused a whole request', () => {
  it('says so without "skipped", and what the customer held is not stored because of the refusal', () => {
    const r = applySkips(
      traces,
      [
        { path: 'customers.0', id: 'C0', errors: ['HTTP 400: bad request'] },
        { path: 'customers.1.loans.0', id: 'L2', errors: ['loan_id: refused'] },
      ],
      'refused',
    );
    expect(r.rejected).toEqual({ customers: 1, loans: 3, payments: 3 });
    const refusal = 'not stored: the whole request was refused by the service';
    expect(r.rejects.map((x) => [x.level, x.field, x.reason])).toEqual([
      ['customer', undefined, 'HTTP 400: bad request'],
      ['loan', undefined, refusal],
      ['payment', undefined, refusal],
      ['payment', undefined, refusal],
      ['loan', undefined, refusal],
      ['loan', 'loan_id', 'refused'],
      ['payment', undefined, refusal],
    ]);
  });
});

describe('payment ids read back from the request body', () => {
  it('are those of the JSON each customer was sent with, once chunked, loan by loan', () => {
    const sent = (id: string, loans: string[][]): ValidCustomer => ({
      customerId: id,
      json: JSON.stringify({
        customer_id: id,
        loans: loans.map((ids, l) => ({ loan_id: `L${l}`, payments: ids.map((p) => ({ payment_id: p })) })),
      }),
      loans: loans.length,
      payments: loans.flat().length,
      trace: { customerId: id, src: 0, row: 2, loans: [] },
    });
    const chunker = new Chunker({ maxCustomers: 10, maxBytes: 1 << 20 });
    chunker.add(sent('A', [['a1', 'a2'], []]));
    chunker.add(sent('B', [['b1'], ['b2', 'b3', 'ü-4']]));
    const chunk = chunker.finish()!;
    expect(chunk.customers.map((c) => c.json)).toEqual([undefined, undefined]);
    const ids = paymentIdsFrom(chunk.customers);
    expect([ids(0, 0), ids(0, 1), ids(1, 0), ids(1, 1), ids(1, 2)]).toEqual([
      ['a1', 'a2'],
      [],
      ['b1'],
      ['b2', 'b3', 'ü-4'],
      [],
    ]);
    chunk.release();
    expect(() => paymentIdsFrom(chunk.customers)(1, 1)).toThrow(/released/);
  });
});
