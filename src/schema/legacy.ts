/**
 * The legacy lead post and price reject on `POST /api/legacy`. Integer enums carry
 * their label maps so messages and tables can show "1 (Employed)" instead of "1".
 */
import * as z from 'zod';
import {
  EVEN_WITH_FIELD_ERRORS,
  IsoDateSchema,
  RequiredStringSchema,
  checkedNumber,
  checkedString,
  isBlank,
  isSpacedDateTime,
  requiredOr,
} from './common.js';
import { emailProblem } from './list-items.js';

// ---------------------------------------------------------------- integer enums and their labels

export const BOOLEAN_FLAG_LABELS = { 0: 'false', 1: 'true' } as const;
export const AFFILIATE_TYPE_LABELS = { 1: 'Production/Organic', 2: 'Aggregator/Partner', 3: 'Lead Provider' } as const;
export const ADVERTISING_METHOD_LABELS = {
  1: 'Web Search',
  2: 'Web Ad',
  3: 'TV Ad',
  4: 'Radio Ad',
  5: 'Email',
  6: 'Direct Mail',
  7: 'Social Media',
  8: 'Referral',
  9: 'Other',
} as const;
export const NAME_SUFFIX_LABELS = {
  1: 'None',
  2: 'Jr',
  3: 'Sr',
  4: 'I',
  5: 'II',
  6: 'III',
  7: 'IV',
  8: 'V',
  9: 'VI',
  10: 'VII',
  11: 'VIII',
} as const;
export const GENDER_LABELS = { 1: 'Male', 2: 'Female' } as const;
export const MARITAL_STATUS_LABELS = {
  1: 'Married',
  2: 'Single/Never Married',
  3: 'Divorced/Separated',
  4: 'Widowed',
  5: 'Domestic Partnership',
} as const;
export const PREFERRED_PHONE_LABELS = { 1: 'Home Phone', 2: 'Cell Phone', 3: 'Work Phone' } as const;
export const BEST_CONTACT_TIME_LABELS = {
  1: 'Anytime',
  2: 'Morning',
  3: 'Noon',
  4: 'Afternoon',
  5: 'Evening',
} as const;
export const RENT_OR_OWN_LABELS = { 1: 'Rent', 2: 'Own', 3: 'Other' } as const;
export const INCOME_SOURCE_LABELS = {
  1: 'Employed',
  2: 'Social Security',
  3: 'Disability',
  4: 'Pension',
  5: 'Self Employed',
  6: 'Unemployed',
  7: 'Welfare',
  8: 'Other',
} as const;
export const PAY_FREQUENCY_LABELS = { 1: 'Weekly', 2: 'Bi-Weekly', 3: 'Twice a Month', 4: 'Monthly' } as const;
export const PAY_FREQUENCY_TYPE_LABELS = { 1: 'Day-Based', 2: 'Weekday-Based' } as const;
/** income_sources[].payment_type: how the pay arrives (not the loan performance PAYMENT_TYPES). */
export const INCOME_PAYMENT_TYPE_LABELS = { 1: 'Cash', 2: 'Check', 3: 'Direct Deposit' } as const;
export const COMPENSATION_TYPE_LABELS = { 1: 'Hourly', 2: 'Salary' } as const;
export const EMPLOYMENT_TYPE_LABELS = { 1: 'Full-Time', 2: 'Part-Time' } as const;
export const BANK_ACCOUNT_TYPE_LABELS = { 1: 'Checking', 2: 'Savings' } as const;
export const REFERENCE_RELATION_LABELS = {
  1: 'Spouse',
  2: 'Sibling',
  3: 'Parent',
  4: 'Co-worker',
  5: 'Friend',
  6: 'Boyfriend',
  7: 'Girlfriend',
  8: 'Brother',
  9: 'Sister',
  10: 'Other',
} as const;

type Labels = Readonly<Record<number, string>>;

/** "1 (Employed), 2 (Social Security), …" */
export function describeLabels(labels: Labels): string {
  return Object.entries(labels)
    .map(([value, label]) => `${value} (${label})`)
    .join(', ');
}

/** An integer enum: exactly one of the label map's keys, as a JSON number. */
function intEnum<const L extends Labels>(labels: L) {
  const values = Object.keys(labels).map(Number) as Array<keyof L & number>;
  return z.literal(values, { error: requiredOr(`must be one of ${describeLabels(labels)}`) });
}

// ---------------------------------------------------------------- field formats

/** USPS codes of the states, DC, the territories and the military post offices. */
export const US_STATE_CODES: ReadonlySet<string> = new Set(
  (
    'AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND ' +
    'OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY AS GU MP PR VI UM FM MH PW AA AE AP'
  ).split(' '),
);

