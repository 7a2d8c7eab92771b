import { expect } from 'vitest';
import type * as z from 'zod';
import { formatZodIssues, type FormattedIssue } from '../../../src/schema/index.js';

/** The formatted issues of parsing `value`; [] when it parses. */
export function issuesOf(schema: z.ZodType, value: unknown): FormattedIssue[] {
  const result = schema.safeParse(value);
  return result.success ? [] : formatZodIssues(result.error);
}

export function expectValid(schema: z.ZodType, value: unknown): void {
  expect(issuesOf(schema, value)).toEqual([]);
}

/** Asserts the parse fails with (at least) an issue at `path` whose message contains `message`. */
export function expectIssue(schema: z.ZodType, value: unknown, path: string, message: string): void {
  const issues = issuesOf(schema, value);
  expect(issues, `expected an issue at "${path}"`).toContainEqual({ path, message: expect.stringContaining(message) });
}

/** Asserts the parse fails and every issue is at `path`. */
export function expectOnlyIssueAt(schema: z.ZodType, value: unknown, path: string, message: string): void {
  const issues = issuesOf(schema, value);
  expect(issues.length).toBeGreaterThan(0);
  expect(issues.map((issue) => issue.path)).toEqual(issues.map(() => path));
  expect(issues[0]!.message).toContain(message);
}

/** Assigns `value` to `key` of a copy, or removes the key when `value` is undefined. */
export function withField(base: object, key: string, value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...base };
  if (value === undefined) delete copy[key];
  else copy[key] = value;
  return copy;
}
