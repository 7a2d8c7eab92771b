import * as z from 'zod';
import {
  CentsSchema,
  EVEN_WITH_FIELD_ERRORS,
  IsoDateSchema,
  IsoDateTimeSchema,
  RequiredStringSchema,
  ServiceIdSchema,
  formatZodIssues,
  isBlank,
  requiredOr,
  type FormattableIssue,
} from './common.js';

// Enum values exactly as the contract spells them.
export const APPLICATION_TYPES = ['New', 'Returning', 'Refinanced'] as const;
export const LOAN_TYPES = ['Payday', 'Installment', 'Line Of Credit'] as const;
export const LOAN_STATUSES = [
  'Pending',
  'Expired',
  'Withdrawn',
  'Denied',
  'Approved',
  'Originated',
  'Reversed',
  'Past Due',
  'Written Off',
  'Current',
  'Paid In Full',
] as const;
export const PAYMENT_TYPES = [
  'Funding Payment',
  'First Payment',
  'Payment',
  'Additional Payment',
  'Makeup Payment',
  'Payoff',
  'Other',
] as const;
/** "Transfer Service A/B" of the contract are Money Gram and Western Union; the reference also lists Loan Transfer. */
export const PAYMENT_MODES = [
  'ACH',
  'ACH Collection',
  'Cashier Check',
  'Personal Check',
  'Cash',
  'Credit Card',
  'Debit Card',
  'Money Order',
  'Money Gram',
  'Loan Transfer',
  'Wire Transfer',
  'Western Union',
  'Other',
] as const;
export const PAYMENT_STATUSES = ['Pending', 'Paid', 'Partially Paid', 'Late', 'Returned', 'Failed', 'Other'] as const;

function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: requiredOr(`must be one of: ${values.join(', ')}`) });
}

export const ApplicationTypeSchema = oneOf(APPLICATION_TYPES);
export type ApplicationType = z.infer<typeof ApplicationTypeSchema>;
export const LoanTypeSchema = oneOf(LOAN_TYPES);
export type LoanType = z.infer<typeof LoanTypeSchema>;
export const LoanStatusSchema = oneOf(LOAN_STATUSES);
export type LoanStatus = z.infer<typeof LoanStatusSchema>;
export const PaymentTypeSchema = oneOf(PAYMENT_TYPES);
export type PaymentType = z.infer<typeof PaymentTypeSchema>;
export const PaymentModeSchema = oneOf(PAYMENT_MODES);
export type PaymentMode = z.infer<typeof PaymentModeSchema>;
export const PaymentStatusSchema = oneOf(PAYMENT_STATUSES);
export type PaymentStatus = z.infer<typeof PaymentStatusSchema>;

export const MAX_BATCH_CUSTOMERS = 1000;

/** A field the contract names but this body does not carry: refused with the reason instead of "unknown field". */
function refused(reason: string) {
  return z.never({ error: reason }).optional();
}

type RefinementCtx = z.core.$RefinementCtx<unknown>;
type Fields = Record<string, unknown>;

function requireOne(value: Fields, ctx: RefinementCtx, a: string, b: string): void {
  if (value[a] !== undefined || value[b] !== undefined) return;
  ctx.addIssue({
    code: 'custom',
    path: [a],
    message: `required when ${b} is absent (give ${a} or ${b})`,
    input: undefined,
  });
  ctx.addIssue({
    code: 'custom',
    path: [b],
    message: `required when ${a} is absent (give ${a} or ${b})`,
    input: undefined,
  });
}

function requireWith(value: Fields, ctx: RefinementCtx, field: string, trigger: string): void {
  if (!isBlank(value[trigger]) && value[field] === undefined) {
    ctx.addIssue({ code: 'custom', path: [field], message: `required when ${trigger} is given`, input: undefined });
  }
}

const leadOrManagementSystem = (value: Fields, ctx: RefinementCtx): void =>
  requireOne(value, ctx, 'lead_id', 'management_system_id');

function paymentRules(value: Fields, ctx: RefinementCtx): void {
  requireWith(value, ctx, 'returned_at', 'return_code');
  requireWith(value, ctx, 'failed_at', 'fail_code');
}

// ---------------------------------------------------------------- loans

const loanCoreFields = {
  loan_id: RequiredStringSchema,
  application_type: ApplicationTypeSchema.optional(),
  loan_type: LoanTypeSchema.optional(),
  loan_status: LoanStatusSchema.optional(),
  loan_amount: CentsSchema,
  funded_amount: CentsSchema.optional(),
  first_payment_date: IsoDateSchema.optional(),
  applied_at: IsoDateTimeSchema,
};