const StateSchema = checkedString((value) =>
  US_STATE_CODES.has(value.toUpperCase()) ? null : 'must be a 2-letter US state code, e.g. TX',
);
const ZipSchema = checkedString((value) =>
  /^\d{5}(?:\d{4})?$/.test(value) ? null : 'must be a 5-digit ZIP code (or 9 digits for ZIP+4) with no delimiters',
);
const PhoneSchema = checkedString((value) =>
  /^\d{10}$/.test(value) ? null : 'must be exactly 10 digits with no country code or delimiters',
);
const SsnSchema = checkedString((value) =>
  /^\d{9}$/.test(value) ? null : 'must be exactly 9 digits with no delimiters',
);
const RoutingNumberSchema = checkedString((value) =>
  /^\d{9}$/.test(value) ? null : 'must be exactly 9 digits with no delimiters',
);
const AccountNumberSchema = checkedString((value) =>
  /^\d+$/.test(value) ? null : 'must be digits only, no delimiters',
);
const EmailSchema = checkedString(emailProblem);
const maxLength = (max: number) =>
  checkedString((value) => (value.length <= max ? null : `must be at most ${max} characters`));
const FlowIdentifierSchema = maxLength(64);
const OptionalTextSchema = maxLength(255);
const SourceUrlSchema = checkedString((value) => {
  if (value.trim() === '') return 'must not be empty';
  return value.length <= 255 ? null : 'must be at most 255 characters (drop the query parameters when longer)';
});
const AmountSchema = checkedNumber((value) => value >= 0, 'must be an amount of 0 or more');
const LoanAmountSchema = checkedNumber((value) => value > 0, 'must be an amount greater than 0');
const ThreeDigitMonthsSchema = checkedNumber(
  (value) => Number.isSafeInteger(value) && value >= 0 && value <= 999,
  'must be a whole number of months of at most 3 digits (0-999)',
);
const MonthsSchema = checkedNumber(
  (value) => Number.isSafeInteger(value) && value >= 0,
  'must be a whole number of months (0 or more)',
);
const CentralTimeStampSchema = checkedString((value) =>
  isSpacedDateTime(value) ? null : 'must be a real date and time in the form yyyy-mm-dd hh:mm:ss (Central time)',
);
const IpAddressSchema = z.union([z.ipv4(), z.ipv6()], { error: requiredOr('must be an IPv4 or IPv6 address') });

/** Every integer enum field of the lead post (nested ones included) with its label map. */
export const LEGACY_ENUM_LABELS_BY_FIELD = {
  affiliate_type: AFFILIATE_TYPE_LABELS,
  advertising_method: ADVERTISING_METHOD_LABELS,
  name_suffix: NAME_SUFFIX_LABELS,
  gender: GENDER_LABELS,
  is_military: BOOLEAN_FLAG_LABELS,
  marital_status: MARITAL_STATUS_LABELS,
  preferred_phone: PREFERRED_PHONE_LABELS,
  best_contact_time: BEST_CONTACT_TIME_LABELS,
  rent_or_own: RENT_OR_OWN_LABELS,
  is_primary: BOOLEAN_FLAG_LABELS,
  income_source: INCOME_SOURCE_LABELS,
  pay_frequency: PAY_FREQUENCY_LABELS,
  pay_frequency_type: PAY_FREQUENCY_TYPE_LABELS,
  payment_type: INCOME_PAYMENT_TYPE_LABELS,
  compensation_type: COMPENSATION_TYPE_LABELS,
  employment_type: EMPLOYMENT_TYPE_LABELS,
  bank_account_type: BANK_ACCOUNT_TYPE_LABELS,
  reference_relation: REFERENCE_RELATION_LABELS,
} as const;

const EMPLOYED = `income_source is 1 (${INCOME_SOURCE_LABELS[1]})`;

// ---------------------------------------------------------------- nested objects

