import { describe, expect, it } from 'vitest';
import {
  BankAccountSchema,
  INCOME_SOURCE_LABELS,
  IncomeSourceSchema,
  LEGACY_RESULT_LABELS,
  LegacyLeadSchema,
  LegacyResponseSchema,
  OPTIONAL_FIELD_NAMES,
  PRICE_REJECT_ERRORS,
  PriceRejectAcceptSchema,
  PriceRejectOfferSchema,
  REFERENCE_RELATION_LABELS,
  ReferenceSchema,
  describeLabels,
} from '../../../src/schema/index.js';
import { expectIssue, expectValid, issuesOf, withField } from './helpers.js';

const employedIncome = {
  is_primary: 1,
  income_source: 1,
  monthly_income: 4200.5,
  pay_frequency: 2,
  pay_frequency_type: 1,
  last_pay_date: '2026-01-02',
  next_pay_date: '2026-01-16',
  second_pay_date: '2026-01-30',
  payment_type: 3,
  compensation_type: 2,
  employer_name: 'Acme Corp',
  employer_state: 'TX',
  work_phone: '5125550199',
  employment_type: 1,
  months_at_job: 26,
};

const bankAccount = {
  is_primary: 1,
  bank_name: 'First Bank',
  bank_phone: '5125550111',
  bank_routing_number: '021000021',
  bank_account_number: '000123456789',
  bank_account_type: 1,
  months_at_bank: 48,
};

const lead = {
  api_key: 'campaign-key',
  ip_address: '203.0.113.7',
  source_url: 'https://loans.example.com/apply',
  affiliate_id: 'AFF-1',
  user_agent: 'Mozilla/5.0',
  loan_request_amount: 500,
  social_security_number: '123456789',
  first_name: 'Jane',
  last_name: 'Doe',
  date_of_birth: '1990-05-17',
  drivers_license_state: 'TX',
  drivers_license_number: 'D1234567',
  is_military: 0,
  email: 'jane.doe@example.com',
  address: '1 Main St',
  city: 'Austin',
  state: 'TX',
  zip: '73301',
  home_phone: '5125550100',
  rent_or_own: 1,
};

const fullLead = {
  ...lead,
  lead_flow_identifier: 'flow-a',
  decision_flow_identifier: 'decision-b',
  affiliate_sub_id: 'sub',
  affiliate_type: 2,
  reference_id: 'ref',
  lead_reference_id: 'our-123',
  time_stamp: '2026-01-05 08:30:00',
  advertising_method: 1,
  alt_loan_request_amount: 450.75,
  middle_name: 'Q',
  name_suffix: 1,
  gender: 2,
  marital_status: 2,
  mother_maiden_name: 'Smith',
  address2: 'Apt 4',
  mailing_address: 'PO Box 1',
  mailing_city: 'Austin',
  mailing_state: 'TX',
  mailing_zip: '737010001',
  cell_phone: '5125550101',
  preferred_phone: 2,
  best_contact_time: 3,
  monthly_rent_or_mortgage: 1200,
  months_at_address: 1234,
  income_sources: [employedIncome],
  bank_accounts: [bankAccount],
  references: [{ reference_first_name: 'John', reference_phone: '5125550122', reference_relation: 5 }],
  optional_1: 'x'.repeat(255),
  optional_15: 'last',
};

describe('LegacyLeadSchema: a valid lead', () => {
  it('accepts the required fields alone and every field together', () => {
    expectValid(LegacyLeadSchema, lead);
    expectValid(LegacyLeadSchema, fullLead);
  });

  it('knows all fifteen optional fields', () => {
    expect(OPTIONAL_FIELD_NAMES).toHaveLength(15);
    for (const field of OPTIONAL_FIELD_NAMES) expectValid(LegacyLeadSchema, { ...lead, [field]: 'v' });
    expectIssue(LegacyLeadSchema, { ...lead, optional_16: 'v' }, 'optional_16', 'unknown field');
  });
});

