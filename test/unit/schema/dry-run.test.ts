import { describe, expect, it } from 'vitest';
import { DRY_RUN_REASONS, DryRunRequestSchema, DryRunResponseSchema } from '../../../src/schema/index.js';
import { expectIssue, expectValid, issuesOf } from './helpers.js';

describe('DryRunRequestSchema', () => {
  it('accepts SSN, email, or both, with windows in days or false', () => {
    expectValid(DryRunRequestSchema, { social_security_number: '123456789' });
    expectValid(DryRunRequestSchema, { email: 'a@b.co' });
    expectValid(DryRunRequestSchema, {
      social_security_number: '123456789',
      email: 'a@b.co',
      previously_purchased_lookback_window: 30,
      underwriting_cost_lookback_window: false,
    });
  });

  it('needs SSN or email', () => {
    expectIssue(DryRunRequestSchema, {}, 'social_security_number', 'required when email is absent');
    expectIssue(
      DryRunRequestSchema,
      { underwriting_cost_lookback_window: 3 },
      'email',
      'required when social_security_number is absent',
    );
  });

  it('checks the SSN and email formats', () => {
    expectIssue(DryRunRequestSchema, { social_security_number: '123-45-6789' }, 'social_security_number', '9 digits');
    expectIssue(DryRunRequestSchema, { email: 'not an email' }, 'email', 'must not contain spaces');
  });

  it.each([true, -1, 2.5, '30', null])('refuses the lookback window %j', (window) => {
    expectIssue(
      DryRunRequestSchema,
      { email: 'a@b.co', previously_purchased_lookback_window: window },
      'previously_purchased_lookback_window',
      'whole number of days',
    );
  });

  it('refuses unknown fields', () => {
    expect(issuesOf(DryRunRequestSchema, { email: 'a@b.co', phone: '5125550100' })).toEqual([
      { path: 'phone', message: 'unknown field (not part of the request)' },
    ]);
  });
});

describe('DryRunResponseSchema', () => {
  it('parses pass and fail answers', () => {
    expect(DryRunResponseSchema.parse({ data: { pass: true } }).data.pass).toBe(true);
    const failed = DryRunResponseSchema.parse({ data: { pass: false, reason: 'previously_purchased' } });
    expect(failed.data.reason).toBe('previously_purchased');
    expectIssue(DryRunResponseSchema, { data: { pass: 'yes' } }, 'data.pass', 'expected boolean');
  });

  it('has words for both reasons', () => {
    expect(Object.keys(DRY_RUN_REASONS).sort()).toEqual(['previously_purchased', 'underwriting_cost']);
    for (const words of Object.values(DRY_RUN_REASONS)) expect(words.length).toBeGreaterThan(10);
  });
});