export const IncomeSourceSchema = z
  .strictObject({
    is_primary: intEnum(BOOLEAN_FLAG_LABELS),
    income_source: intEnum(INCOME_SOURCE_LABELS).optional(),
    monthly_income: AmountSchema.optional(),
    last_pay_amount: AmountSchema.optional(),
    pay_frequency: intEnum(PAY_FREQUENCY_LABELS),
    pay_frequency_type: intEnum(PAY_FREQUENCY_TYPE_LABELS).optional(),
    last_pay_date: IsoDateSchema.optional(),
    next_pay_date: IsoDateSchema,
    second_pay_date: IsoDateSchema.optional(),
    payment_type: intEnum(INCOME_PAYMENT_TYPE_LABELS),
    compensation_type: intEnum(COMPENSATION_TYPE_LABELS).optional(),
    employer_name: z.string().optional(),
    employer_address: z.string().optional(),
    employer_city: z.string().optional(),
    employer_state: z.string().optional(),
    employer_zip: z.string().optional(),
    work_phone: PhoneSchema.optional(),
    job_title: z.string().optional(),
    employment_type: intEnum(EMPLOYMENT_TYPE_LABELS).optional(),
    months_at_job: ThreeDigitMonthsSchema.optional(),
  })
  .superRefine((source, ctx) => {
    const fields = source as Record<string, unknown>;
    if (fields.monthly_income === undefined && fields.last_pay_amount === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['monthly_income'],
        message: 'required when last_pay_amount is absent',
        input: undefined,
      });
      ctx.addIssue({
        code: 'custom',
        path: ['last_pay_amount'],
        message: 'required when monthly_income is absent',
        input: undefined,
      });
    }
    if (fields.income_source === 1) {
      for (const field of ['employer_name', 'work_phone', 'months_at_job']) {
        if (isBlank(fields[field])) {
          ctx.addIssue({ code: 'custom', path: [field], message: `required when ${EMPLOYED}`, input: fields[field] });
        }
      }
    }
  }, EVEN_WITH_FIELD_ERRORS);
export type IncomeSource = z.infer<typeof IncomeSourceSchema>;

export const BankAccountSchema = z.strictObject({
  is_primary: intEnum(BOOLEAN_FLAG_LABELS),
  bank_name: z.string().optional(),
  bank_address: z.string().optional(),
  bank_city: z.string().optional(),
  bank_state: z.string().optional(),
  bank_zip: z.string().optional(),
  bank_phone: PhoneSchema.optional(),
  bank_routing_number: RoutingNumberSchema,
  bank_account_number: AccountNumberSchema,
  bank_account_type: intEnum(BANK_ACCOUNT_TYPE_LABELS),
  months_at_bank: ThreeDigitMonthsSchema,
});
export type BankAccount = z.infer<typeof BankAccountSchema>;

export const ReferenceSchema = z.strictObject({
  reference_first_name: z.string().optional(),
  reference_last_name: z.string().optional(),
  reference_address: z.string().optional(),
  reference_city: z.string().optional(),
  reference_state: z.string().optional(),
  reference_zip: z.string().optional(),
  reference_phone: PhoneSchema.optional(),
  reference_relation: intEnum(REFERENCE_RELATION_LABELS).optional(),
});
export type Reference = z.infer<typeof ReferenceSchema>;

// ---------------------------------------------------------------- the lead post

export const OPTIONAL_FIELD_NAMES = Array.from({ length: 15 }, (_, i) => `optional_${i + 1}` as const);

const optionalFields = {
  optional_1: OptionalTextSchema.optional(),
  optional_2: OptionalTextSchema.optional(),
  optional_3: OptionalTextSchema.optional(),
  optional_4: OptionalTextSchema.optional(),
  optional_5: OptionalTextSchema.optional(),
  optional_6: OptionalTextSchema.optional(),
  optional_7: OptionalTextSchema.optional(),
  optional_8: OptionalTextSchema.optional(),
  optional_9: OptionalTextSchema.optional(),
  optional_10: OptionalTextSchema.optional(),
  optional_11: OptionalTextSchema.optional(),
  optional_12: OptionalTextSchema.optional(),
  optional_13: OptionalTextSchema.optional(),
  optional_14: OptionalTextSchema.optional(),
  optional_15: OptionalTextSchema.optional(),
};

/**
 * Body of the lead post. lead_flow_identifier and decision_flow_identifier depend on the
 * campaign's settings, so only their length is checked here.
 */