describe('LegacyLeadSchema: required fields', () => {
  it.each([
    'ip_address',
    'source_url',
    'affiliate_id',
    'user_agent',
    'loan_request_amount',
    'social_security_number',
    'first_name',
    'last_name',
    'date_of_birth',
    'drivers_license_state',
    'drivers_license_number',
    'is_military',
    'email',
    'address',
    'city',
    'state',
    'zip',
    'home_phone',
    'rent_or_own',
  ])('%s is required', (field) => {
    expectIssue(LegacyLeadSchema, withField(lead, field, undefined), field, 'required');
  });

  it('takes campaign_code in place of api_key, and needs one of them', () => {
    expectValid(LegacyLeadSchema, { ...withField(lead, 'api_key', undefined), campaign_code: 'RADIO1' });
    const neither = withField(lead, 'api_key', undefined);
    expectIssue(LegacyLeadSchema, neither, 'api_key', 'required when campaign_code is absent');
    expectIssue(LegacyLeadSchema, neither, 'campaign_code', 'required when api_key is absent');
    expectIssue(LegacyLeadSchema, { ...lead, api_key: '' }, 'campaign_code', 'required when api_key is absent');
  });

  it('reports every problem of a bad lead in one pass', () => {
    const issues = issuesOf(LegacyLeadSchema, { ...withField(lead, 'api_key', undefined), zip: '7330', gender: 3 });
    expect(issues.map((issue) => issue.path)).toEqual(
      expect.arrayContaining(['zip', 'gender', 'api_key', 'campaign_code']),
    );
  });
});

describe('LegacyLeadSchema: formats', () => {
  it.each([
    ['social_security_number', '123-45-6789', '9 digits'],
    ['social_security_number', '12345678', '9 digits'],
    ['home_phone', '512-555-0100', '10 digits'],
    ['home_phone', '15125550100', '10 digits'],
    ['cell_phone', '555010', '10 digits'],
    ['zip', '73301-0001', 'no delimiters'],
    ['zip', '7330', '5-digit ZIP'],
    ['mailing_zip', '7330A', '5-digit ZIP'],
    ['state', 'Texas', '2-letter US state code'],
    ['state', 'XX', '2-letter US state code'],
    ['drivers_license_state', 'T', '2-letter US state code'],
    ['mailing_state', 'ZZ', '2-letter US state code'],
    ['date_of_birth', '1990-02-30', 'not a real calendar date'],
    ['date_of_birth', '05/17/1990', 'YYYY-MM-DD'],
    ['time_stamp', '2026-01-05T08:30:00Z', 'yyyy-mm-dd hh:mm:ss'],
    ['time_stamp', '2026-01-05 24:30:00', 'yyyy-mm-dd hh:mm:ss'],
    ['ip_address', '256.1.1.1', 'IPv4 or IPv6'],
    ['ip_address', 'localhost', 'IPv4 or IPv6'],
    ['email', 'jane@', 'invalid domain'],
    ['lead_flow_identifier', 'f'.repeat(65), 'at most 64 characters'],
    ['decision_flow_identifier', 'd'.repeat(65), 'at most 64 characters'],
    ['optional_7', 'o'.repeat(256), 'at most 255 characters'],
    ['source_url', `https://x.test/${'p'.repeat(250)}`, 'drop the query parameters'],
    ['loan_request_amount', 0, 'greater than 0'],
    ['loan_request_amount', '500', 'expected number'],
    ['alt_loan_request_amount', -5, 'greater than 0'],
    ['monthly_rent_or_mortgage', -1, '0 or more'],
    ['months_at_address', 1.5, 'whole number of months'],
    ['first_name', '', 'must not be empty'],
  ])('%s = %j is refused (%s)', (field, value, message) => {
    expectIssue(LegacyLeadSchema, { ...lead, [field]: value }, field, message);
  });

  it.each([
    ['ip_address', '2001:db8::1'],
    ['ip_address', '::1'],
    ['state', 'ca'],
    ['drivers_license_state', 'PR'],
    ['zip', '737010001'],
    ['loan_request_amount', 500.0],
    ['loan_request_amount', 750.25],
    ['lead_flow_identifier', 'f'.repeat(64)],
    ['time_stamp', '2024-02-29 23:59:59'],
  ])('%s = %j is accepted', (field, value) => {
    expectValid(LegacyLeadSchema, { ...lead, [field]: value });
  });
});

