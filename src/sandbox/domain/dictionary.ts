import type { BankAccount, IncomeSource, LegacyLead, Reference } from '../../schema/index.js';
import {
  ADVERTISING_METHOD_LABELS,
  AFFILIATE_TYPE_LABELS,
  BANK_ACCOUNT_TYPE_LABELS,
  BEST_CONTACT_TIME_LABELS,
  COMPENSATION_TYPE_LABELS,
  EMPLOYMENT_TYPE_LABELS,
  GENDER_LABELS,
  INCOME_PAYMENT_TYPE_LABELS,
  INCOME_SOURCE_LABELS,
  MARITAL_STATUS_LABELS,
  NAME_SUFFIX_LABELS,
  OPTIONAL_FIELD_NAMES,
  PAY_FREQUENCY_LABELS,
  PAY_FREQUENCY_TYPE_LABELS,
  PREFERRED_PHONE_LABELS,
  REFERENCE_RELATION_LABELS,
  RENT_OR_OWN_LABELS,
} from '../../schema/index.js';

/** What the file builder columns are computed from: the stored lead and the body it was posted with. */
export interface LeadFacts {
  id: number;
  account_id: number;
  campaign_id: number;
  campaign_name: string;
  result: string;
  price: number | null;
  created_at: string;
  accepted_at: string | null;
  request: LegacyLead;
}

type AttributeType = 'String' | 'Number' | 'Boolean';

export interface DataAttribute {
  id: string;
  category: string;
  subcategory: string;
  name: string;
  column: string;
  type: AttributeType;
}

interface AttributeDef extends Omit<DataAttribute, 'id'> {
  value: (lead: LeadFacts) => unknown;
}

type Labels = Readonly<Record<number, string>>;

const label = (labels: Labels, v: unknown) => (typeof v === 'number' && labels[v] !== undefined ? labels[v] : null);
const orNull = (v: unknown) => (v === undefined ? null : v);

/** The income source flagged primary, else the first one (the file builder shows one). */
function primaryIncome(lead: LeadFacts): Partial<IncomeSource> {
  const all = lead.request.income_sources ?? [];
  return all.find((s) => s.is_primary === 1) ?? all[0] ?? {};
}

function primaryBank(lead: LeadFacts): Partial<BankAccount> {
  const all = lead.request.bank_accounts ?? [];
  return all.find((a) => a.is_primary === 1) ?? all[0] ?? {};
}

function firstReference(lead: LeadFacts): Partial<Reference> {
  return lead.request.references?.[0] ?? {};
}

/** A posted field as it was sent (strings, numbers), or its label for integer enums. */
function posted(
  category: string,
  subcategory: string,
  name: string,
  column: keyof LegacyLead & string,
  type: AttributeType,
  labels?: Labels,
): AttributeDef {
  return {
    category,
    subcategory,
    name,
    column,
    type,
    value: (lead) => (labels ? label(labels, lead.request[column]) : orNull(lead.request[column])),
  };
}

function nested<T>(pick: (lead: LeadFacts) => Partial<T>, category: string, subcategory: string) {
  return (
    name: string,
    field: keyof T & string,
    type: AttributeType,
    labels?: Labels,
    column: string = field,
  ): AttributeDef => ({
    category,
    subcategory,
    name,
    column,
    type,
    value: (lead) => {
      const v = pick(lead)[field];
      return labels ? label(labels, v) : orNull(v);
    },
  });
}

const income = nested<IncomeSource>(primaryIncome, 'Income', 'Primary Income Source');
const bank = nested<BankAccount>(primaryBank, 'Bank', 'Primary Bank Account');
const reference = nested<Reference>(firstReference, 'References', 'First Reference');

const RESULT_WORDS: Record<string, string> = { A: 'Accepted', R: 'Rejected', P: 'Pending' };

