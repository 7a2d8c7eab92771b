import { describe, expect, it } from 'vitest';
import {
  backoffDelay,
  decideRetry,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  retryPolicyFromEnv,
  sleep,
  type RetryPolicy,
} from '../../../src/api/retry.js';

const policy: RetryPolicy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000, maxTotalWaitMs: 3000 };

describe('backoffDelay', () => {
  it('doubles each attempt, keeps half fixed and half random, and caps the step', () => {
    expect(backoffDelay(1, policy, () => 0)).toBe(50);
    expect(backoffDelay(1, policy, () => 1)).toBe(100);
    expect(backoffDelay(3, policy, () => 0)).toBe(200);
    expect(backoffDelay(3, policy, () => 1)).toBe(400);
    expect(backoffDelay(10, policy, () => 1)).toBe(1000);
    expect(backoffDelay(10, policy, () => 0)).toBe(500);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(['1.5'], now)).toBe(1500);
  });
  it('reads an HTTP date relative to now', () => {
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)).toBe(0);
  });
  it('ignores absent or unreadable values', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});

describe('decideRetry', () => {
  it('stops at the attempt limit', () => {
    const d = decideRetry(5, 0, policy, undefined, () => 0);
    expect(d.retry).toBe(false);
    expect(d.reason).toMatch(/5 attempts/);
  });
  it('stops when the next wait would exceed the total budget', () => {
    expect(decideRetry(2, 2950, policy, undefined, () => 0)).toMatchObject({ retry: false });
    expect(decideRetry(2, 0, policy, undefined, () => 0)).toEqual({ retry: true, delayMs: 100 });
  });
  it('honours Retry-After, refusing a wait longer than what is left', () => {
    expect(decideRetry(1, 0, policy, 1000, () => 0)).toEqual({ retry: true, delayMs: 1000 });
    const refused = decideRetry(1, 2500, policy, 1000, () => 0);
    expect(refused.retry).toBe(false);
    expect(refused.reason).toMatch(/asked to wait 1\.0 s/);
  });
  it('keeps backing off beneath a short Retry-After, with jitter, so competing workers do not starve', () => {
    // attempt 4 of the default policy: backoff step 4 s, of which half is fixed
    expect(decideRetry(4, 0, DEFAULT_RETRY_POLICY, 1000, () => 0).delayMs).toBe(2000);
    const early = decideRetry(1, 0, DEFAULT_RETRY_POLICY, 1000, () => 0).delayMs;
    const lateJitter = decideRetry(1, 0, DEFAULT_RETRY_POLICY, 1000, () => 0.999).delayMs;
    expect(early).toBe(1000);
    expect(lateJitter - early).toBeGreaterThanOrEqual(400);
  });
});

describe('retryPolicyFromEnv', () => {
  it('keeps the defaults without variables', () => {
    expect(retryPolicyFromEnv({})).toEqual(DEFAULT_RETRY_POLICY);
  });
  it('reads the documented variables', () => {
    expect(
      retryPolicyFromEnv({
        LEADCTL_RETRY_ATTEMPTS: '3',
        LEADCTL_RETRY_BASE_MS: '10',
        LEADCTL_RETRY_MAX_DELAY_MS: '40',
        LEADCTL_RETRY_MAX_WAIT_MS: '200',
      }),
    ).toEqual({ maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 40, maxTotalWaitMs: 200 });
  });
  it('refuses nonsense with the variable named', () => {
    expect(() => retryPolicyFromEnv({ LEADCTL_RETRY_ATTEMPTS: '0' })).toThrow(/LEADCTL_RETRY_ATTEMPTS/);
    expect(() => retryPolicyFromEnv({ LEADCTL_RETRY_MAX_WAIT_MS: 'lots' })).toThrow(/LEADCTL_RETRY_MAX_WAIT_MS/);
  });
});

describe('sleep', () => {
  it('is cut short by an abort signal', async () => {
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
  });
});

describe('the edges of the knobs and of Retry-After', () => {
  it('an empty or blank knob is the default; the minimum itself is allowed; the message names knob and value', () => {
    expect(retryPolicyFromEnv({ LEADCTL_RETRY_ATTEMPTS: '  ' }, policy)).toEqual(policy);
    expect(retryPolicyFromEnv({ LEADCTL_RETRY_ATTEMPTS: '1', LEADCTL_RETRY_BASE_MS: '0' }, policy)).toMatchObject({
      maxAttempts: 1,
      baseDelayMs: 0,
    });
    expect(() => retryPolicyFromEnv({ LEADCTL_RETRY_ATTEMPTS: '0.5' }, policy)).toThrow(
      'LEADCTL_RETRY_ATTEMPTS must be a number ≥ 1, got "0.5"',
    );
    expect(() => retryPolicyFromEnv({ LEADCTL_RETRY_MAX_WAIT_MS: 'x1' }, policy)).toThrow(
      'LEADCTL_RETRY_MAX_WAIT_MS must be a number ≥ 0, got "x1"',
    );
  });

  it('delay-seconds are digits alone (with a fraction), spaces around allowed; anything else is a date or nothing', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter(' 12 ', now)).toBe(12_000);
    expect(parseRetryAfter('0.25', now)).toBe(250);
    expect(parseRetryAfter('12abc', now)).toBeUndefined();
    expect(parseRetryAfter('abc12', now)).toBeUndefined();
  });
});
