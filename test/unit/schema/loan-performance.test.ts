import { describe, expect, it } from 'vitest';
import {
  APPLICATION_TYPES,
  BatchAnswerSchema,
  BatchCustomerSchema,
  BatchLoanSchema,
  BatchPaymentSchema,
  BatchResponseSchema,
  CustomerBatchSchema,
  CustomerUpsertSchema,
  LOAN_STATUSES,
  LOAN_TYPES,
  LeadLoanSchema,
  LoanUpsertSchema,
  MAX_BATCH_CUSTOMERS,
  PAYMENT_MODES,
  PAYMENT_STATUSES,
  PAYMENT_TYPES,
  PaymentUpsertSchema,
  UpsertAnswerSchema,
  UpsertResponseSchema,
  batchIssueOwner,
  groupBatchIssues,
} from '../../../src/schema/index.js';
import { expectIssue, expectValid, issuesOf, withField } from './helpers.js';

const leadLoan = {
  loan_id: 'L-1',
  lead_id: 42,
  application_type: 'New',
  loan_type: 'Installment',
  loan_status: 'Originated',
  loan_amount: 50000,
  funded_amount: 49000,
  first_payment_date: '2026-02-15',
  applied_at: '2026-01-05T14:30:00Z',
};

const loan = {
  ...leadLoan,
  management_system_id: 3,
  esigned_at: '2026-01-05T15:00:00Z',
  withdrawn_at: '2026-01-06T15:00:00Z',
  originated_at: '2026-01-07T15:00:00Z',
};

const batchPayment = {
  payment_id: 'P-1',
  payment_amount: 12500,
  payment_type: 'First Payment',
  payment_mode: 'ACH',
  payment_status: 'Paid',
  principal: 10000,
  interest: 2000,
  fees: 500,
  payment_at: '2026-02-15T09:00:00Z',
};

const singlePayment = {
  ...batchPayment,
  loan_id: 'L-1',
  lead_id: 42,
  bank_routing_number: '021000021',
  bank_account_number: '000123456789',
};

describe('enums', () => {
  it('spell every value as the contract does', () => {
    expect(APPLICATION_TYPES).toEqual(['New', 'Returning', 'Refinanced']);
    expect(LOAN_TYPES).toEqual(['Payday', 'Installment', 'Line Of Credit']);
    expect(LOAN_STATUSES).toHaveLength(11);
    expect(LOAN_STATUSES).toContain('Paid In Full');
    expect(PAYMENT_TYPES).toContain('Makeup Payment');
    expect(PAYMENT_STATUSES).toContain('Partially Paid');
    expect(PAYMENT_MODES).toEqual(
      expect.arrayContaining(['Money Gram', 'Loan Transfer', 'Western Union', 'ACH Collection']),
    );
    expect(PAYMENT_MODES.indexOf('Money Gram')).toBeLessThan(PAYMENT_MODES.indexOf('Wire Transfer'));
    expect(PAYMENT_MODES.indexOf('Western Union')).toBeGreaterThan(PAYMENT_MODES.indexOf('Wire Transfer'));
  });

  it.each(PAYMENT_MODES)('accepts the payment mode %s', (mode) => {
    expectValid(BatchPaymentSchema, { ...batchPayment, payment_mode: mode });
  });

  it('refuses values spelled differently and lists the allowed ones', () => {
    expectIssue(
      LoanUpsertSchema,
      { ...loan, loan_type: 'Line of Credit' },
      'loan_type',
      'must be one of: Payday, Installment',
    );
    expectIssue(LoanUpsertSchema, { ...loan, loan_status: 'paid in full' }, 'loan_status', 'must be one of');
    expectIssue(LoanUpsertSchema, { ...loan, application_type: 'Refinance' }, 'application_type', 'must be one of');
    expectIssue(
      BatchPaymentSchema,
      { ...batchPayment, payment_mode: 'Transfer Service A' },
      'payment_mode',
      'must be one of',
    );
    expectIssue(BatchPaymentSchema, { ...batchPayment, payment_type: 'payoff' }, 'payment_type', 'must be one of');
    expectIssue(BatchPaymentSchema, { ...batchPayment, payment_status: 'Bounced' }, 'payment_status', 'must be one of');
  });
});