/** Every column in file builder order; ids are assigned m1, m2, … in this order. */
const DEFINITIONS: AttributeDef[] = [
  {
    category: 'Lead',
    subcategory: 'Internal Lead Data',
    name: 'Lead ID',
    column: 'lead_id',
    type: 'Number',
    value: (l) => l.id,
  },
  {
    category: 'Lead',
    subcategory: 'Internal Lead Data',
    name: 'Account ID',
    column: 'account_id',
    type: 'Number',
    value: (l) => l.account_id,
  },
  {
    category: 'Lead',
    subcategory: 'Internal Lead Data',
    name: 'Campaign ID',
    column: 'campaign_id',
    type: 'Number',
    value: (l) => l.campaign_id,
  },
  {
    category: 'Lead',
    subcategory: 'Internal Lead Data',
    name: 'Campaign Name',
    column: 'campaign_name',
    type: 'String',
    value: (l) => l.campaign_name,
  },
  {
    category: 'Lead',
    subcategory: 'Internal Lead Data',
    name: 'Lead Created At',
    column: 'created_at',
    type: 'String',
    value: (l) => l.created_at,
  },
  {
    category: 'Lead',
    subcategory: 'Internal Lead Data',
    name: 'Lead Status',
    column: 'lead_status',
    type: 'String',
    value: (l) => RESULT_WORDS[l.result] ?? l.result,
  },
  {
    category: 'Lead',
    subcategory: 'Internal Lead Data',
    name: 'Lead Price',
    column: 'lead_price',
    type: 'Number',
    value: (l) => l.price,
  },
  {
    category: 'Lead',
    subcategory: 'Internal Lead Data',
    name: 'Accepted At',
    column: 'accepted_at',
    type: 'String',
    value: (l) => l.accepted_at,
  },
  {
    category: 'Lead',
    subcategory: 'Internal Lead Data',
    name: 'Is Accepted',
    column: 'is_accepted',
    type: 'Boolean',
    value: (l) => l.result === 'A',
  },
  posted('Lead', 'Source', 'Campaign Code', 'campaign_code', 'String'),
  posted('Lead', 'Source', 'Lead Flow Identifier', 'lead_flow_identifier', 'String'),
  posted('Lead', 'Source', 'Decision Flow Identifier', 'decision_flow_identifier', 'String'),
  posted('Lead', 'Source', 'Affiliate ID', 'affiliate_id', 'String'),
  posted('Lead', 'Source', 'Affiliate Sub ID', 'affiliate_sub_id', 'String'),
  posted('Lead', 'Source', 'Affiliate Type', 'affiliate_type', 'String', AFFILIATE_TYPE_LABELS),
  posted('Lead', 'Source', 'Reference ID', 'reference_id', 'String'),
  posted('Lead', 'Source', 'Lead Reference ID', 'lead_reference_id', 'String'),
  posted('Lead', 'Source', 'Time Stamp', 'time_stamp', 'String'),
  posted('Lead', 'Source', 'Advertising Method', 'advertising_method', 'String', ADVERTISING_METHOD_LABELS),
  posted('Lead', 'Source', 'IP Address', 'ip_address', 'String'),
  posted('Lead', 'Source', 'Source URL', 'source_url', 'String'),
  posted('Lead', 'Source', 'User Agent', 'user_agent', 'String'),
  posted('Loan Request', 'Loan Request', 'Loan Request Amount', 'loan_request_amount', 'Number'),
  posted('Loan Request', 'Loan Request', 'Alternate Loan Request Amount', 'alt_loan_request_amount', 'Number'),
  posted('Applicant', 'Personal', 'First Name', 'first_name', 'String'),
  posted('Applicant', 'Personal', 'Middle Name', 'middle_name', 'String'),
  posted('Applicant', 'Personal', 'Last Name', 'last_name', 'String'),
  posted('Applicant', 'Personal', 'Name Suffix', 'name_suffix', 'String', NAME_SUFFIX_LABELS),
  posted('Applicant', 'Personal', 'Gender', 'gender', 'String', GENDER_LABELS),
  posted('Applicant', 'Personal', 'Date of Birth', 'date_of_birth', 'String'),
  posted('Applicant', 'Personal', 'Social Security Number', 'social_security_number', 'String'),
  posted('Applicant', 'Personal', "Driver's License State", 'drivers_license_state', 'String'),
  posted('Applicant', 'Personal', "Driver's License Number", 'drivers_license_number', 'String'),
  {
    category: 'Applicant',
    subcategory: 'Personal',
    name: 'Is Military',
    column: 'is_military',
    type: 'Boolean',
    value: (l) => l.request.is_military === 1,
  },
  posted('Applicant', 'Personal', 'Marital Status', 'marital_status', 'String', MARITAL_STATUS_LABELS),
  posted('Applicant', 'Personal', "Mother's Maiden Name", 'mother_maiden_name', 'String'),
  posted('Applicant', 'Contact', 'Email', 'email', 'String'),
  posted('Applicant', 'Contact', 'Home Phone', 'home_phone', 'String'),
  posted('Applicant', 'Contact', 'Cell Phone', 'cell_phone', 'String'),
  posted('Applicant', 'Contact', 'Preferred Phone', 'preferred_phone', 'String', PREFERRED_PHONE_LABELS),
  posted('Applicant', 'Contact', 'Best Contact Time', 'best_contact_time', 'String', BEST_CONTACT_TIME_LABELS),
  posted('Applicant', 'Residence', 'Address', 'address', 'String'),
  posted('Applicant', 'Residence', 'Address 2', 'address2', 'String'),
  posted('Applicant', 'Residence', 'City', 'city', 'String'),
  posted('Applicant', 'Residence', 'State', 'state', 'String'),
  posted('Applicant', 'Residence', 'ZIP Code', 'zip', 'String'),
  posted('Applicant', 'Residence', 'Mailing Address', 'mailing_address', 'String'),
  posted('Applicant', 'Residence', 'Mailing City', 'mailing_city', 'String'),
  posted('Applicant', 'Residence', 'Mailing State', 'mailing_state', 'String'),
  posted('Applicant', 'Residence', 'Mailing ZIP Code', 'mailing_zip', 'String'),
  posted('Applicant', 'Residence', 'Rent or Own', 'rent_or_own', 'String', RENT_OR_OWN_LABELS),
  posted('Applicant', 'Residence', 'Monthly Rent or Mortgage', 'monthly_rent_or_mortgage', 'Number'),
  posted('Applicant', 'Residence', 'Months at Address', 'months_at_address', 'Number'),
  income('Income Source', 'income_source', 'String', INCOME_SOURCE_LABELS),
  income('Monthly Income', 'monthly_income', 'Number'),
  income('Last Pay Amount', 'last_pay_amount', 'Number'),
  income('Pay Frequency', 'pay_frequency', 'String', PAY_FREQUENCY_LABELS),
  income('Pay Frequency Type', 'pay_frequency_type', 'String', PAY_FREQUENCY_TYPE_LABELS),
  income('Last Pay Date', 'last_pay_date', 'String'),
  income('Next Pay Date', 'next_pay_date', 'String'),
  income('Second Pay Date', 'second_pay_date', 'String'),
  income('Pay Method', 'payment_type', 'String', INCOME_PAYMENT_TYPE_LABELS, 'pay_method'),
  income('Compensation Type', 'compensation_type', 'String', COMPENSATION_TYPE_LABELS),
  income('Employer Name', 'employer_name', 'String'),
  income('Employer Address', 'employer_address', 'String'),
  income('Employer City', 'employer_city', 'String'),
  income('Employer State', 'employer_state', 'String'),
  income('Employer ZIP Code', 'employer_zip', 'String'),
  income('Work Phone', 'work_phone', 'String'),
  income('Job Title', 'job_title', 'String'),
  income('Employment Type', 'employment_type', 'String', EMPLOYMENT_TYPE_LABELS),
  income('Months at Job', 'months_at_job', 'Number'),
  bank('Bank Name', 'bank_name', 'String'),
  bank('Bank Address', 'bank_address', 'String'),
  bank('Bank City', 'bank_city', 'String'),
  bank('Bank State', 'bank_state', 'String'),
  bank('Bank ZIP Code', 'bank_zip', 'String'),
  bank('Bank Phone', 'bank_phone', 'String'),
  bank('Bank Routing Number', 'bank_routing_number', 'String'),
  bank('Bank Account Number', 'bank_account_number', 'String'),
  bank('Bank Account Type', 'bank_account_type', 'String', BANK_ACCOUNT_TYPE_LABELS),
  bank('Months at Bank', 'months_at_bank', 'Number'),
  reference('Reference First Name', 'reference_first_name', 'String'),
  reference('Reference Last Name', 'reference_last_name', 'String'),
  reference('Reference Address', 'reference_address', 'String'),
  reference('Reference City', 'reference_city', 'String'),
  reference('Reference State', 'reference_state', 'String'),
  reference('Reference ZIP Code', 'reference_zip', 'String'),
  reference('Reference Phone', 'reference_phone', 'String'),
  reference('Reference Relation', 'reference_relation', 'String', REFERENCE_RELATION_LABELS),
  ...OPTIONAL_FIELD_NAMES.map((field, i) =>
    posted('Custom', 'Optional Fields', `Optional ${i + 1}`, field as keyof LegacyLead & string, 'String'),
  ),
];

const ATTRIBUTES = DEFINITIONS.map((def, i) => ({ ...def, id: `m${i + 1}` }));
const BY_ID = new Map(ATTRIBUTES.map((a) => [a.id, a]));

/** The data dictionary, as GET /api/v1/lead-data/dictionary returns it. */
export const DICTIONARY: DataAttribute[] = ATTRIBUTES.map(({ id, category, subcategory, name, column, type }) => ({
  id,
  category,
  subcategory,
  name,
  column,
  type,
}));

export function isKnownMapId(id: string): boolean {
  return BY_ID.has(id);
}

/** The lead's file builder values keyed by map id: every column, or the given ones in their order. */
export function leadValues(lead: LeadFacts, mapIds?: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const attribute of mapIds ? mapIds.map((id) => BY_ID.get(id)!) : ATTRIBUTES)
    out[attribute.id] = attribute.value(lead);
  return out;
}
