import { describe, expect, it } from 'vitest';
import { formatApiEvent } from '../../../src/api/events.js';

describe('--verbose lines of client events', () => {
  it('a response and a network error, with the attempt from the second on', () => {
    expect(
      formatApiEvent({
        type: 'response',
        method: 'POST',
        path: '/v1/x',
        status: 201,
        durationMs: 12.4,
        attempt: 1,
        bytes: 9,
      }),
    ).toBe('[http] POST /v1/x → 201 in 12 ms');
    expect(
      formatApiEvent({
        type: 'response',
        method: 'GET',
        path: '/v1/y',
        status: 503,
        durationMs: 1500,
        attempt: 2,
        bytes: 0,
      }),
    ).toBe('[http] GET /v1/y → 503 in 1.5 s (attempt 2)');
    expect(
      formatApiEvent({
        type: 'network-error',
        method: 'PUT',
        path: '/z',
        code: 'ECONNRESET',
        durationMs: 30,
        attempt: 1,
      }),
    ).toBe('[http] PUT /z → ECONNRESET after 30 ms');
    expect(
      formatApiEvent({
        type: 'network-error',
        method: 'PUT',
        path: '/z',
        code: 'ETIMEDOUT',
        durationMs: 12_000,
        attempt: 3,
      }),
    ).toBe('[http] PUT /z → ETIMEDOUT after 12 s (attempt 3)');
  });

  it('a retry, a give-up (one attempt or several) and a missing lists route', () => {
    expect(
      formatApiEvent({ type: 'retry', method: 'POST', path: '/b', attempt: 1, delayMs: 250, reason: 'HTTP 503' }),
    ).toBe('[http] retrying POST /b in 250 ms (attempt 1 failed: HTTP 503)');
    expect(formatApiEvent({ type: 'give-up', method: 'POST', path: '/b', attempts: 1, reason: 'HTTP 400' })).toBe(
      '[http] not retrying POST /b after 1 attempt: HTTP 400',
    );
    expect(formatApiEvent({ type: 'give-up', method: 'POST', path: '/b', attempts: 5, reason: 'HTTP 503' })).toBe(
      '[http] not retrying POST /b after 5 attempts: HTTP 503',
    );
    expect(formatApiEvent({ type: 'lists-path', path: '/lists', reason: 'HTTP 404' })).toBe(
      '[lists] no lists route at /lists (HTTP 404)',
    );
  });

  it('tokens: cached and obtained with their expiry to the second, requested with its reason, not saved', () => {
    const at = Date.UTC(2025, 5, 1, 12, 30, 45, 678);
    expect(formatApiEvent({ type: 'token', action: 'cached', expiresAt: at })).toBe(
      '[auth] using the cached access token (valid until 2025-06-01T12:30:45Z)',
    );
    expect(formatApiEvent({ type: 'token', action: 'obtained', expiresAt: at })).toBe(
      '[auth] obtained an access token (valid until 2025-06-01T12:30:45Z)',
    );
    expect(formatApiEvent({ type: 'token', action: 'requested', reason: 'none' })).toBe(
      '[auth] requesting an access token (none cached)',
    );
    expect(formatApiEvent({ type: 'token', action: 'requested', reason: 'expiring' })).toBe(
      '[auth] requesting an access token (the cached one has expired or is about to)',
    );
    expect(formatApiEvent({ type: 'token', action: 'requested', reason: 'refused' })).toBe(
      '[auth] requesting an access token (the service refused the previous one)',
    );
    expect(formatApiEvent({ type: 'token', action: 'not-saved', reason: 'EROFS' })).toBe(
      'the access token could not be saved for the next run: EROFS',
    );
  });
});