describe('CustomerUpsertSchema and LeadLoanSchema', () => {
  it('accepts a customer with a full and a minimal lead loan', () => {
    expectValid(CustomerUpsertSchema, { customer_id: 'C-1', lead_loan: leadLoan });
    expectValid(CustomerUpsertSchema, {
      customer_id: 'C-1',
      lead_loan: { loan_id: 'L-1', lead_id: 1, loan_amount: 100, applied_at: '2026-01-05T14:30:00Z' },
    });
  });

  it('requires customer_id and lead_loan', () => {
    expectIssue(CustomerUpsertSchema, { lead_loan: leadLoan }, 'customer_id', 'required');
    expectIssue(CustomerUpsertSchema, { customer_id: '', lead_loan: leadLoan }, 'customer_id', 'must not be empty');
    expectIssue(CustomerUpsertSchema, { customer_id: 'C-1' }, 'lead_loan', 'required');
  });

  it.each(['loan_id', 'lead_id', 'loan_amount', 'applied_at'])('requires lead_loan.%s', (field) => {
    expectIssue(
      CustomerUpsertSchema,
      { customer_id: 'C', lead_loan: withField(leadLoan, field, undefined) },
      `lead_loan.${field}`,
      'required',
    );
  });

  it('requires lead_id even when management_system_id is given, and refuses management_system_id', () => {
    const issues = issuesOf(LeadLoanSchema, { ...withField(leadLoan, 'lead_id', undefined), management_system_id: 3 });
    expect(issues).toContainEqual({ path: 'lead_id', message: 'required' });
    expect(issues).toContainEqual({
      path: 'management_system_id',
      message: expect.stringContaining('not accepted in lead_loan'),
    });
  });

  it('refuses the loan fields a lead loan does not carry', () => {
    for (const field of ['esigned_at', 'withdrawn_at', 'originated_at', 'is_lead_loan']) {
      expectIssue(LeadLoanSchema, { ...leadLoan, [field]: loan.esigned_at }, field, 'unknown field');
    }
  });
});

