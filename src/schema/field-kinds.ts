import {
  APPLICATION_TYPES,
  LOAN_STATUSES,
  LOAN_TYPES,
  PAYMENT_MODES,
  PAYMENT_STATUSES,
  PAYMENT_TYPES,
} from './loan-performance.js';

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