describe('LegacyLeadSchema: integer enums', () => {
  it.each([
    ['affiliate_type', 4],
    ['advertising_method', 10],
    ['name_suffix', 12],
    ['gender', 0],
    ['is_military', 2],
    ['marital_status', 6],
    ['preferred_phone', 4],
    ['best_contact_time', 6],
    ['rent_or_own', 4],
  ])('%s refuses %d and names the allowed values', (field, value) => {
    expectIssue(LegacyLeadSchema, { ...lead, [field]: value }, field, 'must be one of ');
    expect(issuesOf(LegacyLeadSchema, { ...lead, [field]: value })[0]!.message).toMatch(/^must be one of \d \(/);
  });

  it('refuses enum values sent as strings or labels', () => {
    expectIssue(LegacyLeadSchema, { ...lead, rent_or_own: '1' }, 'rent_or_own', 'must be one of');
    expectIssue(LegacyLeadSchema, { ...lead, gender: 'Male' }, 'gender', '1 (Male), 2 (Female)');
    expectIssue(LegacyLeadSchema, { ...lead, is_military: true }, 'is_military', '0 (false), 1 (true)');
  });

  it('describes a label map in words', () => {
    expect(describeLabels(INCOME_SOURCE_LABELS)).toContain('1 (Employed), 2 (Social Security)');
    expect(describeLabels(REFERENCE_RELATION_LABELS)).toContain('10 (Other)');
  });
});

describe('IncomeSourceSchema', () => {
  it('accepts an employed source and a benefit source without employer fields', () => {
    expectValid(IncomeSourceSchema, employedIncome);
    expectValid(IncomeSourceSchema, {
      is_primary: 0,
      income_source: 2,
      last_pay_amount: 1500,
      pay_frequency: 4,
      next_pay_date: '2026-02-03',
      payment_type: 3,
    });
  });

  it.each(['is_primary', 'pay_frequency', 'next_pay_date', 'payment_type'])('requires %s', (field) => {
    expectIssue(IncomeSourceSchema, withField(employedIncome, field, undefined), field, 'required');
  });

  it('needs monthly_income or last_pay_amount', () => {
    const neither = withField(employedIncome, 'monthly_income', undefined);
    expectIssue(IncomeSourceSchema, neither, 'monthly_income', 'required when last_pay_amount is absent');
    expectIssue(IncomeSourceSchema, neither, 'last_pay_amount', 'required when monthly_income is absent');
    expectValid(IncomeSourceSchema, { ...neither, last_pay_amount: 900 });
  });

  it.each(['employer_name', 'work_phone', 'months_at_job'])(
    'requires %s when income_source is 1 (Employed)',
    (field) => {
      expectIssue(
        IncomeSourceSchema,
        withField(employedIncome, field, undefined),
        field,
        'required when income_source is 1 (Employed)',
      );
      expectValid(IncomeSourceSchema, { ...withField(employedIncome, field, undefined), income_source: 5 });
      expectValid(
        IncomeSourceSchema,
        withField(withField(employedIncome, field, undefined), 'income_source', undefined),
      );
    },
  );

  it('treats a blank employer name as missing when employed', () => {
    expectIssue(
      IncomeSourceSchema,
      { ...employedIncome, employer_name: '  ' },
      'employer_name',
      'required when income_source is 1',
    );
  });

  it('reports the employer rule inside a lead with its full path', () => {
    expectIssue(
      LegacyLeadSchema,
      { ...lead, income_sources: [employedIncome, withField(employedIncome, 'work_phone', undefined)] },
      'income_sources[1].work_phone',
      'required when income_source is 1 (Employed)',
    );
  });

  it('checks months_at_job has at most 3 digits and the work phone has 10', () => {
    expectValid(IncomeSourceSchema, { ...employedIncome, months_at_job: 999 });
    expectValid(IncomeSourceSchema, { ...employedIncome, months_at_job: 0 });
    expectIssue(IncomeSourceSchema, { ...employedIncome, months_at_job: 1000 }, 'months_at_job', 'at most 3 digits');
    expectIssue(IncomeSourceSchema, { ...employedIncome, months_at_job: 12.5 }, 'months_at_job', 'at most 3 digits');
    expectIssue(IncomeSourceSchema, { ...employedIncome, work_phone: '512555019' }, 'work_phone', '10 digits');
  });

  it('checks its enums and dates', () => {
    expectIssue(IncomeSourceSchema, { ...employedIncome, income_source: 9 }, 'income_source', '8 (Other)');
    expectIssue(IncomeSourceSchema, { ...employedIncome, pay_frequency: 5 }, 'pay_frequency', '3 (Twice a Month)');
    expectIssue(
      IncomeSourceSchema,
      { ...employedIncome, pay_frequency_type: 3 },
      'pay_frequency_type',
      '2 (Weekday-Based)',
    );
    expectIssue(IncomeSourceSchema, { ...employedIncome, payment_type: 4 }, 'payment_type', '3 (Direct Deposit)');
    expectIssue(IncomeSourceSchema, { ...employedIncome, compensation_type: 3 }, 'compensation_type', '2 (Salary)');
    expectIssue(IncomeSourceSchema, { ...employedIncome, employment_type: 3 }, 'employment_type', '2 (Part-Time)');
    expectIssue(
      IncomeSourceSchema,
      { ...employedIncome, next_pay_date: '2026-02-30' },
      'next_pay_date',
      'not a real calendar date',
    );
    expectIssue(IncomeSourceSchema, { ...employedIncome, monthly_income: -1 }, 'monthly_income', '0 or more');
  });
});

describe('BankAccountSchema', () => {
  it('accepts an account', () => expectValid(BankAccountSchema, bankAccount));

  it.each(['is_primary', 'bank_routing_number', 'bank_account_number', 'bank_account_type', 'months_at_bank'])(
    'requires %s',
    (field) => expectIssue(BankAccountSchema, withField(bankAccount, field, undefined), field, 'required'),
  );

  it('checks digits, lengths and the account type', () => {
    expectIssue(
      BankAccountSchema,
      { ...bankAccount, bank_routing_number: '021-000-021' },
      'bank_routing_number',
      '9 digits',
    );
    expectIssue(
      BankAccountSchema,
      { ...bankAccount, bank_routing_number: '0210000210' },
      'bank_routing_number',
      '9 digits',
    );
    expectIssue(
      BankAccountSchema,
      { ...bankAccount, bank_account_number: '1234-5678' },
      'bank_account_number',
      'no delimiters',
    );
    expectIssue(BankAccountSchema, { ...bankAccount, months_at_bank: 1000 }, 'months_at_bank', 'at most 3 digits');
    expectIssue(BankAccountSchema, { ...bankAccount, bank_phone: '(512) 555-0111' }, 'bank_phone', '10 digits');
    expectIssue(
      BankAccountSchema,
      { ...bankAccount, bank_account_type: 3 },
      'bank_account_type',
      '1 (Checking), 2 (Savings)',
    );
  });
});

describe('ReferenceSchema', () => {
  it('has only optional fields', () => expectValid(ReferenceSchema, {}));
  it('checks the phone and the relation', () => {
    expectIssue(ReferenceSchema, { reference_phone: '555' }, 'reference_phone', '10 digits');
    expectIssue(ReferenceSchema, { reference_relation: 11 }, 'reference_relation', '10 (Other)');
    expectIssue(ReferenceSchema, { reference_email: 'a@b.co' }, 'reference_email', 'unknown field');
  });
});

describe('price reject', () => {
  it('accepts the follow-up body and refuses a bad one', () => {
    expectValid(PriceRejectAcceptSchema, { api_key: 'campaign-key', price_reject_offer_id: 3 });
    expectIssue(PriceRejectAcceptSchema, { api_key: 'k' }, 'price_reject_offer_id', 'required');
    expectIssue(
      PriceRejectAcceptSchema,
      { api_key: 'k', price_reject_offer_id: '3' },
      'price_reject_offer_id',
      'expected number',
    );
    expectIssue(
      PriceRejectAcceptSchema,
      { api_key: 'k', price_reject_offer_id: 1.5 },
      'price_reject_offer_id',
      'positive whole number',
    );
    expectIssue(PriceRejectAcceptSchema, { price_reject_offer_id: 3 }, 'api_key', 'required');
    expectIssue(
      PriceRejectAcceptSchema,
      { api_key: 'k', price_reject_offer_id: 3, first_name: 'x' },
      'first_name',
      'unknown field',
    );
  });

  it('parses offers', () => {
    expectValid(PriceRejectOfferSchema, { id: 1, price: 15, expires_in: 900 });
    expectIssue(PriceRejectOfferSchema, { id: 1, price: '15', expires_in: 900 }, 'price', 'expected number');
  });

  it('keeps the five documented error messages', () => {
    expect(Object.values(PRICE_REJECT_ERRORS)).toEqual([
      'Invalid price reject offer.',
      'Accepted price reject offer.',
      'Revoked price reject offer.',
      'Expired price reject offer.',
      'Price reject not enabled for this campaign.',
    ]);
  });
});

describe('LegacyResponseSchema', () => {
  it('parses accepted, rejected, pending and error answers', () => {
    expectValid(LegacyResponseSchema, { status: 'OK', result: 'A', redirect_url: 'https://x.test/r/1', errors: null });
    expectValid(LegacyResponseSchema, { status: 'OK', result: 'R' });
    const pending = LegacyResponseSchema.parse({
      status: 'OK',
      result: 'P',
      price_reject: { api_key: 'campaign-key', offers: [{ id: 1, price: 15, expires_in: 900 }] },
    });
    expect(pending.price_reject?.offers[0]?.price).toBe(15);
    expectValid(LegacyResponseSchema, { status: 'ERROR', errors: ['Invalid price reject offer.', { debug: 'trace' }] });
    expect(Object.keys(LEGACY_RESULT_LABELS)).toEqual(['A', 'R', 'P']);
  });

  it('refuses a response without status or with a malformed offer', () => {
    expectIssue(LegacyResponseSchema, { result: 'A' }, 'status', 'required');
    expectIssue(
      LegacyResponseSchema,
      { status: 'OK', result: 'P', price_reject: { api_key: 'k', offers: [{ id: 1, price: 15 }] } },
      'price_reject.offers[0].expires_in',
      'required',
    );
  });
});