const loanFields = {
  ...loanCoreFields,
  lead_id: ServiceIdSchema.optional(),
  management_system_id: ServiceIdSchema.optional(),
  esigned_at: IsoDateTimeSchema.optional(),
  withdrawn_at: IsoDateTimeSchema.optional(),
  originated_at: IsoDateTimeSchema.optional(),
};

/** The loan reported with the customer upsert: it always comes from a lead post, so lead_id is required. */
export const LeadLoanSchema = z.strictObject({
  ...loanCoreFields,
  lead_id: ServiceIdSchema,
  management_system_id: refused('not accepted in lead_loan, which is identified by lead_id'),
});
export type LeadLoan = z.infer<typeof LeadLoanSchema>;

export const CustomerUpsertSchema = z.strictObject({
  customer_id: RequiredStringSchema,
  lead_loan: LeadLoanSchema,
});
export type CustomerUpsert = z.infer<typeof CustomerUpsertSchema>;

export const LoanUpsertSchema = z
  .strictObject({
    ...loanFields,
    is_lead_loan: refused('only part of loans in a customer batch'),
  })
  .superRefine(leadOrManagementSystem, EVEN_WITH_FIELD_ERRORS);
export type LoanUpsert = z.infer<typeof LoanUpsertSchema>;

// ---------------------------------------------------------------- payments

const paymentFields = {
  payment_id: RequiredStringSchema,
  payment_amount: CentsSchema.optional(),
  payment_type: PaymentTypeSchema.optional(),
  payment_mode: PaymentModeSchema.optional(),
  payment_status: PaymentStatusSchema.optional(),
  principal: CentsSchema.optional(),
  interest: CentsSchema.optional(),
  fees: CentsSchema.optional(),
  return_code: z.string().optional(),
  returned_at: IsoDateTimeSchema.optional(),
  fail_code: z.string().optional(),
  failed_at: IsoDateTimeSchema.optional(),
};

export const PaymentUpsertSchema = z
  .strictObject({
    loan_id: RequiredStringSchema,
    lead_id: ServiceIdSchema.optional(),
    management_system_id: ServiceIdSchema.optional(),
    ...paymentFields,
    bank_routing_number: z
      .string()
      .regex(/^\d{9}$/, { error: 'must be exactly 9 digits with no dashes or spaces' })
      .optional(),
    bank_account_number: RequiredStringSchema.optional(),
    payment_at: IsoDateTimeSchema.optional(),
  })
  .superRefine((value, ctx) => {
    leadOrManagementSystem(value, ctx);
    paymentRules(value, ctx);
  }, EVEN_WITH_FIELD_ERRORS);
export type PaymentUpsert = z.infer<typeof PaymentUpsertSchema>;

// ---------------------------------------------------------------- batch

const BANK_FIELD_IN_BATCH = 'not accepted in batch payments (single payment upsert only)';

export const BatchPaymentSchema = z
  .strictObject({
    ...paymentFields,
    payment_at: IsoDateTimeSchema,
    bank_routing_number: refused(BANK_FIELD_IN_BATCH),
    bank_account_number: refused(BANK_FIELD_IN_BATCH),
  })
  .superRefine(paymentRules, EVEN_WITH_FIELD_ERRORS);
export type BatchPayment = z.infer<typeof BatchPaymentSchema>;

export const BatchLoanSchema = z
  .strictObject({
    ...loanFields,
    is_lead_loan: z.boolean({ error: requiredOr('must be true or false') }),
    payments: z.array(BatchPaymentSchema).optional(),
  })
  .superRefine(leadOrManagementSystem, EVEN_WITH_FIELD_ERRORS);
export type BatchLoan = z.infer<typeof BatchLoanSchema>;

export const BatchCustomerSchema = z.strictObject({
  customer_id: RequiredStringSchema,
  loans: z.array(BatchLoanSchema).min(1, { error: 'must hold at least one loan' }),
});
export type BatchCustomer = z.infer<typeof BatchCustomerSchema>;

export const CustomerBatchSchema = z.strictObject({
  customers: z
    .array(BatchCustomerSchema)
    .min(1, { error: 'must hold at least one customer' })
    .max(MAX_BATCH_CUSTOMERS, { error: `must hold at most ${MAX_BATCH_CUSTOMERS} customers per batch` }),
});
export type CustomerBatch = z.infer<typeof CustomerBatchSchema>;