describe('LoanUpsertSchema', () => {
  it('accepts lead_id, management_system_id, or both', () => {
    expectValid(LoanUpsertSchema, loan);
    expectValid(LoanUpsertSchema, withField(loan, 'lead_id', undefined));
    expectValid(LoanUpsertSchema, withField(loan, 'management_system_id', undefined));
  });

  it('needs at least one of lead_id and management_system_id', () => {
    const body = withField(withField(loan, 'lead_id', undefined), 'management_system_id', undefined);
    expectIssue(LoanUpsertSchema, body, 'lead_id', 'required when management_system_id is absent');
    expectIssue(LoanUpsertSchema, body, 'management_system_id', 'required when lead_id is absent');
  });

  it('reports the missing id together with other problems in one pass', () => {
    const body = { loan_id: 'L', loan_amount: 10.5, applied_at: '2026-01-05' };
    const paths = issuesOf(LoanUpsertSchema, body).map((issue) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(['loan_amount', 'applied_at', 'lead_id', 'management_system_id']));
  });

  it('requires loan_amount and applied_at', () => {
    expectIssue(LoanUpsertSchema, withField(loan, 'loan_amount', undefined), 'loan_amount', 'required');
    expectIssue(LoanUpsertSchema, withField(loan, 'applied_at', undefined), 'applied_at', 'required');
  });

  it('takes money as whole cents and ids as positive whole numbers', () => {
    expectIssue(LoanUpsertSchema, { ...loan, loan_amount: 500.5 }, 'loan_amount', 'whole number of cents');
    expectIssue(LoanUpsertSchema, { ...loan, funded_amount: '49000' }, 'funded_amount', 'expected number');
    expectIssue(LoanUpsertSchema, { ...loan, lead_id: 0 }, 'lead_id', 'positive whole number');
    expectIssue(LoanUpsertSchema, { ...loan, management_system_id: '3' }, 'management_system_id', 'expected number');
  });

  it('checks dates and datetimes', () => {
    expectIssue(
      LoanUpsertSchema,
      { ...loan, first_payment_date: '2026-02-30' },
      'first_payment_date',
      'not a real calendar date',
    );
    expectIssue(
      LoanUpsertSchema,
      { ...loan, applied_at: '2026-01-05T14:30:00.000Z' },
      'applied_at',
      'YYYY-MM-DDTHH:mm:ssZ',
    );
    expectIssue(LoanUpsertSchema, { ...loan, esigned_at: '2026-01-05' }, 'esigned_at', 'YYYY-MM-DDTHH:mm:ssZ');
    expectIssue(
      LoanUpsertSchema,
      { ...loan, originated_at: '2026-02-29T10:00:00Z' },
      'originated_at',
      'not a real date and time',
    );
  });

  it('refuses is_lead_loan, which belongs to batch loans only, and unknown fields', () => {
    expectIssue(
      LoanUpsertSchema,
      { ...loan, is_lead_loan: true },
      'is_lead_loan',
      'only part of loans in a customer batch',
    );
    expectIssue(LoanUpsertSchema, { ...loan, payments: [] }, 'payments', 'unknown field');
  });
});

describe('PaymentUpsertSchema', () => {
  it('accepts a full payment and a minimal one without payment_at', () => {
    expectValid(PaymentUpsertSchema, singlePayment);
    expectValid(PaymentUpsertSchema, { loan_id: 'L', management_system_id: 3, payment_id: 'P' });
  });

  it.each(['loan_id', 'payment_id'])('requires %s', (field) => {
    expectIssue(PaymentUpsertSchema, withField(singlePayment, field, undefined), field, 'required');
  });

  it('needs lead_id or management_system_id', () => {
    expectIssue(
      PaymentUpsertSchema,
      { loan_id: 'L', payment_id: 'P' },
      'lead_id',
      'required when management_system_id is absent',
    );
  });

  it('requires returned_at with return_code and failed_at with fail_code', () => {
    expectIssue(
      PaymentUpsertSchema,
      { ...singlePayment, return_code: 'R01' },
      'returned_at',
      'required when return_code is given',
    );
    expectIssue(
      PaymentUpsertSchema,
      { ...singlePayment, fail_code: 'F1' },
      'failed_at',
      'required when fail_code is given',
    );
    expectValid(PaymentUpsertSchema, { ...singlePayment, return_code: 'R01', returned_at: '2026-02-18T00:00:00Z' });
    expectValid(PaymentUpsertSchema, { ...singlePayment, fail_code: 'F1', failed_at: '2026-02-18T00:00:00Z' });
    expectValid(PaymentUpsertSchema, { ...singlePayment, returned_at: '2026-02-18T00:00:00Z' });
  });

  it('takes amounts as whole cents and a 9-digit routing number', () => {
    for (const field of ['payment_amount', 'principal', 'interest', 'fees']) {
      expectIssue(PaymentUpsertSchema, { ...singlePayment, [field]: 1.25 }, field, 'whole number of cents');
    }
    expectIssue(
      PaymentUpsertSchema,
      { ...singlePayment, bank_routing_number: '02100002' },
      'bank_routing_number',
      '9 digits',
    );
    expectIssue(
      PaymentUpsertSchema,
      { ...singlePayment, bank_account_number: '' },
      'bank_account_number',
      'must not be empty',
    );
  });
});

