import { describe, expect, it } from 'vitest';
import type { CustomerGroup, GroupLoan, GroupPayment } from '../../../../src/ingest/lms/groups.js';
import type { FieldError } from '../../../../src/ingest/mapping/mapping.js';
import { paymentOrigin, validateGroup, zeroCounts } from '../../../../src/jobs/push/validate.js';

const AT = '2026-01-02T03:04:05Z';

function payment(
  id: string,
  row: number,
  fields: Record<string, unknown> = {},
  errors: FieldError[] = [],
): GroupPayment {
  return { paymentId: id, src: 1, row, fields: { payment_id: id, payment_at: AT, ...fields }, errors };
}

function loan(
  id: string,
  row: number,
  payments: GroupPayment[] = [],
  fields: Record<string, unknown> = {},
  errors: FieldError[] = [],
): GroupLoan {
  return {
    loanId: id,
    src: 0,
    row,
    fields: { loan_id: id, lead_id: 7, is_lead_loan: true, loan_amount: 1000, applied_at: AT, ...fields },
    errors,
    payments,
  };
}

function group(g: Partial<CustomerGroup>): CustomerGroup {
  return { customerId: 'C1', origin: { src: 0, row: 2 }, errors: [], loans: [], orphans: [], duplicates: [], ...g };
}

describe('validateGroup: a customer that can be sent', () => {
  it('sends every loan with its payments, ids first, and counts them', () => {
    const r = validateGroup(
      group({
        loans: [
          loan('L1', 2, [payment('P1', 3, { payment_amount: 5 }), payment('P2', 4)], { loan_amount: 10 }),
          loan('L2', 5),
        ],
      }),
    );
    expect(r.rejects).toEqual([]);
    expect(r.seen).toEqual({ customers: 1, loans: 2, payments: 2 });
    expect(r.rejected).toEqual(zeroCounts());
    expect(r.duplicates).toEqual(zeroCounts());
    expect(r.valid?.customerId).toBe('C1');
    expect(r.valid?.loans).toBe(2);
    expect(r.valid?.payments).toBe(2);
    expect(JSON.parse(r.valid!.json!)).toEqual({
      customer_id: 'C1',
      loans: [
        {
          loan_id: 'L1',
          lead_id: 7,
          is_lead_loan: true,
          loan_amount: 10,
          applied_at: AT,
          payments: [
            { payment_id: 'P1', payment_at: AT, payment_amount: 5 },
            { payment_id: 'P2', payment_at: AT },
          ],
        },
        { loan_id: 'L2', lead_id: 7, is_lead_loan: true, loan_amount: 1000, applied_at: AT, payments: [] },
      ],
    });
    // The ids come first in the text sent, in a fixed order, whatever the order of the fields read.
    expect(
      r.valid!.json!.startsWith('{"customer_id":"C1","loans":[{"loan_id":"L1","lead_id":7,"is_lead_loan":true,'),
    ).toBe(true);
    expect(r.valid!.trace).toEqual({
      customerId: 'C1',
      src: 0,
      row: 2,
      loans: [
        {
          loanId: 'L1',
          origin: { src: 0, row: 2 },
          payments: { src: 1, rows: [3, 4] },
        },
        { loanId: 'L2', origin: { src: 0, row: 5 }, payments: { src: 0, rows: [] } },
      ],
    });
    expect(r.payload).toEqual({
      loans: [
        {
          fields: { loan_id: 'L1', lead_id: 7, is_lead_loan: true, loan_amount: 10, applied_at: AT },
          payments: [
            JSON.stringify({ payment_id: 'P1', payment_at: AT, payment_amount: 5 }),
            JSON.stringify({ payment_id: 'P2', payment_at: AT }),
          ],
        },
        { fields: { loan_id: 'L2', lead_id: 7, is_lead_loan: true, loan_amount: 1000, applied_at: AT }, payments: [] },
      ],
    });
  });

  it('orders management_system_id among the ids and leaves out fields that are undefined', () => {
    const l = loan('L1', 2, [], { lead_id: undefined, management_system_id: 9, funded_amount: undefined });
    l.fields = { applied_at: AT, loan_amount: 1, is_lead_loan: false, management_system_id: 9, loan_id: 'L1' };
    const r = validateGroup(group({ loans: [l] }));
    expect(r.valid!.json!).toBe(
      `{"customer_id":"C1","loans":[{"loan_id":"L1","management_system_id":9,"is_lead_loan":false,"applied_at":"${AT}","loan_amount":1,"payments":[]}]}`,
    );
  });

  it('sends fields read in the order of the ids as they are, undefined ones left out', () => {
    const l = loan('L1', 2, [payment('P1', 3)]);
    l.fields = {
      loan_id: 'L1',
      lead_id: undefined,
      management_system_id: 9,
      is_lead_loan: false,
      loan_amount: 1,
      applied_at: AT,
    };
    const r = validateGroup(group({ loans: [l, loan('L2', 4)] }));
    expect(r.valid!.json!).toBe(
      `{"customer_id":"C1","loans":[{"loan_id":"L1","management_system_id":9,"is_lead_loan":false,"loan_amount":1,"applied_at":"${AT}","payments":[{"payment_id":"P1","payment_at":"${AT}"}]},` +
        `{"loan_id":"L2","lead_id":7,"is_lead_loan":true,"loan_amount":1000,"applied_at":"${AT}","payments":[]}]}`,
    );
  });

  it('sends a payment checked when staged as its JSON, unchanged', () => {
    const staged: GroupPayment = {
      paymentId: 'P9',
      src: 0,
      row: 8,
      fields: {},
      errors: [],
      json: '{"payment_id":"P9"}',
    };
    const r = validateGroup(group({ loans: [loan('L1', 2, [staged])] }));
    expect(r.rejects).toEqual([]);
    expect(r.valid!.json!).toContain('"payments":[{"payment_id":"P9"}]');
    expect(r.valid!.payments).toBe(1);
    expect(r.valid!.trace.loans[0]!.payments).toEqual({ src: 0, rows: [8] });
    expect(r.payload!.loans[0]!.payments).toEqual(['{"payment_id":"P9"}']);
  });
});

