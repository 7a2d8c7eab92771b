import { describe, expect, it } from 'vitest';
import { errorFromResponse } from '../../../src/api/errors.js';
import { classifyStatus, isRetryableStatus } from '../../../src/api/status.js';
import { ExitCode } from '../../../src/errors.js';

const answer = (status: number, extra: { subject?: string; repeatable?: boolean } = {}) =>
  errorFromResponse({
    method: 'POST',
    path: '/api/v1/x',
    baseUrl: 'http://127.0.0.1:1',
    attempts: 1,
    status,
    body: { message: 'm' },
    ...extra,
  });

describe('the status taxonomy', () => {
  it.each([
    [200, 'success'],
    [201, 'success'],
    [204, 'success'],
    [400, 'refused'],
    [422, 'refused'],
    [409, 'conflict'],
    [413, 'too-large'],
    [401, 'unauthenticated'],
    [403, 'forbidden'],
    [404, 'not-found'],
    [410, 'not-found'],
    [405, 'request-problem'],
    [414, 'request-problem'],
    [418, 'request-problem'],
    [302, 'request-problem'],
    [429, 'retryable'],
    [500, 'retryable'],
    [503, 'retryable'],
    [599, 'retryable'],
  ])('HTTP %i is %s', (status, klass) => {
    expect(classifyStatus(status)).toBe(klass);
  });

  it('retries only 429 and 5xx', () => {
    const retried = [200, 301, 400, 401, 403, 404, 405, 409, 410, 413, 414, 422, 429, 500, 502, 503, 504].filter(
      isRetryableStatus,
    );
    expect(retried).toEqual([429, 500, 502, 503, 504]);
  });

  it.each([
    [401, ExitCode.AUTH, 'authentication'],
    [403, ExitCode.AUTH, 'authentication'],
    [404, ExitCode.USAGE, 'not_found'],
    [410, ExitCode.USAGE, 'not_found'],
    [405, ExitCode.USAGE, 'request_refused'],
    [414, ExitCode.USAGE, 'request_refused'],
    [409, ExitCode.USAGE, 'conflict'],
    [422, ExitCode.USAGE, 'validation'],
    [429, ExitCode.SERVICE, 'rate_limited'],
    [500, ExitCode.SERVICE, 'service'],
  ])('HTTP %i ends a one-request command with exit %i (%s)', (status, exit, code) => {
    const error = answer(status);
    expect(error.exitCode).toBe(exit);
    expect(error.code).toBe(code);
  });

  it('says 403 is "not allowed for this client"', () => {
    expect(answer(403).message).toMatch(/not allowed for this client/);
  });

  it('calls a 5xx safe to repeat only when repeating cannot duplicate the request', () => {
    expect(answer(500).hint).toMatch(/safe to repeat/);
    expect(answer(500, { repeatable: false }).hint).not.toMatch(/safe to repeat/);
  });

  it('never calls a 4xx an outage', () => {
    for (const status of [400, 405, 409, 410, 414, 418, 451]) {
      const error = answer(status);
      expect(`${error.message} ${error.hint}`).not.toMatch(/unavailable|having trouble|safe to repeat/);
    }
  });

  it('names the object of a 404 or 410 when there is one', () => {
    expect(answer(410, { subject: 'list 7' }).message).toMatch(/^list 7 is gone/);
  });
});