describe('batch shapes', () => {
  const batchLoan = { ...loan, is_lead_loan: true, payments: [batchPayment] };
  const customer = { customer_id: 'C-1', loans: [batchLoan] };

  it('accepts a batch and a loan without payments', () => {
    expectValid(CustomerBatchSchema, { customers: [customer] });
    expectValid(BatchLoanSchema, withField(batchLoan, 'payments', undefined));
  });

  it('requires is_lead_loan as a boolean on batch loans', () => {
    expectIssue(BatchLoanSchema, withField(batchLoan, 'is_lead_loan', undefined), 'is_lead_loan', 'required');
    expectIssue(BatchLoanSchema, { ...batchLoan, is_lead_loan: 'true' }, 'is_lead_loan', 'must be true or false');
  });

  it('needs lead_id or management_system_id on batch loans', () => {
    const body = withField(withField(batchLoan, 'lead_id', undefined), 'management_system_id', undefined);
    expectIssue(BatchLoanSchema, body, 'management_system_id', 'required when lead_id is absent');
  });

  it('requires payment_at and refuses bank fields in batch payments', () => {
    expectIssue(BatchPaymentSchema, withField(batchPayment, 'payment_at', undefined), 'payment_at', 'required');
    expectIssue(
      BatchPaymentSchema,
      { ...batchPayment, bank_routing_number: '021000021' },
      'bank_routing_number',
      'not accepted in batch payments',
    );
    expectIssue(
      BatchPaymentSchema,
      { ...batchPayment, bank_account_number: '1' },
      'bank_account_number',
      'not accepted in batch payments',
    );
    expectIssue(BatchPaymentSchema, { ...batchPayment, loan_id: 'L-1' }, 'loan_id', 'unknown field');
  });

  it('applies return and fail rules to batch payments', () => {
    expectIssue(
      BatchPaymentSchema,
      { ...batchPayment, return_code: 'R01' },
      'returned_at',
      'required when return_code is given',
    );
    expectIssue(
      BatchPaymentSchema,
      { ...batchPayment, fail_code: 'X' },
      'failed_at',
      'required when fail_code is given',
    );
  });

  it('requires customer_id and a non-empty loans array', () => {
    expectIssue(BatchCustomerSchema, { loans: [batchLoan] }, 'customer_id', 'required');
    expectIssue(BatchCustomerSchema, { customer_id: 'C' }, 'loans', 'required');
    expectIssue(BatchCustomerSchema, { customer_id: 'C', loans: [] }, 'loans', 'at least one loan');
  });

  it('takes 1 to 1000 customers', () => {
    const full = {
      customers: Array.from({ length: MAX_BATCH_CUSTOMERS }, (_, i) => ({ ...customer, customer_id: `C-${i}` })),
    };
    expectValid(CustomerBatchSchema, full);
    expectIssue(
      CustomerBatchSchema,
      { customers: [...full.customers, customer] },
      'customers',
      'at most 1000 customers',
    );
    expectIssue(CustomerBatchSchema, { customers: [] }, 'customers', 'at least one customer');
    expectIssue(CustomerBatchSchema, {}, 'customers', 'required');
  });

  it('renders deep paths with brackets', () => {
    const bad = {
      customers: [
        customer,
        customer,
        customer,
        {
          ...customer,
          loans: [
            { ...batchLoan, payments: [batchPayment, batchPayment, withField(batchPayment, 'payment_at', undefined)] },
          ],
        },
      ],
    };
    expectIssue(CustomerBatchSchema, bad, 'customers[3].loans[0].payments[2].payment_at', 'required');
  });
});

