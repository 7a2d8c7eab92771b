import type { FastifyInstance } from 'fastify';
import { DryRunRequestSchema, zodErrorBag } from '../../schema/index.js';
import type { DryRunReason, LookbackWindow } from '../../schema/index.js';
import { isoSeconds } from '../clock.js';
import type { SandboxContext } from '../context.js';
import { sendValidationError } from '../http/errors.js';
import { LeadStore } from '../store/leads.js';
import { ACCOUNT_ID } from '../store/seed.js';

/** Defaults of the contract: previously purchased looks back forever, underwriting 3 days. */
const DEFAULT_UNDERWRITING_DAYS = 3;
const DAY_MS = 86_400_000;
const EARLIEST_MS = Date.UTC(1, 0, 1);

/** The earliest time a window covers: null = all time; undefined = the check is disabled. */
function windowStart(
  window: LookbackWindow | undefined,
  defaultDays: number | null,
  now: Date,
): string | null | undefined {
  if (window === false) return undefined;
  const days = window ?? defaultDays;
  if (days === null) return null;
  // A window longer than the calendar reaches back (beyond year 0) covers all time.
  const start = now.getTime() - days * DAY_MS;
  return start < EARLIEST_MS ? null : isoSeconds(new Date(start));
}

export function registerDryRunRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const leads = new LeadStore(ctx.db, ACCOUNT_ID);

  app.post('/lead-processing/dry-run', async (request, reply) => {
    const parsed = DryRunRequestSchema.safeParse(request.body);
    if (!parsed.success) return sendValidationError(reply, zodErrorBag(parsed.error));
    const body = parsed.data;
    const ssn = body.social_security_number ?? null;
    const email = body.email ?? null;
    const now = ctx.clock.now();
    const fail = (reason: DryRunReason) => ({ data: { pass: false, reason } });

    const purchasedSince = windowStart(body.previously_purchased_lookback_window, null, now);
    if (purchasedSince !== undefined && leads.wasPurchased(ssn, email, purchasedSince))
      return fail('previously_purchased');
    const underwritingSince = windowStart(body.underwriting_cost_lookback_window, DEFAULT_UNDERWRITING_DAYS, now);
    if (underwritingSince !== undefined && leads.wasDecisioned(ssn, email, underwritingSince))
      return fail('underwriting_cost');
    return { data: { pass: true } };
  });
}