describe('validateGroup: the trace of where each payment sent was read', () => {
  it('keeps one file for a loan whose payments come from one, and a file each once they differ', () => {
    const from = (src: number, p: GroupPayment) => ({ ...p, src });
    const r = validateGroup(
      group({
        loans: [
          loan('L1', 2, [payment('P1', 3), payment('P2', 4)]),
          loan('L2', 5, [
            from(1, payment('P3', 6)),
            from(1, payment('P4', 7)),
            from(2, payment('P5', 2)),
            payment('P6', 8),
          ]),
        ],
      }),
    );
    const [one, two] = r.valid!.trace.loans;
    expect(one!.payments).toEqual({ src: 1, rows: [3, 4] });
    expect(two!.payments.rows.map((_, k) => paymentOrigin(two!.payments, k))).toEqual([
      { src: 1, row: 6 },
      { src: 1, row: 7 },
      { src: 2, row: 2 },
      { src: 1, row: 8 },
    ]);
  });
});

describe('validateGroup: what is rejected, and why', () => {
  it('a bad payment is dropped from its loan, with the schema reason and the column it came from', () => {
    const r = validateGroup(
      group({
        loans: [
          loan('L1', 2, [
            payment('P1', 3, { payment_at: 'yesterday' }),
            payment('P2', 4, {}, [{ field: 'payment_amount', column: 'Amount', reason: 'not a number' }]),
            payment('P3', 5, {}, [{ field: 'principal', column: 'principal', reason: 'not a number' }]),
            payment('', 6, { payment_id: '' }),
            payment('P5', 7),
          ]),
        ],
      }),
    );
    expect(r.valid?.payments).toBe(1);
    expect(r.valid?.loans).toBe(1);
    expect(r.rejected).toEqual({ customers: 0, loans: 0, payments: 4 });
    expect(r.seen).toEqual({ customers: 1, loans: 1, payments: 5 });
    expect(r.valid!.trace.loans[0]!.payments.rows).toEqual([7]);
    const p1 = r.rejects.filter((x) => x.paymentId === 'P1');
    expect(p1).toHaveLength(1);
    expect(p1[0]).toMatchObject({
      level: 'payment',
      src: 1,
      row: 3,
      customerId: 'C1',
      loanId: 'L1',
      field: 'payment_at',
    });
    expect(p1[0]!.reason).not.toContain('column');
    // A value that failed conversion is reported once (not again as "required" by the schema).
    const p2 = r.rejects.filter((x) => x.paymentId === 'P2');
    expect(p2).toEqual([
      {
        level: 'payment',
        src: 1,
        row: 4,
        customerId: 'C1',
        loanId: 'L1',
        paymentId: 'P2',
        field: 'payment_amount',
        reason: 'not a number (column "Amount")',
      },
    ]);
    // The column is named only when it differs from the field.
    expect(r.rejects.find((x) => x.paymentId === 'P3')!.reason).toBe('not a number');
    const blank = r.rejects.find((x) => x.row === 6)!;
    expect(blank.paymentId).toBeUndefined();
    expect(blank.field).toBe('payment_id');
  });

  it('a payment with a conversion error that the quick check would pass is still rejected', () => {
    const r = validateGroup(
      group({
        loans: [loan('L1', 2, [payment('P1', 3, {}, [{ field: 'fees', reason: 'not cents' }]), payment('P2', 4)])],
      }),
    );
    expect(r.rejects).toEqual([
      {
        level: 'payment',
        src: 1,
        row: 3,
        customerId: 'C1',
        loanId: 'L1',
        paymentId: 'P1',
        field: 'fees',
        reason: 'not cents',
      },
    ]);
    expect(r.rejected.payments).toBe(1);
    expect(r.valid!.payments).toBe(1);
  });

  it('a bad loan is dropped with its payments; the customer stays when another loan is left', () => {
    const r = validateGroup(
      group({
        loans: [
          loan('L1', 2, [payment('P1', 3), payment('', 4, { payment_id: 'x' })], { loan_amount: 'ten' }),
          loan('L2', 5, [payment('P3', 6)], {}, [{ field: 'applied_at', column: 'Applied', reason: 'not a date' }]),
          loan('L3', 7, [payment('P4', 8)]),
        ],
      }),
    );
    expect(r.valid?.loans).toBe(1);
    expect(r.valid?.payments).toBe(1);
    expect(JSON.parse(r.valid!.json!).loans.map((l: { loan_id: string }) => l.loan_id)).toEqual(['L3']);
    expect(r.rejected).toEqual({ customers: 0, loans: 2, payments: 3 });
    expect(r.seen).toEqual({ customers: 1, loans: 3, payments: 4 });
    expect(r.rejects.filter((x) => x.level === 'loan')).toEqual([
      {
        level: 'loan',
        src: 0,
        row: 2,
        customerId: 'C1',
        loanId: 'L1',
        field: 'loan_amount',
        reason: expect.any(String),
      },
      {
        level: 'loan',
        src: 0,
        row: 5,
        customerId: 'C1',
        loanId: 'L2',
        field: 'applied_at',
        reason: 'not a date (column "Applied")',
      },
    ]);
    expect(r.rejects.filter((x) => x.level === 'payment')).toEqual([
      {
        level: 'payment',
        src: 1,
        row: 3,
        customerId: 'C1',
        loanId: 'L1',
        paymentId: 'P1',
        reason: 'not sent: loan L1 was rejected',
      },
      {
        level: 'payment',
        src: 1,
        row: 4,
        customerId: 'C1',
        loanId: 'L1',
        paymentId: undefined,
        reason: 'not sent: loan L1 was rejected',
      },
      {
        level: 'payment',
        src: 1,
        row: 6,
        customerId: 'C1',
        loanId: 'L2',
        paymentId: 'P3',
        reason: 'not sent: loan L2 was rejected',
      },
    ]);
  });

  it('a loan with a conversion error in an optional field is rejected, though what is left would pass', () => {
    const r = validateGroup(
      group({
        loans: [
          loan('L1', 2, [], {}, [{ field: 'funded_amount', column: 'Funded', reason: 'not a number' }]),
          loan('L2', 3),
        ],
      }),
    );
    expect(r.rejects).toEqual([
      {
        level: 'loan',
        src: 0,
        row: 2,
        customerId: 'C1',
        loanId: 'L1',
        field: 'funded_amount',
        reason: 'not a number (column "Funded")',
      },
    ]);
    expect(r.valid?.loans).toBe(1);
  });

  it('a required value that failed conversion is reported once, not again as missing by the schema', () => {
    const l = loan('L1', 2, [], {}, [{ field: 'applied_at', column: 'Applied', reason: 'not a date' }]);
    delete l.fields.applied_at;
    const p = payment('P1', 3, {}, [{ field: 'payment_at', column: 'Posted', reason: 'not a date' }]);
    delete p.fields.payment_at;
    const r = validateGroup(group({ loans: [l, loan('L2', 4, [p])] }));
    expect(r.rejects.map((x) => [x.level, x.field, x.reason])).toEqual([
      ['loan', 'applied_at', 'not a date (column "Applied")'],
      ['payment', 'payment_at', 'not a date (column "Posted")'],
    ]);
  });

  it('a loan without an id: its rejects carry no loan id, and its payments say "(no id)"', () => {
    const r = validateGroup(group({ loans: [loan('', 2, [payment('P1', 3)], { loan_id: '' })] }));
    const loanReject = r.rejects.find((x) => x.level === 'loan')!;
    expect(loanReject.loanId).toBeUndefined();
    expect(loanReject.field).toBe('loan_id');
    expect(r.rejects.find((x) => x.level === 'payment')).toMatchObject({
      loanId: undefined,
      reason: 'not sent: loan (no id) was rejected',
    });
    expect(r.valid).toBeUndefined();
    expect(r.rejects.at(-1)).toEqual({
      level: 'customer',
      src: 0,
      row: 2,
      customerId: 'C1',
      field: 'loans',
      reason: 'not sent: none of its loans could be sent',
    });
    expect(r.rejected).toEqual({ customers: 1, loans: 1, payments: 1 });
  });

  it('a schema problem without a field is kept without one', () => {
    // Neither lead_id nor management_system_id: the rule names both fields.
    const r = validateGroup(group({ loans: [loan('L1', 2, [], { lead_id: undefined })] }));
    const fields = r.rejects.filter((x) => x.level === 'loan').map((x) => x.field);
    expect(fields).toEqual(['lead_id', 'management_system_id']);
  });

  it('a customer with problems: every loan and payment is not sent, the customer rejected once per problem', () => {
    const r = validateGroup(
      group({
        origin: { src: 2, row: 9 },
        errors: [
          { field: 'customer_id', column: 'Customer', reason: 'must not be empty' },
          { field: '', reason: 'unreadable' },
        ],
        loans: [loan('L1', 2, [payment('P1', 3), payment('P2', 4)]), loan('', 5)],
      }),
    );
    expect(r.valid).toBeUndefined();
    expect(r.payload).toBeUndefined();
    expect(r.seen).toEqual({ customers: 1, loans: 2, payments: 2 });
    expect(r.rejected).toEqual({ customers: 1, loans: 2, payments: 2 });
    const reason = 'not sent: customer C1 was rejected';
    expect(r.rejects).toEqual([
      { level: 'loan', src: 0, row: 2, customerId: 'C1', loanId: 'L1', reason },
      { level: 'payment', src: 1, row: 3, customerId: 'C1', loanId: 'L1', paymentId: 'P1', reason },
      { level: 'payment', src: 1, row: 4, customerId: 'C1', loanId: 'L1', paymentId: 'P2', reason },
      { level: 'loan', src: 0, row: 5, customerId: 'C1', loanId: undefined, reason },
      {
        level: 'customer',
        src: 2,
        row: 9,
        customerId: 'C1',
        field: 'customer_id',
        reason: 'must not be empty (column "Customer")',
      },
      { level: 'customer', src: 2, row: 9, customerId: 'C1', field: undefined, reason: 'unreadable' },
    ]);
  });

  it('a customer with problems and a payment without an id', () => {
    const r = validateGroup(
      group({ errors: [{ field: 'x', reason: 'bad' }], loans: [loan('L1', 2, [payment('', 3, { payment_id: '' })])] }),
    );
    expect(r.rejects[1]).toMatchObject({ level: 'payment', paymentId: undefined, loanId: 'L1' });
  });

  it('a customer without loans, or with only payments, or whose loans are all gone', () => {
    const none = validateGroup(group({}));
    expect(none.valid).toBeUndefined();
    expect(none.rejects).toEqual([
      { level: 'customer', src: 0, row: 2, customerId: 'C1', field: 'loans', reason: 'must hold at least one loan' },
    ]);
    expect(none.rejected).toEqual({ customers: 1, loans: 0, payments: 0 });
    expect(none.seen).toEqual({ customers: 1, loans: 0, payments: 0 });

    const orphans = validateGroup(
      group({
        orphans: [
          { loanId: 'L9', payments: [payment('P1', 3), payment('P2', 4)] },
          { loanId: 'L8', payments: [] },
        ],
      }),
    );
    expect(orphans.rejects).toEqual([
      {
        level: 'payment',
        src: 1,
        row: 3,
        customerId: 'C1',
        loanId: 'L9',
        paymentId: 'P1',
        field: 'loan_id',
        reason: 'loan L9 of customer C1 is not in the input',
      },
      {
        level: 'payment',
        src: 1,
        row: 4,
        customerId: 'C1',
        loanId: 'L9',
        paymentId: 'P2',
        field: 'loan_id',
        reason: 'loan L9 of customer C1 is not in the input',
      },
      {
        level: 'customer',
        src: 0,
        row: 2,
        customerId: 'C1',
        field: 'loans',
        reason: 'no loan in the input (only payments)',
      },
    ]);
    expect(orphans.seen).toEqual({ customers: 1, loans: 0, payments: 2 });
    expect(orphans.rejected).toEqual({ customers: 1, loans: 0, payments: 2 });
  });

  it('orphan payments beside a loan that is sent: only the orphans are rejected', () => {
    const r = validateGroup(
      group({ loans: [loan('L1', 2)], orphans: [{ loanId: 'L9', payments: [payment('P1', 3)] }] }),
    );
    expect(r.valid?.loans).toBe(1);
    expect(r.rejected).toEqual({ customers: 0, loans: 0, payments: 1 });
    expect(r.seen).toEqual({ customers: 1, loans: 1, payments: 1 });
    expect(r.rejects).toHaveLength(1);
  });

  it('duplicates: each superseded record is listed with the id field, its ids and the record that won', () => {
    const r = validateGroup(
      group({
        loans: [loan('L1', 2)],
        duplicates: [
          { level: 'customer', customerId: 'C1', src: 0, row: 1, winner: { src: 0, row: 2 } },
          { level: 'loan', customerId: 'C1', loanId: 'L1', src: 0, row: 3, winner: { src: 0, row: 4 } },
          { level: 'loan', customerId: 'C1', loanId: 'L1', src: 0, row: 5, winner: { src: 0, row: 6 } },
          {
            level: 'payment',
            customerId: 'C1',
            loanId: 'L1',
            paymentId: 'P1',
            src: 1,
            row: 7,
            winner: { src: 1, row: 8 },
          },
        ],
      }),
    );
    expect(r.duplicates).toEqual({ customers: 1, loans: 2, payments: 1 });
    expect(r.seen).toEqual({ customers: 2, loans: 3, payments: 1 });
    expect(r.rejected).toEqual(zeroCounts());
    expect(r.rejects).toEqual([
      {
        level: 'customer',
        src: 0,
        row: 1,
        customerId: 'C1',
        loanId: undefined,
        paymentId: undefined,
        field: 'customer_id',
        reason: 'duplicate customer_id',
        supersededBy: { src: 0, row: 2 },
      },
      {
        level: 'loan',
        src: 0,
        row: 3,
        customerId: 'C1',
        loanId: 'L1',
        paymentId: undefined,
        field: 'loan_id',
        reason: 'duplicate loan_id',
        supersededBy: { src: 0, row: 4 },
      },
      {
        level: 'loan',
        src: 0,
        row: 5,
        customerId: 'C1',
        loanId: 'L1',
        paymentId: undefined,
        field: 'loan_id',
        reason: 'duplicate loan_id',
        supersededBy: { src: 0, row: 6 },
      },
      {
        level: 'payment',
        src: 1,
        row: 7,
        customerId: 'C1',
        loanId: 'L1',
        paymentId: 'P1',
        field: 'payment_id',
        reason: 'duplicate payment_id',
        supersededBy: { src: 1, row: 8 },
      },
    ]);
    expect(r.valid?.loans).toBe(1);
  });

  it('zeroCounts gives a fresh object each time', () => {
    const a = zeroCounts();
    a.loans++;
    expect(zeroCounts()).toEqual({ customers: 0, loans: 0, payments: 0 });
  });
});