describe('batch skipping helpers', () => {
  it('finds the object an issue belongs to', () => {
    expect(batchIssueOwner(['customers', 3, 'loans', 0, 'payments', 2, 'payment_at'])).toBe(
      'customers.3.loans.0.payments.2',
    );
    expect(batchIssueOwner(['customers', 3, 'loans'])).toBe('customers.3');
    expect(batchIssueOwner(['customers', 3, 'loans', 1])).toBe('customers.3.loans.1');
    expect(batchIssueOwner(['customers'])).toBe('');
  });

  it('groups issues by skipped object with field-relative messages', () => {
    const result = CustomerBatchSchema.safeParse({
      customers: [
        { customer_id: 'C-0', loans: [{ ...loan, is_lead_loan: false, payments: [{ ...batchPayment, extra: 1 }] }] },
        { loans: [{ ...loan, is_lead_loan: true, loan_amount: 1.5 }] },
      ],
    });
    expect(result.success).toBe(false);
    expect(groupBatchIssues(result.error!)).toEqual(
      expect.arrayContaining([
        { path: 'customers.0.loans.0.payments.0', errors: ['extra: unknown field (not part of the request)'] },
        { path: 'customers.1', errors: ['customer_id: required'] },
        { path: 'customers.1.loans.0', errors: ['loan_amount: must be a whole number of cents'] },
      ]),
    );
    expect(groupBatchIssues(result.error!)).toHaveLength(3);
  });
});

describe('responses', () => {
  it('parses the single upsert response tolerantly', () => {
    expectValid(UpsertResponseSchema, { data: { customer_id: 'C-1' } });
    expectValid(UpsertResponseSchema, {});
    expectIssue(UpsertResponseSchema, { data: 'ok' }, 'data', 'expected record');
  });

  it('parses the batch response and refuses one without counts', () => {
    const body = {
      data: {
        accepted: { customers: 2, loans: 3, payments: 10 },
        skipped: [{ path: 'customers.3.loans.0.payments.2', id: 'P-9', errors: ['payment_at: required'] }],
      },
    };
    expect(BatchResponseSchema.parse(body).data.skipped[0]!.path).toBe('customers.3.loans.0.payments.2');
    expectValid(BatchResponseSchema, {
      data: { ...body.data, skipped: [{ path: 'customers.1', id: null, errors: [] }] },
    });
    expectIssue(BatchResponseSchema, { data: { skipped: [] } }, 'data.accepted', 'required');
  });
});

describe('BatchAnswerSchema: what acknowledges a batch', () => {
  it.each([
    ['{}', {}],
    ['{"data": {}}', { data: {} }],
    ['the sandbox answer', { data: { accepted: { customers: 1, loans: 1, payments: 0 }, skipped: [] } }],
    ['skips with reasons', { data: { skipped: [{ path: 'customers.0', id: 'C1', errors: ['x'] }] } }],
    ['an unknown data of another kind', { data: [{ customer_id: 'C1' }], meta: 1 }],
  ])('acknowledges %s', (_name, body) => {
    expect(BatchAnswerSchema.safeParse(body).success).toBe(true);
  });

  it.each([
    ['an array', ['ok']],
    ['a string', 'OK'],
    ['null', null],
    ['an error body', { error: 'Request blocked' }],
    ['a validation body', { message: 'The given data was invalid.', errors: { customers: ['required'] } }],
    ['skipped that is not a list', { data: { skipped: 'none' } }],
    ['skipped entries without a path', { data: { skipped: [{ id: 'C1' }] } }],
    ['counts that are not numbers', { data: { accepted: { customers: 'all', loans: 0, payments: 0 } } }],
  ])('does not acknowledge %s', (_name, body) => {
    expect(BatchAnswerSchema.safeParse(body).success).toBe(false);
  });
});

describe('UpsertAnswerSchema: what a single upsert may answer, when it answers with a body', () => {
  it('takes a JSON object, refuses anything else and error bodies', () => {
    for (const ok of [{}, { data: { customer_id: 'C1' } }, { message: 'Stored.' }])
      expect(UpsertAnswerSchema.safeParse(ok).success, JSON.stringify(ok)).toBe(true);
    for (const bad of [['ok'], 'OK', 1, null, { error: 'blocked' }, { errors: ['x'] }])
      expect(UpsertAnswerSchema.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });
});
