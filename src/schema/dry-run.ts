import * as z from 'zod';
import { EVEN_WITH_FIELD_ERRORS, checkedNumber, checkedString } from './common.js';
import { emailProblem } from './list-items.js';

/** The reasons a dry run fails, with the words the CLI shows for them (our choice; the contract names none). */
export const DRY_RUN_REASONS = {
  previously_purchased: 'previously purchased within the lookback window',
  underwriting_cost: 'underwriting money was spent on it within the lookback window',
} as const;
export type DryRunReason = keyof typeof DRY_RUN_REASONS;

const LOOKBACK_MESSAGE = 'must be a whole number of days (0 or more) or false to disable the check';

/** Days to look back, or false to disable the check. */
export const LookbackWindowSchema = z.union(
  [checkedNumber((days) => Number.isSafeInteger(days) && days >= 0, LOOKBACK_MESSAGE), z.literal(false)],
  { error: LOOKBACK_MESSAGE },
);
export type LookbackWindow = z.infer<typeof LookbackWindowSchema>;

export const DryRunRequestSchema = z
  .strictObject({
    social_security_number: checkedString((value) =>
      /^\d{9}$/.test(value) ? null : 'must be exactly 9 digits with no delimiters',
    ).optional(),
    email: checkedString(emailProblem).optional(),
    previously_purchased_lookback_window: LookbackWindowSchema.optional(),
    underwriting_cost_lookback_window: LookbackWindowSchema.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.social_security_number !== undefined || body.email !== undefined) return;
    for (const [field, other] of [
      ['social_security_number', 'email'],
      ['email', 'social_security_number'],
    ] as const) {
      ctx.addIssue({ code: 'custom', path: [field], message: `required when ${other} is absent`, input: undefined });
    }
  }, EVEN_WITH_FIELD_ERRORS);
export type DryRunRequest = z.infer<typeof DryRunRequestSchema>;

/** `reason` comes only with `pass: false`; it is a plain string so unknown reasons from the service still parse. */
export const DryRunResponseSchema = z.looseObject({
  data: z.looseObject({
    pass: z.boolean(),
    reason: z.string().nullish(),
  }),
});
export type DryRunResponse = z.infer<typeof DryRunResponseSchema>;
