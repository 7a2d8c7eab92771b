import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxInProcess } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { apiClient, getToken, http } from './support.js';

const leadLoan = (loanId: string, extra: Record<string, unknown> = {}) => ({
  loan_id: loanId,
  lead_id: 7,
  loan_amount: 50_000,
  applied_at: '2024-01-05T10:00:00Z',
  ...extra,
});

const batchLoan = (loanId: string, payments: unknown[], extra: Record<string, unknown> = {}) => ({
  loan_id: loanId,
  lead_id: 7,
  is_lead_loan: true,
  loan_amount: 50_000,
  applied_at: '2024-01-05T10:00:00Z',
  payments,
  ...extra,
});

const batchPayment = (paymentId: string, extra: Record<string, unknown> = {}) => ({
  payment_id: paymentId,
  payment_amount: 2500,
  payment_status: 'Paid',
  payment_at: '2024-02-05T10:00:00Z',
  ...extra,
});

describe('loan performance', () => {
  let sb: TestSandbox;
  let api: ReturnType<typeof apiClient>;
  beforeAll(async () => {
    sb = await startSandboxInProcess();
    api = apiClient(sb.baseUrl, await getToken(sb));
  });
  afterAll(() => sb.stop());

  it('requires a bearer token', async () => {
    const res = await http(sb.baseUrl, 'POST', '/api/v1/loan-performance/customers', {
      body: { customer_id: 'X', lead_loan: leadLoan('L') },
    });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Unauthenticated.' });
  });

  describe('upsert customer', () => {
    it('creates (201) then updates (200) the customer and its lead loan, returning the stored object', async () => {
      const created = await api.post('/api/v1/loan-performance/customers', {
        customer_id: 'CUST-1',
        lead_loan: leadLoan('LOAN-1', { loan_status: 'Approved' }),
      });
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({
        customer_id: 'CUST-1',
        lead_loan: {
          loan_id: 'LOAN-1',
          lead_id: 7,
          is_lead_loan: true,
          loan_amount: 50_000,
          loan_status: 'Approved',
          applied_at: '2024-01-05T10:00:00Z',
        },
      });
      const updated = await api.post('/api/v1/loan-performance/customers', {
        customer_id: 'CUST-1',
        lead_loan: leadLoan('LOAN-1', { loan_status: 'Originated' }),
      });
      expect(updated.status).toBe(200);
      expect(updated.body.data.lead_loan.loan_status).toBe('Originated');
      const stats = await sb.stats();
      expect(stats.customers).toBe(1);
      expect(stats.loans).toBe(1);
    });

    it('answers 422 with every invalid field in the documented shape', async () => {
      const res = await api.post('/api/v1/loan-performance/customers', {
        customer_id: '',
        lead_loan: { loan_id: 'L', loan_amount: 12.5, applied_at: '2024-01-05', management_system_id: 3 },
        extra: true,
      });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('The given data was invalid.');
      expect(Object.keys(res.body.errors).sort()).toEqual(
        [
          'customer_id',
          'extra',
          'lead_loan.applied_at',
          'lead_loan.lead_id',
          'lead_loan.loan_amount',
          'lead_loan.management_system_id',
        ].sort(),
      );
      for (const messages of Object.values(res.body.errors)) expect(messages).toEqual([expect.any(String)]);
    });
  });

  describe('upsert loan', () => {
    it('creates and updates a loan of an existing customer; absent fields keep their stored values', async () => {
      await api.post('/api/v1/loan-performance/customers', { customer_id: 'CUST-2', lead_loan: leadLoan('LOAN-A') });
      const body = {
        loan_id: 'LOAN-B',
        management_system_id: 2,
        loan_amount: 10_000,
        applied_at: '2024-03-01T09:00:00Z',
        esigned_at: '2024-03-01T09:30:00Z',
      };
      const created = await api.post('/api/v1/loan-performance/customers/CUST-2/loans', body);
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({
        customer_id: 'CUST-2',
        loan_id: 'LOAN-B',
        management_system_id: 2,
        is_lead_loan: false,
        esigned_at: '2024-03-01T09:30:00Z',
      });
      const { esigned_at: _dropped, ...withoutEsign } = body;
      const updated = await api.post('/api/v1/loan-performance/customers/CUST-2/loans', {
        ...withoutEsign,
        loan_status: 'Paid In Full',
        lead_id: 9,
      });
      expect(updated.status).toBe(200);
      expect(updated.body.data).toMatchObject({
        loan_status: 'Paid In Full',
        lead_id: 9,
        management_system_id: 2,
        esigned_at: '2024-03-01T09:30:00Z',
      });
    });

    it('answers 404 for an unknown customer', async () => {
      const res = await api.post('/api/v1/loan-performance/customers/NO-SUCH/loans', {
        loan_id: 'L',
        lead_id: 1,
        loan_amount: 1,
        applied_at: '2024-03-01T09:00:00Z',
      });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Not Found' });
    });

    it('answers 422 when neither lead_id nor management_system_id is given, and for is_lead_loan', async () => {
      const res = await api.post('/api/v1/loan-performance/customers/CUST-2/loans', {
        loan_id: 'L',
        loan_amount: 1,
        applied_at: '2024-03-01T09:00:00Z',
        is_lead_loan: true,
      });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors).sort()).toEqual(['is_lead_loan', 'lead_id', 'management_system_id']);
    });
  });

  describe('upsert payment', () => {
    it('creates and updates a payment of an existing loan, bank fields included', async () => {
      await api.post('/api/v1/loan-performance/customers', { customer_id: 'CUST-3', lead_loan: leadLoan('LOAN-3') });
      const body = {
        loan_id: 'LOAN-3',
        lead_id: 7,
        payment_id: 'PAY-1',
        payment_amount: 2500,
        payment_mode: 'Money Gram',
        bank_routing_number: '011000015',
        bank_account_number: '99887766',
      };
      const created = await api.post('/api/v1/loan-performance/customers/CUST-3/payments', body);
      expect(created.status).toBe(201);
      expect(created.body.data).toMatchObject({
        customer_id: 'CUST-3',
        loan_id: 'LOAN-3',
        payment_id: 'PAY-1',
        payment_mode: 'Money Gram',
        bank_account_number: '99887766',
      });
      const updated = await api.post('/api/v1/loan-performance/customers/CUST-3/payments', {
        ...body,
        payment_status: 'Returned',
        return_code: 'R01',
        returned_at: '2024-02-07T00:00:00Z',
      });
      expect(updated.status).toBe(200);
      expect(updated.body.data).toMatchObject({ payment_status: 'Returned', return_code: 'R01', payment_amount: 2500 });
    });

    it('answers 404 for an unknown customer and for an unknown loan', async () => {
      const body = { loan_id: 'LOAN-3', lead_id: 7, payment_id: 'PAY-X' };
      expect((await api.post('/api/v1/loan-performance/customers/NO-SUCH/payments', body)).status).toBe(404);
      const unknownLoan = await api.post('/api/v1/loan-performance/customers/CUST-3/payments', {
        ...body,
        loan_id: 'NO-LOAN',
      });
      expect(unknownLoan.status).toBe(404);
      expect(unknownLoan.body).toEqual({ message: 'Not Found' });
    });

    it('answers 422 for return_code without returned_at and fail_code without failed_at', async () => {
      const res = await api.post('/api/v1/loan-performance/customers/CUST-3/payments', {
        loan_id: 'LOAN-3',
        lead_id: 7,
        payment_id: 'P',
        return_code: 'R01',
        fail_code: 'X',
      });
      expect(res.status).toBe(422);
      expect(res.body.errors.returned_at).toEqual([expect.stringContaining('return_code')]);
      expect(res.body.errors.failed_at).toEqual([expect.stringContaining('fail_code')]);
    });
  });

  describe('customer batch', () => {
    it('stores valid objects and lists every skipped one with its path, id and reasons', async () => {
      const before = await sb.stats();
      const res = await api.post('/api/v1/loan-performance/batches/customers', {
        customers: [
          {
            customer_id: 'B-1',
            loans: [
              batchLoan('B-1-L1', [
                batchPayment('P1'),
                batchPayment('P2'),
                batchPayment('P3', { payment_at: 'yesterday' }),
              ]),
              batchLoan('B-1-L2', [batchPayment('P1')], { lead_id: undefined }),
            ],
          },
          { customer_id: 'B-2', loans: [batchLoan('B-2-L1', [batchPayment('P1', { bank_account_number: '1' })])] },
          { loans: [batchLoan('B-3-L1', [])] },
          { customer_id: 'B-4', loans: [batchLoan('B-4-L1', [batchPayment('P1')])] },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body.data.accepted).toEqual({ customers: 3, loans: 3, payments: 3 });
      const skipped = res.body.data.skipped as { path: string; id: string | null; errors: string[] }[];
      expect(skipped.map((s) => [s.path, s.id])).toEqual([
        ['customers.0.loans.0.payments.2', 'P3'],
        ['customers.0.loans.1', 'B-1-L2'],
        ['customers.1.loans.0.payments.0', 'P1'],
        ['customers.2', null],
      ]);
      expect(skipped[0]!.errors).toEqual([expect.stringMatching(/^payment_at: /)]);
      expect(skipped[1]!.errors.join(' ')).toMatch(/lead_id/);
      expect(skipped[2]!.errors).toEqual([expect.stringMatching(/^bank_account_number: /)]);
      expect(skipped[3]!.errors).toEqual([expect.stringMatching(/^customer_id: /)]);
      const after = await sb.stats();
      expect(after.customers - before.customers).toBe(3);
      expect(after.loans - before.loans).toBe(3);
      expect(after.payments - before.payments).toBe(3);
    });

    it('upserts: sending the same batch again changes no counts', async () => {
      const batch = {
        customers: [{ customer_id: 'R-1', loans: [batchLoan('R-1-L1', [batchPayment('P1'), batchPayment('P2')])] }],
      };
      expect((await api.post('/api/v1/loan-performance/batches/customers', batch)).body.data.accepted).toEqual({
        customers: 1,
        loans: 1,
        payments: 2,
      });
      const before = await sb.stats();
      const again = await api.post('/api/v1/loan-performance/batches/customers', batch);
      expect(again.body.data).toEqual({ accepted: { customers: 1, loans: 1, payments: 2 }, skipped: [] });
      const after = await sb.stats();
      expect([after.customers, after.loans, after.payments]).toEqual([before.customers, before.loans, before.payments]);
    });

    it('stores what the same records sent one by one would: a repeated key takes the later fields, absent ones stay', async () => {
      const res = await api.post('/api/v1/loan-performance/batches/customers', {
        customers: [
          {
            customer_id: 'D-1',
            loans: [
              batchLoan('D-1-L1', [batchPayment('P1', { payment_type: 'Payment' })], { loan_status: 'Current' }),
              batchLoan('D-1-L1', [batchPayment('P1', { payment_amount: 9900, payment_status: undefined })], {
                loan_amount: 60_000,
              }),
            ],
          },
          { customer_id: 'D-1', loans: [batchLoan('D-1-L1', [], { is_lead_loan: false })] },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ accepted: { customers: 2, loans: 3, payments: 2 }, skipped: [] });
      const payment = await api.post('/api/v1/loan-performance/customers/D-1/payments', {
        loan_id: 'D-1-L1',
        lead_id: 7,
        payment_id: 'P1',
        fees: 5,
      });
      expect(payment.status).toBe(200);
      expect(payment.body.data).toMatchObject({
        customer_id: 'D-1',
        loan_id: 'D-1-L1',
        payment_id: 'P1',
        payment_amount: 9900,
        payment_type: 'Payment',
        payment_status: 'Paid',
        payment_at: '2024-02-05T10:00:00Z',
        fees: 5,
      });
      const loan = await api.post('/api/v1/loan-performance/customers/D-1/loans', {
        loan_id: 'D-1-L1',
        lead_id: 7,
        loan_amount: 60_000,
        applied_at: '2024-01-05T10:00:00Z',
      });
      expect(loan.status).toBe(200);
      expect(loan.body.data).toMatchObject({ loan_status: 'Current', loan_amount: 60_000, is_lead_loan: false });
    });

    it('updates what the single routes stored: the same rows, fields kept unless sent, every field in its column', async () => {
      const customer = await api.post('/api/v1/loan-performance/customers', {
        customer_id: 'U-1',
        lead_loan: leadLoan('U-1-L1', { loan_status: 'Current', funded_amount: 49_000 }),
      });
      expect(customer.status).toBe(201);
      const first = await api.post('/api/v1/loan-performance/customers/U-1/payments', {
        loan_id: 'U-1-L1',
        lead_id: 7,
        payment_id: 'P1',
        payment_amount: 100,
        bank_account_number: '1234',
      });
      expect(first.status).toBe(201);
      const before = await sb.stats();
      // Every field a batch payment may carry, each with a value of its own.
      const full = {
        payment_id: 'P1',
        payment_amount: 2501,
        payment_type: 'Additional Payment',
        payment_mode: 'Debit Card',
        payment_status: 'Returned',
        principal: 2001,
        interest: 401,
        fees: 99,
        return_code: 'R01',
        returned_at: '2024-02-07T10:00:00Z',
        fail_code: 'F9',
        failed_at: '2024-02-06T10:00:00Z',
        payment_at: '2024-02-05T10:00:00Z',
      };
      const res = await api.post('/api/v1/loan-performance/batches/customers', {
        customers: [
          {
            customer_id: 'U-1',
            loans: [
              batchLoan(
                'U-1-L1',
                [
                  full,
                  {
                    payment_id: 'P2',
                    fail_code: 'F1',
                    failed_at: '2024-02-08T10:00:00Z',
                    payment_at: '2024-02-08T10:00:00Z',
                  },
                ],
                {
                  is_lead_loan: false,
                  loan_amount: 70_000,
                },
              ),
              batchLoan('U-1-L2', [batchPayment('P1')]),
            ],
          },
        ],
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ accepted: { customers: 1, loans: 2, payments: 3 }, skipped: [] });
      const after = await sb.stats();
      expect([after.customers, after.loans, after.payments]).toEqual([
        before.customers,
        before.loans + 1,
        before.payments + 2,
      ]);
      const view = async (loanId: string, paymentId: string) =>
        (
          await api.post('/api/v1/loan-performance/customers/U-1/payments', {
            loan_id: loanId,
            lead_id: 7,
            payment_id: paymentId,
          })
        ).body.data;
      expect(await view('U-1-L1', 'P1')).toMatchObject({
        ...full,
        bank_account_number: '1234',
        bank_routing_number: null,
      });
      expect(await view('U-1-L1', 'P2')).toMatchObject({
        fail_code: 'F1',
        failed_at: '2024-02-08T10:00:00Z',
        payment_at: '2024-02-08T10:00:00Z',
        payment_amount: null,
        payment_status: null,
        return_code: null,
      });
      expect(await view('U-1-L2', 'P1')).toMatchObject({ payment_amount: 2500, payment_status: 'Paid' });
      const loan = await api.post('/api/v1/loan-performance/customers/U-1/loans', {
        loan_id: 'U-1-L1',
        lead_id: 7,
        loan_amount: 70_000,
        applied_at: '2024-01-05T10:00:00Z',
      });
      expect(loan.status).toBe(200);
      expect(loan.body.data).toMatchObject({
        loan_status: 'Current',
        funded_amount: 49_000,
        loan_amount: 70_000,
        is_lead_loan: false,
      });
    });

    it('stores a loan with many payments as one by one would: every payment, repeats merged across chunks', async () => {
      const before = await sb.stats();
      // 70 payments: more than one multi-row statement's worth, with different field sets; P5 and P40 come again later.
      const payments = Array.from({ length: 70 }, (_, i) =>
        batchPayment(`P${i}`, i % 3 === 0 ? { interest: i, payment_status: undefined } : { fees: i }),
      );
      payments.push(
        batchPayment('P5', { payment_amount: 7700, payment_status: undefined, payment_at: '2024-03-05T10:00:00Z' }),
      );
      payments.push(batchPayment('P40', { principal: 4000, fees: undefined }));
      const res = await api.post('/api/v1/loan-performance/batches/customers', {
        customers: [{ customer_id: 'M-1', loans: [batchLoan('M-1-L1', payments)] }],
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ accepted: { customers: 1, loans: 1, payments: 72 }, skipped: [] });
      const after = await sb.stats();
      expect(after.payments - before.payments).toBe(70);
      const again = await api.post('/api/v1/loan-performance/batches/customers', {
        customers: [
          {
            customer_id: 'M-1',
            loans: [batchLoan('M-1-L1', [{ payment_id: 'P3', payment_amount: 1, payment_at: '2024-02-05T10:00:00Z' }])],
          },
        ],
      });
      expect(again.status).toBe(200);
      const view = async (paymentId: string) =>
        (
          await api.post('/api/v1/loan-performance/customers/M-1/payments', {
            loan_id: 'M-1-L1',
            lead_id: 7,
            payment_id: paymentId,
            payment_type: 'Payment',
          })
        ).body.data;
      expect(await view('P5')).toMatchObject({
        payment_amount: 7700,
        payment_status: 'Paid',
        fees: 5,
        interest: null,
        payment_at: '2024-03-05T10:00:00Z',
      });
      expect(await view('P40')).toMatchObject({ principal: 4000, fees: 40, payment_status: 'Paid' });
      expect(await view('P3')).toMatchObject({ payment_amount: 1, interest: 3, payment_status: null, fees: null });
      expect(await view('P69')).toMatchObject({ payment_amount: 2500, interest: 69, payment_status: null });
      expect((await sb.stats()).payments - before.payments).toBe(70);
    });

    it('stores payments of every field set and count: more statements than the sandbox keeps prepared', async () => {
      const before = await sb.stats();
      const optional = ['fees', 'interest', 'principal', 'payment_type'] as const;
      // 16 field sets x 1..32 payments a loan = 512 statement shapes.
      const customers = Array.from({ length: 512 }, (_, i) => {
        const extra = Object.fromEntries(
          optional
            .filter((_, f) => (Math.floor(i / 32) & (1 << f)) !== 0)
            .map((f) => [f, f === 'payment_type' ? 'Payment' : i]),
        );
        const payments = Array.from({ length: (i % 32) + 1 }, (_, p) => batchPayment(`P${p}`, extra));
        return { customer_id: `S-${i}`, loans: [batchLoan(`S-${i}-L1`, payments)] };
      });
      const res = await api.post('/api/v1/loan-performance/batches/customers', { customers });
      expect(res.status).toBe(200);
      expect(res.body.data.accepted).toEqual({ customers: 512, loans: 512, payments: 16 * 528 });
      expect((await sb.stats()).payments - before.payments).toBe(16 * 528);
      const payment = await api.post('/api/v1/loan-performance/customers/S-511/payments', {
        loan_id: 'S-511-L1',
        lead_id: 7,
        payment_id: 'P31',
        payment_status: 'Returned',
      });
      expect(payment.status).toBe(200);
      expect(payment.body.data).toMatchObject({ fees: 511, interest: 511, principal: 511, payment_type: 'Payment' });
    });

    it('answers 422 and stores nothing for more than 1000 customers', async () => {
      const before = await sb.stats();
      const customers = Array.from({ length: 1001 }, (_, i) => ({
        customer_id: `BIG-${i}`,
        loans: [batchLoan('L', [batchPayment('P')])],
      }));
      const res = await api.post('/api/v1/loan-performance/batches/customers', { customers });
      expect(res.status).toBe(422);
      expect(res.body.message).toBe('The given data was invalid.');
      expect(res.body.errors.customers).toEqual([expect.stringContaining('1000')]);
      const after = await sb.stats();
      expect(after.customers).toBe(before.customers);
      expect(after.payments).toBe(before.payments);
    });

    it('accepts exactly 1000 customers', async () => {
      const customers = Array.from({ length: 1000 }, (_, i) => ({
        customer_id: `MAX-${i}`,
        loans: [batchLoan('L', [batchPayment('P')])],
      }));
      const res = await api.post('/api/v1/loan-performance/batches/customers', { customers });
      expect(res.status).toBe(200);
      expect(res.body.data.accepted).toEqual({ customers: 1000, loans: 1000, payments: 1000 });
    });

    it('answers 422 when the body has no customers array', async () => {
      const res = await api.post('/api/v1/loan-performance/batches/customers', { clients: [] });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.errors).sort()).toEqual(['clients', 'customers']);
    });
  });
});
