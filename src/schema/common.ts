import * as z from 'zod';

/** Zod 4 drops the input from finished issues, so an absent value is known only by its default message. */
const MISSING_VALUE_MESSAGE = /received undefined$/;

/**
 * An error function for a schema that has its own wording but should still say
 * "required" when the value is absent.
 */
export function requiredOr(message: string): (issue: { input?: unknown }) => string {
  return (issue) => (issue.input === undefined ? 'required' : message);
}

/** Runs an object-level refinement even when a field already failed, so one pass reports every problem. */
export const EVEN_WITH_FIELD_ERRORS = {
  when: (payload: { value: unknown }): boolean =>
    typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value),
};

/** Absent, null, or a string of only spaces: what "required" refuses. */
export function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Whether year-month-day names a real day of the Gregorian calendar (the one home of this rule). */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!);
}

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;
const SPACED_DATETIME_PATTERN = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** True when `YYYY-MM-DD` names a day that exists (2026-02-30 does not). */
export function isIsoDate(value: string): boolean {
  const m = DATE_PATTERN.exec(value);
  return m !== null && isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

function isRealDateTime(m: RegExpExecArray | null): boolean {
  if (m === null) return false;
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6])];
  return isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3])) && hour <= 23 && minute <= 59 && second <= 59;
}

/** True for exactly `YYYY-MM-DDTHH:mm:ssZ` naming a real instant. */
export function isIsoDateTime(value: string): boolean {
  return isRealDateTime(DATETIME_PATTERN.exec(value));
}

/** True for exactly `YYYY-MM-DD HH:mm:ss` naming a real date and time (the legacy time_stamp). */
export function isSpacedDateTime(value: string): boolean {
  return isRealDateTime(SPACED_DATETIME_PATTERN.exec(value));
}

/**
 * A string whose check names its own problem (one message, never two for one value).
 * Checks here never abort, so object-level rules still run and one parse reports everything.
 */
export function checkedString(problemOf: (value: string) => string | null) {
  return z.string().superRefine((value, ctx) => {
    const problem = problemOf(value);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem, input: value });
  });
}

/** A number passing `test`; used instead of `.int()`, whose failure would stop object-level rules. */
export function checkedNumber(test: (value: number) => boolean, message: string) {
  return z.number().refine(test, { error: message });
}

export const IsoDateSchema = checkedString((value) => {
  if (!DATE_PATTERN.test(value)) return 'must be a date in the form YYYY-MM-DD';
  return isIsoDate(value) ? null : 'is not a real calendar date';
});
export type IsoDate = z.infer<typeof IsoDateSchema>;

export const IsoDateTimeSchema = checkedString((value) => {
  if (!DATETIME_PATTERN.test(value)) return 'must be a UTC datetime in the form YYYY-MM-DDTHH:mm:ssZ';
  return isIsoDateTime(value) ? null : 'is not a real date and time';
});
export type IsoDateTime = z.infer<typeof IsoDateTimeSchema>;

/** Money in the loan performance resources: a whole number of cents. */
export const CentsSchema = checkedNumber(Number.isSafeInteger, 'must be a whole number of cents');
export type Cents = z.infer<typeof CentsSchema>;

/** A required string: like Laravel's "required", it also refuses an empty or all-space string. */
export const RequiredStringSchema = checkedString((value) => (value.trim() === '' ? 'must not be empty' : null));

/** An id the service generated (lead_id, management_system_id, list id…). */
export const ServiceIdSchema = checkedNumber(
  (value) => Number.isSafeInteger(value) && value > 0,
  'must be a positive whole number',
);

/**
 * An integer in a response that the service may also send as a numeric string
 * (the contract types per_page as string but shows an integer).
 */
export const LooseIntSchema = z.union([
  z.number().int(),
  z
    .string()
    .regex(/^-?\d+$/)
    .transform((value) => Number(value)),
]);

// ---------------------------------------------------------------- issue rendering

export type IssuePath = readonly PropertyKey[];

/** `customers[3].loans[0].payment_at` — how people read a path. */
export function issuePath(path: IssuePath): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** `customers.3.loans.0.payment_at` — Laravel's (and the sandbox's) form. */
export function dottedPath(path: IssuePath): string {
  return path.map(String).join('.');
}

export interface FormattedIssue {
  /** Rendered path of the field; '' for the value as a whole. */
  path: string;
  message: string;
}

export type PathStyle = 'brackets' | 'dotted';

export interface FormattableIssue {
  readonly code?: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly keys?: readonly string[];
}

export const UNKNOWN_FIELD_MESSAGE = 'unknown field (not part of the request)';

/** Flattens issues to one entry per field: unknown keys each get their own path, absent values read "required". */
function flattenIssues(issues: readonly FormattableIssue[]): { path: PropertyKey[]; message: string }[] {
  const out: { path: PropertyKey[]; message: string }[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys' && issue.keys) {
      for (const key of issue.keys) out.push({ path: [...issue.path, key], message: UNKNOWN_FIELD_MESSAGE });
      continue;
    }
    const message =
      issue.code === 'invalid_type' && MISSING_VALUE_MESSAGE.test(issue.message) ? 'required' : issue.message;
    out.push({ path: [...issue.path], message });
  }
  return out;
}

/** Every problem of a failed parse as `{path, message}`, paths like `customers[3].loans[0].payment_at`. */
export function formatZodIssues(
  error: { readonly issues: readonly FormattableIssue[] },
  style: PathStyle = 'brackets',
): FormattedIssue[] {
  const render = style === 'dotted' ? dottedPath : issuePath;
  return flattenIssues(error.issues).map(({ path, message }) => ({ path: render(path), message }));
}

/** The Laravel validation bag: dotted field path → messages (the shape of a 422 `errors` object). */
export function zodErrorBag(error: { readonly issues: readonly FormattableIssue[] }): Record<string, string[]> {
  const bag: Record<string, string[]> = {};
  for (const { path, message } of formatZodIssues(error, 'dotted')) (bag[path] ??= []).push(message);
  return bag;
}
