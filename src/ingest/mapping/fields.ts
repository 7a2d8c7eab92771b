import {
  APPLICATION_TYPES,
  LOAN_STATUSES,
  LOAN_TYPES,
  PAYMENT_MODES,
  PAYMENT_STATUSES,
  PAYMENT_TYPES,
} from '../../schema/loan-performance.js';

/** The API fields an export's columns can map to, by level, with the kind of conversion each needs. */

export type FieldKind =
  | { type: 'string' }
  | { type: 'id' }
  | { type: 'cents' }
  | { type: 'boolean' }
  | { type: 'date' }
  | { type: 'datetime' }
  | { type: 'enum'; values: readonly string[] };

export type Level = 'customer' | 'loan' | 'payment';
export const LEVELS: readonly Level[] = ['customer', 'loan', 'payment'];

const string = { type: 'string' } as const;
const id = { type: 'id' } as const;
const cents = { type: 'cents' } as const;
const boolean = { type: 'boolean' } as const;
const date = { type: 'date' } as const;
const datetime = { type: 'datetime' } as const;
const oneOf = (values: readonly string[]): FieldKind => ({ type: 'enum', values });

export const LEVEL_FIELDS: Record<Level, Readonly<Record<string, FieldKind>>> = {
  customer: { customer_id: string },
  loan: {
    loan_id: string,
    lead_id: id,
    management_system_id: id,
    is_lead_loan: boolean,
    application_type: oneOf(APPLICATION_TYPES),
    loan_type: oneOf(LOAN_TYPES),
    loan_status: oneOf(LOAN_STATUSES),
    loan_amount: cents,
    funded_amount: cents,
    first_payment_date: date,
    applied_at: datetime,
    esigned_at: datetime,
    withdrawn_at: datetime,
    originated_at: datetime,
  },
  payment: {
    payment_id: string,
    payment_amount: cents,
    payment_type: oneOf(PAYMENT_TYPES),
    payment_mode: oneOf(PAYMENT_MODES),
    payment_status: oneOf(PAYMENT_STATUSES),
    principal: cents,
    interest: cents,
    fees: cents,
    bank_routing_number: string,
    bank_account_number: string,
    return_code: string,
    returned_at: datetime,
    fail_code: string,
    failed_at: datetime,
    payment_at: datetime,
  },
};

/**
 * A payments file repeats the keys of its customer and loan. They default to the customer and
 * loan sections' columns; a payments file that names them differently maps them in `payment`.
 */
export const PAYMENT_JOIN_KEYS = ['customer_id', 'loan_id'] as const;

/** The key field of each level: the LMS id. */
export const LEVEL_KEY: Record<Level, string> = { customer: 'customer_id', loan: 'loan_id', payment: 'payment_id' };

export function fieldKind(level: Level, field: string): FieldKind | undefined {
  if (level === 'payment' && (PAYMENT_JOIN_KEYS as readonly string[]).includes(field)) return string;
  return LEVEL_FIELDS[level][field];
}

export function describeKind(kind: FieldKind): string {
  switch (kind.type) {
    case 'string':
      return 'text';
    case 'id':
      return 'whole number';
    case 'cents':
      return 'money (integer cents)';
    case 'boolean':
      return 'yes/no';
    case 'date':
      return 'date YYYY-MM-DD';
    case 'datetime':
      return 'UTC datetime YYYY-MM-DDTHH:mm:ssZ';
    case 'enum':
      return `one of: ${kind.values.join(', ')}`;
  }
}