// ---------------------------------------------------------------- responses

/** Single upsert: `{data: <the stored object>}` (the real body is undocumented, so anything is tolerated). */
export const UpsertResponseSchema = z.looseObject({
  data: z.record(z.string(), z.unknown()).optional(),
});
export type UpsertResponse = z.infer<typeof UpsertResponseSchema>;

export const BatchSkippedSchema = z.looseObject({
  /** Dotted, e.g. `customers.3.loans.0.payments.2`. */
  path: z.string(),
  /** The skipped object's LMS id (customer_id, loan_id or payment_id); null when it had none. */
  id: z.string().nullable(),
  errors: z.array(z.string()),
});
export type BatchSkipped = z.infer<typeof BatchSkippedSchema>;

const BatchAcceptedSchema = z.looseObject({
  customers: z.number().int(),
  loans: z.number().int(),
  payments: z.number().int(),
});

/** The sandbox's batch answer: what was stored, and each skipped object with the reasons. */
export const BatchResponseSchema = z.looseObject({
  data: z.looseObject({
    accepted: BatchAcceptedSchema,
    skipped: z.array(BatchSkippedSchema),
  }),
});
export type BatchResponse = z.infer<typeof BatchResponseSchema>;

const BatchDetailSchema = z.looseObject({
  accepted: BatchAcceptedSchema.optional(),
  skipped: z.array(BatchSkippedSchema).optional(),
});

/** An error body sent with a success status (a WAF's JSON block page, a validation body) is no answer. */
function refuseErrorBody(answer: Record<string, unknown>, ctx: RefinementCtx): void {
  if (answer.data === undefined && ('error' in answer || 'errors' in answer))
    ctx.addIssue({
      code: 'custom',
      path: [],
      message: 'an error body (error, errors) with a success status',
      input: answer,
    });
}

/** What a single upsert's answer must be, when it has a body (the interface shows none): a JSON object that is not an error body. */
export const UpsertAnswerSchema = z.looseObject({}).superRefine(refuseErrorBody);

/**
 * What a batch answer must be to acknowledge its customers (the interface shows no body): a JSON
 * object, `{}` included, that is not an error body, and whose per-record detail, where it gives
 * some, is well formed. A skipped list that cannot be read would make skipped customers count as
 * acknowledged.
 */
export const BatchAnswerSchema = z.looseObject({ data: z.unknown().optional() }).superRefine((answer, ctx) => {
  refuseErrorBody(answer, ctx);
  const data = answer.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return;
  const detail = BatchDetailSchema.safeParse(data);
  if (detail.success) return;
  for (const issue of detail.error.issues)
    ctx.addIssue({ code: 'custom', path: ['data', ...issue.path], message: issue.message, input: data });
});

// ---------------------------------------------------------------- batch skipping

/**
 * The object of a batch that an issue belongs to, in dotted form: the issue at
 * `customers.3.loans.0.payments.2.payment_at` belongs to `customers.3.loans.0.payments.2`;
 * one about the `loans` array itself belongs to `customers.3`. '' is the batch as a whole.
 */
export function batchIssueOwner(path: readonly PropertyKey[]): string {
  let end = 0;
  for (let i = 0; i + 1 < path.length; i++) {
    if (typeof path[i] === 'string' && typeof path[i + 1] === 'number') end = i + 2;
  }
  return path.slice(0, end).map(String).join('.');
}

/**
 * Issues of a failed batch parse grouped by the object to skip, each message naming
 * its field relative to that object (e.g. `payment_at: required`).
 */
export function groupBatchIssues(error: {
  readonly issues: readonly FormattableIssue[];
}): { path: string; errors: string[] }[] {
  const groups = new Map<string, string[]>();
  for (const issue of error.issues) {
    const owner = batchIssueOwner(issue.path);
    const ownerDepth = owner === '' ? 0 : owner.split('.').length;
    const relative = issue.path.slice(ownerDepth);
    for (const { path, message } of formatZodIssues({ issues: [{ ...issue, path: relative }] })) {
      const list = groups.get(owner) ?? [];
      list.push(path === '' ? message : `${path}: ${message}`);
      groups.set(owner, list);
    }
  }
  return [...groups].map(([path, errors]) => ({ path, errors }));
}