export const LegacyLeadSchema = z
  .strictObject({
    api_key: RequiredStringSchema.optional(),
    lead_flow_identifier: FlowIdentifierSchema.optional(),
    decision_flow_identifier: FlowIdentifierSchema.optional(),
    campaign_code: RequiredStringSchema.optional(),
    ip_address: IpAddressSchema,
    source_url: SourceUrlSchema,
    affiliate_id: RequiredStringSchema,
    affiliate_sub_id: z.string().optional(),
    affiliate_type: intEnum(AFFILIATE_TYPE_LABELS).optional(),
    reference_id: z.string().optional(),
    lead_reference_id: z.string().optional(),
    time_stamp: CentralTimeStampSchema.optional(),
    advertising_method: intEnum(ADVERTISING_METHOD_LABELS).optional(),
    user_agent: RequiredStringSchema,
    loan_request_amount: LoanAmountSchema,
    alt_loan_request_amount: LoanAmountSchema.optional(),
    social_security_number: SsnSchema,
    first_name: RequiredStringSchema,
    middle_name: z.string().optional(),
    last_name: RequiredStringSchema,
    name_suffix: intEnum(NAME_SUFFIX_LABELS).optional(),
    gender: intEnum(GENDER_LABELS).optional(),
    date_of_birth: IsoDateSchema,
    drivers_license_state: StateSchema,
    drivers_license_number: RequiredStringSchema,
    is_military: intEnum(BOOLEAN_FLAG_LABELS),
    marital_status: intEnum(MARITAL_STATUS_LABELS).optional(),
    mother_maiden_name: z.string().optional(),
    email: EmailSchema,
    address: RequiredStringSchema,
    address2: z.string().optional(),
    city: RequiredStringSchema,
    state: StateSchema,
    zip: ZipSchema,
    mailing_address: z.string().optional(),
    mailing_city: z.string().optional(),
    mailing_state: StateSchema.optional(),
    mailing_zip: ZipSchema.optional(),
    home_phone: PhoneSchema,
    cell_phone: PhoneSchema.optional(),
    preferred_phone: intEnum(PREFERRED_PHONE_LABELS).optional(),
    best_contact_time: intEnum(BEST_CONTACT_TIME_LABELS).optional(),
    rent_or_own: intEnum(RENT_OR_OWN_LABELS),
    monthly_rent_or_mortgage: AmountSchema.optional(),
    months_at_address: MonthsSchema.optional(),
    income_sources: z.array(IncomeSourceSchema).optional(),
    bank_accounts: z.array(BankAccountSchema).optional(),
    references: z.array(ReferenceSchema).optional(),
    ...optionalFields,
  })
  .superRefine((lead, ctx) => {
    const fields = lead as Record<string, unknown>;
    if (isBlank(fields.api_key) && isBlank(fields.campaign_code)) {
      ctx.addIssue({
        code: 'custom',
        path: ['api_key'],
        message: 'required when campaign_code is absent',
        input: undefined,
      });
      ctx.addIssue({
        code: 'custom',
        path: ['campaign_code'],
        message: 'required when api_key is absent',
        input: undefined,
      });
    }
  }, EVEN_WITH_FIELD_ERRORS);
export type LegacyLead = z.infer<typeof LegacyLeadSchema>;

// ---------------------------------------------------------------- price reject and the response

/** Follow-up post accepting one offer; `api_key` is the `price_reject.api_key` of the lead post response. */
export const PriceRejectAcceptSchema = z.strictObject({
  api_key: RequiredStringSchema,
  price_reject_offer_id: checkedNumber(
    (value) => Number.isSafeInteger(value) && value > 0,
    'must be a positive whole number (an offers[].id)',
  ),
});
export type PriceRejectAccept = z.infer<typeof PriceRejectAcceptSchema>;

export const PRICE_REJECT_MIN_EXPIRES_IN = 300;
export const PRICE_REJECT_MAX_EXPIRES_IN = 345_600;

export const PriceRejectOfferSchema = z.looseObject({
  id: z.number().int(),
  price: z.number(),
  expires_in: z.number().int(),
});
export type PriceRejectOffer = z.infer<typeof PriceRejectOfferSchema>;

export const PriceRejectSchema = z.looseObject({
  api_key: z.string(),
  offers: z.array(PriceRejectOfferSchema),
});
export type PriceReject = z.infer<typeof PriceRejectSchema>;

/** The documented `errors` entries of a refused price reject follow-up. */
export const PRICE_REJECT_ERRORS = {
  invalid: 'Invalid price reject offer.',
  accepted: 'Accepted price reject offer.',
  revoked: 'Revoked price reject offer.',
  expired: 'Expired price reject offer.',
  notEnabled: 'Price reject not enabled for this campaign.',
} as const;

export const LEGACY_STATUSES = ['OK', 'ERROR'] as const;
export const LEGACY_RESULT_LABELS = { A: 'accepted', R: 'rejected', P: 'pending a price reject offer' } as const;
export type LegacyResult = keyof typeof LEGACY_RESULT_LABELS;

/**
 * Response of the lead post and of the price reject follow-up. Tolerant: `errors` may
 * carry debugging information of any shape, and absent fields may come as null.
 */
export const LegacyResponseSchema = z.looseObject({
  status: z.string(),
  result: z.string().nullish(),
  redirect_url: z.string().nullish(),
  errors: z.array(z.unknown()).nullish(),
  price_reject: PriceRejectSchema.nullish(),
});
export type LegacyResponse = z.infer<typeof LegacyResponseSchema>;
