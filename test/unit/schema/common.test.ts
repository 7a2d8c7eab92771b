import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  CentsSchema,
  IsoDateSchema,
  IsoDateTimeSchema,
  LooseIntSchema,
  RequiredStringSchema,
  ServiceIdSchema,
  UNKNOWN_FIELD_MESSAGE,
  dottedPath,
  formatZodIssues,
  isSpacedDateTime,
  issuePath,
  zodErrorBag,
} from '../../../src/schema/index.js';
import { expectOnlyIssueAt, expectValid, issuesOf } from './helpers.js';

describe('IsoDateSchema', () => {
  it.each(['2026-01-31', '2024-02-29', '2000-02-29', '1999-12-31'])('accepts the real date %s', (date) => {
    expectValid(IsoDateSchema, date);
  });

  it.each(['2026-02-30', '2023-02-29', '1900-02-29', '2026-04-31', '2026-13-01', '2026-00-10', '2026-01-00'])(
    'refuses %s, which is not a calendar date',
    (date) => expectOnlyIssueAt(IsoDateSchema, date, '', 'is not a real calendar date'),
  );

  it.each(['2026-1-05', '05/01/2026', '2026-01-05T00:00:00Z', '', ' 2026-01-05'])(
    'refuses the format of "%s"',
    (date) => expectOnlyIssueAt(IsoDateSchema, date, '', 'YYYY-MM-DD'),
  );

  it('gives one message per bad value', () => {
    expect(issuesOf(IsoDateSchema, 'nope')).toHaveLength(1);
  });
});

describe('IsoDateTimeSchema', () => {
  it.each(['2026-01-05T00:00:00Z', '2024-02-29T23:59:59Z'])('accepts %s', (value) =>
    expectValid(IsoDateTimeSchema, value),
  );

  it.each([
    '2026-01-05T00:00:00.000Z',
    '2026-01-05T00:00:00+00:00',
    '2026-01-05T00:00:00',
    '2026-01-05 00:00:00Z',
    '2026-01-05T00:00Z',
    '2026-01-05',
  ])('refuses the format of %s', (value) => expectOnlyIssueAt(IsoDateTimeSchema, value, '', 'YYYY-MM-DDTHH:mm:ssZ'));

  it.each(['2026-02-30T10:00:00Z', '2026-01-05T24:00:00Z', '2026-01-05T10:60:00Z', '2026-01-05T10:00:60Z'])(
    'refuses %s, which is not a real instant',
    (value) => expectOnlyIssueAt(IsoDateTimeSchema, value, '', 'is not a real date and time'),
  );
});

describe('isSpacedDateTime (the legacy time_stamp)', () => {
  it('accepts a real yyyy-mm-dd hh:mm:ss and refuses other forms', () => {
    expect(isSpacedDateTime('2026-01-05 13:45:00')).toBe(true);
    expect(isSpacedDateTime('2026-02-30 13:45:00')).toBe(false);
    expect(isSpacedDateTime('2026-01-05T13:45:00Z')).toBe(false);
    expect(isSpacedDateTime('2026-01-05 25:00:00')).toBe(false);
  });
});

describe('CentsSchema', () => {
  it.each([0, 1, 50000, -250])('accepts the whole number %d', (value) => expectValid(CentsSchema, value));
  it.each([0.5, 100.01, Number.MAX_SAFE_INTEGER + 2])('refuses %d, not a whole number of cents', (value) =>
    expectOnlyIssueAt(CentsSchema, value, '', 'must be a whole number of cents'),
  );
  it('refuses a numeric string', () => {
    expect(issuesOf(CentsSchema, '100')).toHaveLength(1);
  });
});

describe('ServiceIdSchema and RequiredStringSchema', () => {
  it('takes positive whole numbers only', () => {
    expectValid(ServiceIdSchema, 7);
    expectOnlyIssueAt(ServiceIdSchema, 0, '', 'positive whole number');
    expectOnlyIssueAt(ServiceIdSchema, 2.5, '', 'positive whole number');
  });
  it('refuses empty and blank strings', () => {
    expectValid(RequiredStringSchema, 'abc');
    expectOnlyIssueAt(RequiredStringSchema, '', '', 'must not be empty');
    expectOnlyIssueAt(RequiredStringSchema, '   ', '', 'must not be empty');
  });
});

describe('LooseIntSchema', () => {
  it('reads an integer or a numeric string as a number', () => {
    expect(LooseIntSchema.parse(250)).toBe(250);
    expect(LooseIntSchema.parse('250')).toBe(250);
    expect(LooseIntSchema.safeParse('25 0').success).toBe(false);
    expect(LooseIntSchema.safeParse(2.5).success).toBe(false);
  });
});

describe('issue paths', () => {
  const path = ['customers', 3, 'loans', 0, 'payments', 2, 'payment_at'];
  it('renders the bracket form', () => {
    expect(issuePath(path)).toBe('customers[3].loans[0].payments[2].payment_at');
    expect(issuePath([2, 'x'])).toBe('[2].x');
    expect(issuePath([])).toBe('');
  });
  it('renders the dotted form', () => {
    expect(dottedPath(path)).toBe('customers.3.loans.0.payments.2.payment_at');
    expect(dottedPath(['customers', 3, 'loans', 0])).toBe('customers.3.loans.0');
  });
});

describe('formatZodIssues', () => {
  const Schema = z.strictObject({
    name: z.string(),
    items: z.array(z.strictObject({ n: z.number() })),
  });

  it('says "required" for an absent field and names nested paths', () => {
    const result = Schema.safeParse({ items: [{ n: 1 }, { n: 'x' }] });
    expect(result.success).toBe(false);
    const issues = formatZodIssues(result.error!);
    expect(issues).toContainEqual({ path: 'name', message: 'required' });
    expect(issues).toContainEqual({ path: 'items[1].n', message: expect.stringContaining('expected number') });
    expect(issues).toHaveLength(2);
  });

  it('gives every unknown field its own entry', () => {
    const result = Schema.safeParse({ name: 'a', items: [{ n: 1, extra: true }], other: 1, more: 2 });
    const issues = formatZodIssues(result.error!);
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: 'items[0].extra', message: UNKNOWN_FIELD_MESSAGE },
        { path: 'other', message: UNKNOWN_FIELD_MESSAGE },
        { path: 'more', message: UNKNOWN_FIELD_MESSAGE },
      ]),
    );
    expect(issues).toHaveLength(3);
  });

  it('renders dotted paths on request and builds the 422 error bag', () => {
    const result = Schema.safeParse({ name: 'a', items: [{}, { n: 1, bad: 1 }] });
    expect(formatZodIssues(result.error!, 'dotted').map((issue) => issue.path)).toEqual(['items.0.n', 'items.1.bad']);
    expect(zodErrorBag(result.error!)).toEqual({ 'items.0.n': ['required'], 'items.1.bad': [UNKNOWN_FIELD_MESSAGE] });
  });
});
