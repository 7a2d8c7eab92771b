import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  batchLooksValid,
  CustomerBatchSchema,
  CustomerUpsertSchema,
  LoanUpsertSchema,
  PaymentUpsertSchema,
  batchIssueOwner,
  groupBatchIssues,
  zodErrorBag,
} from '../../schema/index.js';
import { isoSeconds } from '../clock.js';
import type { SandboxContext } from '../context.js';
import { sendNotFound, sendValidationError } from '../http/errors.js';
import { MAX_PATH_ID_LENGTH } from '../http/server.js';
import { ACCOUNT_ID } from '../store/seed.js';
import type { BatchCustomerInput, LoanInput, PaymentInput } from '../store/loan-performance.js';
import { LoanPerformanceStore } from '../store/loan-performance.js';

const BASE = '/loan-performance';
// A customer id is later a path parameter: one longer than the router accepts would be stored and then unreachable (414).
const ID_TOO_LONG = `at most ${MAX_PATH_ID_LENGTH} characters`;
const idTooLong = (id: unknown): boolean => typeof id === 'string' && id.length > MAX_PATH_ID_LENGTH;

interface CustomerParams {
  customerId: string;
}

export function registerLoanPerformanceRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  // The interface shows no upsert response body: the minimal service sends none.
  const upserted = (reply: FastifyReply, created: boolean, data: unknown) =>
    ctx.minimal ? reply.code(created ? 201 : 200).send() : reply.code(created ? 201 : 200).send({ data });
  const store = new LoanPerformanceStore(ctx.db, ACCOUNT_ID);
  const now = () => isoSeconds(ctx.clock.now());

  app.post(`${BASE}/customers`, async (request, reply) => {
    const parsed = CustomerUpsertSchema.safeParse(request.body);
    if (!parsed.success) return sendValidationError(reply, zodErrorBag(parsed.error));
    const { customer_id, lead_loan } = parsed.data;
    if (idTooLong(customer_id)) return sendValidationError(reply, { customer_id: [ID_TOO_LONG] });
    const outcome = store.upsertCustomer(customer_id, lead_loan as LoanInput, now());
    return upserted(reply, outcome.created, outcome.data);
  });

  app.post<{ Params: CustomerParams }>(`${BASE}/customers/:customerId/loans`, async (request, reply) => {
    const parsed = LoanUpsertSchema.safeParse(request.body);
    if (!parsed.success) return sendValidationError(reply, zodErrorBag(parsed.error));
    const outcome = store.upsertLoan(request.params.customerId, parsed.data as LoanInput, now());
    if (outcome === undefined) return sendNotFound(reply);
    return upserted(reply, outcome.created, outcome.data);
  });

  app.post<{ Params: CustomerParams }>(`${BASE}/customers/:customerId/payments`, async (request, reply) => {
    const parsed = PaymentUpsertSchema.safeParse(request.body);
    if (!parsed.success) return sendValidationError(reply, zodErrorBag(parsed.error));
    const { loan_id, lead_id: _lead, management_system_id: _system, ...payment } = parsed.data;
    const outcome = store.upsertPayment(request.params.customerId, loan_id, payment as PaymentInput, now());
    if (typeof outcome === 'string') return sendNotFound(reply);
    return upserted(reply, outcome.created, outcome.data);
  });

  app.post(`/loan-performance/batches/customers`, async (request, reply) => {
    // Most batches are valid through and through: the quick check says so without zod's cost, and
    // anything it doubts gets the schema's own verdict and messages.
    const parsed = batchLooksValid(request.body) ? undefined : CustomerBatchSchema.safeParse(request.body);
    let skipped: { path: string; errors: string[] }[] = [];
    if (parsed && !parsed.success) {
      skipped = groupBatchIssues(parsed.error);
      // Problems of the batch as a whole (no customers array, more than 1000 customers, unknown keys): nothing is stored.
      if (parsed.error.issues.some((issue) => batchIssueOwner(issue.path) === ''))
        return sendValidationError(reply, zodErrorBag(parsed.error));
    }
    const customers = (request.body as { customers: unknown[] }).customers;
    customers.forEach((customer, c) => {
      if (!idTooLong(idOf(customer, 'customer_id'))) return;
      const path = `customers.${c}`;
      const entry = skipped.find((s) => s.path === path);
      if (entry) entry.errors.push(`customer_id: ${ID_TOO_LONG}`);
      else skipped.push({ path, errors: [`customer_id: ${ID_TOO_LONG}`] });
    });
    const result = acceptBatch(customers, skipped);
    store.storeBatch(result.customers, now());
    // The interface shows no batch response body: the minimal service answers {} and says nothing per record.
    if (ctx.minimal) return reply.code(200).send({});
    return reply.code(200).send({ data: { accepted: result.accepted, skipped: result.skipped } });
  });
}

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const idOf = (v: unknown, key: string): string | null =>
  isObject(v) && typeof v[key] === 'string' ? (v[key] as string) : null;

/**
 * Splits a batch into what to store and what to skip. An object with a problem is skipped
 * with everything inside it (a loan with its payments), and only the outermost skipped object
 * is listed; its siblings and parents are still stored.
 */
function acceptBatch(customers: unknown[], problems: { path: string; errors: string[] }[]) {
  const accepted = { customers: 0, loans: 0, payments: 0 };
  if (problems.length === 0) {
    // The usual batch: stored as it came, only counted.
    const all = customers as BatchCustomerInput[];
    for (const customer of all) {
      accepted.customers++;
      for (const loan of customer.loans) {
        accepted.loans++;
        accepted.payments += loan.payments?.length ?? 0;
      }
    }
    return { customers: all, accepted, skipped: [] };
  }
  const byPath = new Map(problems.map((p) => [p.path, p.errors]));
  const skipped: { path: string; id: string | null; errors: string[] }[] = [];
  const out: BatchCustomerInput[] = [];
  customers.forEach((customer, c) => {
    const customerPath = `customers.${c}`;
    const customerErrors = byPath.get(customerPath);
    if (customerErrors) {
      skipped.push({ path: customerPath, id: idOf(customer, 'customer_id'), errors: customerErrors });
      return;
    }
    const { customer_id, loans } = customer as { customer_id: string; loans: unknown[] };
    const kept: BatchCustomerInput = { customer_id, loans: [] };
    accepted.customers++;
    loans.forEach((loan, l) => {
      const loanPath = `${customerPath}.loans.${l}`;
      const loanErrors = byPath.get(loanPath);
      if (loanErrors) {
        skipped.push({ path: loanPath, id: idOf(loan, 'loan_id'), errors: loanErrors });
        return;
      }
      const { payments = [] } = loan as Obj & { payments?: unknown[] };
      const keptPayments: PaymentInput[] = [];
      accepted.loans++;
      payments.forEach((payment, p) => {
        const paymentPath = `${loanPath}.payments.${p}`;
        const paymentErrors = byPath.get(paymentPath);
        if (paymentErrors) {
          skipped.push({ path: paymentPath, id: idOf(payment, 'payment_id'), errors: paymentErrors });
          return;
        }
        keptPayments.push(payment as PaymentInput);
        accepted.payments++;
      });
      kept.loans.push({ ...(loan as LoanInput), payments: keptPayments });
    });
    out.push(kept);
  });
  return { customers: out, accepted, skipped };
}
