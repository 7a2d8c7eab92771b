import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { answerExcerpt, errorFromResponse } from '../../../src/api/errors.js';
import { checkAnswer, classifyStatus, isJsonContentType, isRetryableStatus } from '../../../src/api/status.js';
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

const text = (s: string) => [s, Buffer.byteLength(s)] as const;

describe('checkAnswer: what a 2xx must be', () => {
  const schema = z.looseObject({ data: z.array(z.unknown()) });

  it.each([
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['Application/JSON;charset=UTF-8', true],
    ['application/problem+json', true],
    ['application/vnd.api+json', true],
    ['text/json', true],
    ['application/jsonp', false],
    ['text/html; charset=utf-8', false],
    ['text/plain', false],
    ['application/octet-stream', false],
    [undefined, false],
  ])('content type %s is JSON: %s', (type, expected) => {
    expect(isJsonContentType(type)).toBe(expected);
  });

  it('takes JSON of the contract shape, and gives the parsed body', () => {
    const check = checkAnswer(200, 'application/json', ...text('{"data":[1],"extra":true}'), { schema });
    expect(check).toEqual({ ok: true, body: { data: [1], extra: true } });
  });

  it('refuses a body that is not JSON by its content type, even when it would parse', () => {
    for (const type of ['text/html', 'text/plain', undefined]) {
      const check = checkAnswer(200, type, ...text('{"data":[]}'));
      expect(check).toMatchObject({ ok: false, problem: { kind: 'not-json', bytes: 11 } });
    }
  });

  it('refuses JSON cut short, naming the position but never quoting the body', () => {
    const check = checkAnswer(200, 'application/json', ...text('{"data":[1,2,'));
    expect(check).toMatchObject({ ok: false, problem: { kind: 'unparsable' } });
    const bad = checkAnswer(200, 'application/json', ...text('<html>secret-ish</html>'));
    expect(bad).toMatchObject({ ok: false, problem: { kind: 'unparsable' } });
    expect(JSON.stringify(bad)).not.toContain('secret-ish');
  });

  it('refuses JSON of another shape, with the first issues', () => {
    const check = checkAnswer(200, 'application/json', ...text('["ok"]'), { schema });
    expect(check).toMatchObject({ ok: false, problem: { kind: 'wrong-shape' } });
    expect(check.ok ? '' : check.problem.detail).toMatch(/expected object/);
  });

  it('takes an empty body only where the endpoint may answer without one', () => {
    expect(checkAnswer(204, undefined, '', 0)).toEqual({ ok: true, body: undefined });
    expect(checkAnswer(205, undefined, '', 0)).toEqual({ ok: true, body: undefined });
    expect(checkAnswer(200, undefined, '', 0)).toMatchObject({ ok: false, problem: { kind: 'empty' } });
    expect(checkAnswer(200, 'application/json', '', 0)).toMatchObject({ ok: false, problem: { kind: 'empty' } });
    // The single upserts: the contract shows no body.
    expect(checkAnswer(201, undefined, '', 0, { empty: 'always' })).toEqual({ ok: true, body: undefined });
    // Where the body is the answer (lists, tokens…), even a 204 is not one.
    expect(checkAnswer(204, undefined, '', 0, { schema })).toMatchObject({ ok: false, problem: { kind: 'empty' } });
  });
});

describe('answerExcerpt', () => {
  it('escapes what would move the cursor or reorder the line, and cuts long text', () => {
    expect(answerExcerpt('a\r\nb\t\u001b[31mc\u202ed"e\\')).toBe('"a\\r\\nb\\t\\x1b[31mc\\u202ed\\"e\\\\"');
    const long = answerExcerpt('x'.repeat(5000));
    expect(long).toBe(`"${'x'.repeat(120)}…"`);
  });
});

describe('the status taxonomy at the edges of each range', () => {
  it.each([
    [100, 'request-problem'],
    [199, 'request-problem'],
    [299, 'success'],
    [300, 'request-problem'],
    [499, 'request-problem'],
    [600, 'request-problem'],
    [601, 'request-problem'],
  ])('HTTP %i is %s', (status, klass) => {
    expect(classifyStatus(status)).toBe(klass);
    expect(isRetryableStatus(status)).toBe(false);
  });
});

describe('checkAnswer: what a refusal says', () => {
  const schema = z.looseObject({ data: z.array(z.unknown()), meta: z.object({ total: z.number() }) });

  it.each([
    [' application/json', true],
    ['application/json ;charset=utf-8', true],
    ['xapplication/json', false],
    ['application/json-seq', false],
    ['application/json5', false],
    ['text/jsonx', false],
    ['application/+json', false],
  ])('content type %j is JSON: %s', (type, expected) => {
    expect(isJsonContentType(type)).toBe(expected);
  });

  it('keeps the content type and the size of a refused answer, and no detail where there is none', () => {
    const check = checkAnswer(200, 'text/html; charset=utf-8', ...text('<html></html>'));
    expect(check).toEqual({
      ok: false,
      problem: { kind: 'not-json', bytes: 13, contentType: 'text/html; charset=utf-8' },
    });
    expect(checkAnswer(200, undefined, '', 0)).toEqual({ ok: false, problem: { kind: 'empty', bytes: 0 } });
  });

  it('names the character where JSON stops parsing, when the parser says', () => {
    const check = checkAnswer(200, 'application/json', ...text('{"a":1}x'));
    expect(check.ok ? undefined : check.problem.detail).toBe('invalid at character 7');
    const later = checkAnswer(200, 'application/json', ...text('{"abcdef":1}x'));
    expect(later.ok ? undefined : later.problem.detail).toBe('invalid at character 12');
  });

  it('names up to three shape issues by their path, the root as "(root)"', () => {
    const root = checkAnswer(200, 'application/json', ...text('"text"'), { schema });
    expect(root.ok ? '' : root.problem.detail).toMatch(/^\(root\): /);
    const nested = checkAnswer(200, 'application/json', ...text('{"data":{},"meta":{"total":"x"}}'), { schema });
    const detail = nested.ok ? '' : (nested.problem.detail ?? '');
    expect(detail.split('; ').map((issue) => issue.split(':')[0])).toEqual(['data', 'meta.total']);
    const many = z.object({ a: z.string(), b: z.string(), c: z.string(), d: z.string() });
    const four = checkAnswer(200, 'application/json', ...text('{}'), { schema: many });
    expect((four.ok ? '' : (four.problem.detail ?? '')).split('; ').map((issue) => issue.split(':')[0])).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it("gives the parsed body of JSON without a schema, and the schema's output with one", () => {
    expect(checkAnswer(200, 'application/json', ...text('[1,2]'))).toEqual({ ok: true, body: [1, 2] });
    const trimmed = z.object({ data: z.array(z.number()) });
    expect(checkAnswer(200, 'application/json', ...text('{"data":[1],"x":2}'), { schema: trimmed })).toEqual({
      ok: true,
      body: { data: [1] },
    });
  });

  it('an empty body: a schema means the body is the answer; "never" refuses even a 204', () => {
    expect(checkAnswer(201, undefined, '', 0)).toMatchObject({ ok: false, problem: { kind: 'empty' } });
    expect(checkAnswer(204, undefined, '', 0, { empty: 'never' })).toMatchObject({
      ok: false,
      problem: { kind: 'empty' },
    });
    expect(checkAnswer(204, undefined, '', 0, { schema, empty: 'no-content' })).toEqual({ ok: true, body: undefined });
    expect(checkAnswer(200, undefined, '', 0, { schema, empty: 'no-content' })).toMatchObject({ ok: false });
  });
});
