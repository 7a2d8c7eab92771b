/**
 * From answers and failures to the typed errors: the class and exit code, what the message names
 * (the request, the status, what the service said, attempts and why the retries stopped), the
 * hint's advice, and the details a JSON consumer reads. test/unit/api/status.test.ts holds the
 * taxonomy itself; test/cmd/status-taxonomy.test.ts the same through every command.
 */
import { describe, expect, it } from 'vitest';
import {
  describeBody,
  errorFromNetwork,
  errorFromOversizedAnswer,
  errorFromResponse,
  errorFromTokenResponse,
  fieldErrorsOf,
  isConnectPhaseError,
  isTimeoutError,
  isTransientNetworkError,
  networkErrorCode,
  type FailedResponse,
} from '../../../src/api/errors.js';
import {
  AuthError,
  ConflictError,
  ExitCode,
  NetworkError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  RequestProblemError,
  ServiceError,
  ValidationError,
} from '../../../src/errors.js';

const BASE = 'https://lms.example';
const failed = (status: number, extra: Partial<FailedResponse> = {}): FailedResponse => ({
  method: 'POST',
  path: '/api/v1/x',
  baseUrl: BASE,
  attempts: 1,
  status,
  body: { message: 'Nope.' },
  ...extra,
});
const systemError = (code: string, message = `connect ${code}`) => Object.assign(new Error(message), { code });

describe('describeBody', () => {
  it('shows text as it is, JSON as JSON, cuts past 500 characters, and nothing for nothing', () => {
    expect(describeBody('plain')).toBe('plain');
    expect(describeBody({ a: 1 })).toBe('{"a":1}');
    expect(describeBody('x'.repeat(500))).toBe('x'.repeat(500));
    expect(describeBody('x'.repeat(501))).toBe(`${'x'.repeat(500)}…`);
    expect(describeBody(undefined)).toBe('');
    expect(describeBody('')).toBe('');
  });
});

describe('fieldErrorsOf', () => {
  it('reads field lists, single reasons, and a bare list; skips null, and anything but an object', () => {
    expect(fieldErrorsOf({ errors: { a: ['x', 2], b: 'y', c: null, d: undefined, e: 0 } })).toEqual({
      a: ['x', '2'],
      b: ['y'],
      e: ['0'],
    });
    expect(fieldErrorsOf({ errors: ['one', 'two'] })).toEqual({ '': ['one', 'two'] });
    expect(fieldErrorsOf({ errors: 'text' })).toEqual({});
    expect(fieldErrorsOf({ message: 'm' })).toEqual({});
    expect(fieldErrorsOf('errors')).toEqual({});
    expect(fieldErrorsOf(null)).toEqual({});
  });
});

describe('errorFromResponse: a redirect', () => {
  it('says where it pointed, that it is not followed, and what to change (exit 2)', () => {
    const https = errorFromResponse(
      failed(301, { baseUrl: 'http://lms.example', location: 'https://lms.example/api/v1/x', body: '' }),
    );
    expect(https).toBeInstanceOf(RequestProblemError);
    expect(https.exitCode).toBe(ExitCode.USAGE);
    expect(https.message).toBe(
      'the service answered POST /api/v1/x with a redirect (HTTP 301 to https://lms.example/api/v1/x), which leadctl does not follow: the request and its credentials would go elsewhere',
    );
    expect(https.hint).toContain(': the service wants https://');
    const elsewhere = errorFromResponse(
      failed(307, {
        baseUrl: 'http://lms.example',
        location: 'https://ops:Winter2024!@sso.example/cb?code=abc&X-Amz-Signature=def#x',
      }),
    );
    expect(elsewhere.message).toContain('(HTTP 307 to https://sso.example/cb)');
    expect(JSON.stringify([elsewhere.message, elsewhere.hint, elsewhere.details])).not.toMatch(
      /Winter|code=|Signature/,
    );
    expect(elsewhere.hint).not.toContain('wants https');
    const relative = errorFromResponse(failed(308, { location: '/v2/x' }));
    expect(relative.message).toContain('(HTTP 308 to https://lms.example/v2/x)');
    expect(errorFromResponse(failed(302, { location: '' })).message).toContain('(HTTP 302, to nowhere said)');
  });
});

describe('errorFromResponse: what each answer says', () => {
  it("quotes the service's message, else its body, else nothing", () => {
    expect(errorFromResponse(failed(418)).message).toContain('HTTP 418: Nope.:');
    expect(errorFromResponse(failed(418, { body: { error: 'x' } })).message).toContain('HTTP 418: {"error":"x"}:');
    expect(errorFromResponse(failed(418, { body: 'teapot' })).message).toContain('HTTP 418: teapot:');
    expect(errorFromResponse(failed(418, { body: { message: 7 } })).message).toContain('HTTP 418: {"message":7}:');
    expect(errorFromResponse(failed(418, { body: '' })).message).toContain('HTTP 418: the request does not fit');
    expect(errorFromResponse(failed(418, { body: undefined })).message).toContain('HTTP 418: the request does not fit');
  });

  it('an SSN or account number the service quotes back shows its last four, in the message, the field errors and details', () => {
    const error = errorFromResponse(
      failed(422, {
        body: {
          message: 'The bank account number 000123456789 is invalid.',
          errors: { ssn: ['SSN 219-45-7781 is not valid'], payment_at: ['2024-01-05 is in the future'] },
          echo: { ssn: '219457781', lead: 12345678901 },
        },
      }),
    );
    const all = JSON.stringify([error.message, error.details, error.http]);
    for (const clear of ['000123456789', '219-45-7781', '219457781']) expect(all, clear).not.toContain(clear);
    expect(error.message).toContain('********6789');
    expect(JSON.stringify(error.details)).toContain('***-**-7781');
    // Dates stay; numbers as JSON numbers are ids and amounts.
    expect(JSON.stringify(error.details)).toContain('2024-01-05 is in the future');
    expect(JSON.stringify(error.details)).toContain('12345678901');
    const page = errorFromResponse(failed(502, { body: '<html>ssn=219457781&acct=000123456789</html>' }));
    expect(page.message).not.toMatch(/219457781|000123456789/);
  });

  it('gives the status, request and answer in details and in the typed context', () => {
    const error = errorFromResponse(failed(503, { attempts: 3 }));
    const context = { status: 503, method: 'POST', path: '/api/v1/x', attempts: 3, body: { message: 'Nope.' } };
    expect(error.details).toEqual(context);
    expect(error.http).toEqual(context);
  });

  it('401 of a bearer request: the renewed token was refused too; of the legacy post: the api key', () => {
    const bearer = errorFromResponse(failed(401));
    expect(bearer).toBeInstanceOf(AuthError);
    expect(bearer.message).toBe(
      'the service refused the access token for POST /api/v1/x (HTTP 401: Nope.), even after obtaining a new one',
    );
    expect(bearer.hint).toMatch(/leadctl auth login/);
    expect(bearer.http?.status).toBe(401);
    const legacy = errorFromResponse(failed(401, { auth: 'none' }));
    expect(legacy).toBeInstanceOf(AuthError);
    expect(legacy.message).toBe('the service refused the credentials of POST /api/v1/x (HTTP 401: Nope.)');
    expect(legacy.hint).toMatch(/api key/);
    expect(legacy.details).toMatchObject({ status: 401 });
    expect(legacy.http).toMatchObject({ status: 401 });
  });

  it('403: not allowed, with the scopes to ask for', () => {
    const error = errorFromResponse(failed(403));
    expect(error.message).toBe('not allowed for this client: POST /api/v1/x (HTTP 403: Nope.)');
    expect(error.hint).toMatch(/scopes/);
    expect(error.details).toMatchObject({ status: 403 });
    expect(error.http).toMatchObject({ status: 403 });
  });

  it('404 and 410: the object named, or the route missing at this base URL', () => {
    const known = errorFromResponse(failed(404, { subject: 'list 7' }));
    expect(known).toBeInstanceOf(NotFoundError);
    expect(known.message).toBe('list 7 was not found (HTTP 404 for POST /api/v1/x: Nope.)');
    expect(known.hint).toMatch(/check the id/);
    expect(known.details).toMatchObject({ subject: 'list 7', status: 404 });
    expect(known.http).toMatchObject({ status: 404 });
    const route = errorFromResponse(failed(410));
    expect(route.message).toBe(`the service at ${BASE} has no POST /api/v1/x (HTTP 410: Nope.)`);
    expect(route.hint).toMatch(/base URL/);
    expect(route.http).toMatchObject({ status: 410 });
  });

  it('422 and 400: a ValidationError counting the field errors, with the first', () => {
    const body = { message: 'Invalid.', errors: { email: ['bad email', 'too long'], phone: ['bad phone'] } };
    const error = errorFromResponse(failed(422, { body, subject: 'customer C1' })) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.exitCode).toBe(ExitCode.USAGE);
    expect(error.message).toBe(
      'the service refused the request POST /api/v1/x for customer C1 (HTTP 422: Invalid.) with 3 field errors; first: email: bad email',
    );
    expect(error.fieldErrors).toEqual(body.errors);
    expect(error.details).toMatchObject({ errors: body.errors, status: 422 });
    expect(error.http).toMatchObject({ status: 422 });
    expect(error.hint).toMatch(/fix the fields/);
    const one = errorFromResponse(failed(400, { body: { errors: ['only this'] } }));
    expect(one.message).toBe(
      'the service refused the request POST /api/v1/x (HTTP 400: {"errors":["only this"]}) with 1 field error; first: only this',
    );
    expect(errorFromResponse(failed(400)).message).toBe(
      'the service refused the request POST /api/v1/x (HTTP 400: Nope.)',
    );
  });

  it('409: a ConflictError with the reasons', () => {
    const body = { message: 'Taken.', errors: { customer_id: ['already taken'] } };
    const error = errorFromResponse(failed(409, { body, subject: 'customer C1' })) as ConflictError;
    expect(error).toBeInstanceOf(ConflictError);
    expect(error.message).toBe(
      'the service refused POST /api/v1/x for customer C1 as a conflict with what it holds (HTTP 409: Taken.); first: customer_id: already taken',
    );
    expect(error.fieldErrors).toEqual(body.errors);
    expect(error.details).toMatchObject({ errors: body.errors, status: 409 });
    expect(error.http).toMatchObject({ status: 409 });
    expect(error.hint).toMatch(/conflicts/);
    expect(errorFromResponse(failed(409)).message).toBe(
      'the service refused POST /api/v1/x as a conflict with what it holds (HTTP 409: Nope.)',
    );
  });

  it('413: too large, send fewer records', () => {
    const error = errorFromResponse(failed(413));
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect(error.message).toBe('the service refused POST /api/v1/x as too large (HTTP 413: Nope.)');
    expect(error.hint).toMatch(/fewer records/);
    expect(error.details).toMatchObject({ status: 413 });
    expect(error.http).toMatchObject({ status: 413 });
  });

  it('429 and 5xx: the attempts made and why the retries stopped (unless it only repeats the count)', () => {
    const limited = errorFromResponse(failed(429, { attempts: 4, gaveUp: 'Retry-After 120 s is past the budget' }));
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect(limited.message).toBe(
      'the service is still rate limiting POST /api/v1/x after 4 attempts (HTTP 429: Nope.); Retry-After 120 s is past the budget',
    );
    expect(limited.hint).toMatch(/LEADCTL_RETRY_MAX_WAIT_MS/);
    expect(limited.http).toMatchObject({ status: 429 });
    const down = errorFromResponse(failed(502, { attempts: 5, gaveUp: 'gave up after 5 attempts' }));
    expect(down).toBeInstanceOf(ServiceError);
    expect((down as ServiceError).status).toBe(502);
    expect(down.message).toBe('the service failed on POST /api/v1/x with HTTP 502: Nope. after 5 attempts');
    expect(down.http).toMatchObject({ status: 502 });
    expect(errorFromResponse(failed(500, { gaveUp: 'gave up after 1 attempt' })).message).not.toContain('gave up');
    expect(errorFromResponse(failed(500, { gaveUp: 'tried: gave up after 2 attempts' })).message).toContain(
      '; tried: gave up after 2 attempts',
    );
    expect(errorFromResponse(failed(500, { gaveUp: 'gave up after 2 attempts, then more' })).message).toContain(
      '; gave up after 2 attempts, then more',
    );
  });

  it('a 5xx of a request that is not repeatable: it may have taken effect', () => {
    expect(errorFromResponse(failed(500, { repeatable: false })).hint).toBe(
      `the service at ${BASE} failed while handling the request, which may or may not have taken effect: check before sending it again`,
    );
    expect(errorFromResponse(failed(500)).hint).toMatch(new RegExp(`^the service at ${BASE} is having trouble`));
  });

  it('any other status: the request does not fit this deployment, never retried', () => {
    const error = errorFromResponse(failed(405)) as RequestProblemError;
    expect(error).toBeInstanceOf(RequestProblemError);
    expect(error.status).toBe(405);
    expect(error.message).toBe(
      'the service refused the request POST /api/v1/x with HTTP 405: Nope.: the request does not fit this deployment (not retried)',
    );
    expect(error.hint).toContain(`(${BASE})`);
    expect(error.http).toMatchObject({ status: 405 });
  });
});

describe('errorFromResponse: a malformed 2xx', () => {
  const malformed = (extra: Partial<FailedResponse> = {}) =>
    errorFromResponse(
      failed(200, {
        body: '<html>\u001b[2J portal</html>',
        malformed: { kind: 'not-json', contentType: 'text/html', bytes: 1234, detail: undefined },
        ...extra,
      }),
    );

  it('is a ServiceError (exit 5) naming the content type, the size and the start of the page, escaped', () => {
    const error = malformed({ attempts: 3 });
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.exitCode).toBe(ExitCode.SERVICE);
    expect(error.message).toBe(
      'the answer to POST /api/v1/x is not a well-formed answer of the service (HTTP 200, content type text/html, 1,234 bytes): ' +
        'not JSON, starting "<html>\\x1b[2J portal</html>" after 3 attempts; a captive portal, a WAF or a proxy may be answering in its place',
    );
    expect(error.hint).toMatch(/nothing was taken as done$/);
    expect(error.details).toEqual({
      status: 200,
      method: 'POST',
      path: '/api/v1/x',
      attempts: 3,
      problem: 'not-json',
      content_type: 'text/html',
      bytes: 1234,
      start: '<html>\\x1b[2J portal</html>',
    });
    expect(error.http).toEqual({ method: 'POST', path: '/api/v1/x', status: 200, attempts: 3 });
  });

  it('without a content type or a body; with the detail of the problem; one byte', () => {
    const empty = malformed({ body: '', malformed: { kind: 'empty', bytes: 0 } });
    expect(empty.message).toContain('(HTTP 200, no content type, 0 bytes): an empty body;');
    expect(empty.details).toMatchObject({ content_type: null });
    expect(empty.details).not.toHaveProperty('start');
    expect(empty.details).not.toHaveProperty('detail');
    const cut = malformed({
      body: '{',
      malformed: { kind: 'unparsable', contentType: 'application/json', bytes: 1, detail: 'invalid at character 1' },
    });
    expect(cut.message).toContain(
      '(HTTP 200, content type application/json, 1 byte): JSON that does not parse (cut short?) (invalid at character 1), starting "{";',
    );
    expect(cut.details).toMatchObject({ detail: 'invalid at character 1', start: '{' });
  });

  it('quotes nothing of a body that is not text, and says a legacy post may have taken effect', () => {
    const error = malformed({ body: { parsed: true }, repeatable: false });
    expect(error.message).not.toContain('starting');
    expect(error.hint).toMatch(/may or may not have reached the service/);
  });

  it('escapes what the page may hide in its content type or detail, and cuts them', () => {
    const error = malformed({
      malformed: { kind: 'not-json', contentType: `text/html\n${'t'.repeat(100)}`, bytes: 5, detail: 'd'.repeat(400) },
    });
    expect(error.message).toContain(`content type text/html\\n${'t'.repeat(70)}…,`);
    expect(error.message).toContain(`(${'d'.repeat(300)}…)`);
  });
});

describe('errorFromOversizedAnswer', () => {
  const request = { method: 'GET', path: '/api/v1/y', baseUrl: BASE, attempts: 1, status: 200 };

  it('names what Content-Length announced, or how far the answer went, and the limit', () => {
    const announced = errorFromOversizedAnswer({ ...request, limit: 64 * 1024 * 1024, declared: 100_000_000 });
    expect(announced).toBeInstanceOf(ServiceError);
    expect(announced.exitCode).toBe(ExitCode.SERVICE);
    expect(announced.message).toBe(
      'the answer to GET /api/v1/y (HTTP 200) is larger than leadctl reads: it announced 100,000,000 bytes (Content-Length), and the limit is 64 MiB per answer; not read, not retried',
    );
    expect(announced.details).toEqual({
      status: 200,
      method: 'GET',
      path: '/api/v1/y',
      limit_bytes: 64 * 1024 * 1024,
      content_length: 100_000_000,
    });
    expect(announced.http).toEqual({ method: 'GET', path: '/api/v1/y', status: 200, attempts: 1 });
    expect(announced.hint).toContain(BASE);
    const counted = errorFromOversizedAnswer({ ...request, limit: 1000 });
    expect(counted.message).toContain('it went on past 1,000 bytes, and the limit is 1,000 bytes per answer');
    expect(counted.details).not.toHaveProperty('content_length');
  });
});

describe('network failures', () => {
  it('finds the system code on the error or up to three causes below, never "UND_ERR"', () => {
    expect(networkErrorCode(systemError('ECONNRESET'))).toBe('ECONNRESET');
    let wrapped: unknown = systemError('EPIPE');
    for (let depth = 1; depth < 4; depth++) {
      wrapped = new Error('wrap', { cause: wrapped });
      expect(networkErrorCode(wrapped)).toBe('EPIPE');
    }
    expect(networkErrorCode(new Error('wrap', { cause: wrapped }))).toBeUndefined();
    expect(networkErrorCode(Object.assign(new Error('x'), { code: 'UND_ERR', cause: systemError('ENOTFOUND') }))).toBe(
      'ENOTFOUND',
    );
    expect(networkErrorCode(Object.assign(new Error('x'), { code: 42 }))).toBeUndefined();
    expect(networkErrorCode('ECONNRESET')).toBeUndefined();
  });

  it('tells the failures before sending from those after, and the timeouts', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']) {
      expect([code, isConnectPhaseError(systemError(code)), isTransientNetworkError(systemError(code))]).toEqual([
        code,
        true,
        true,
      ]);
    }
    for (const code of ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']) {
      expect([code, isConnectPhaseError(systemError(code)), isTransientNetworkError(systemError(code))]).toEqual([
        code,
        false,
        true,
      ]);
    }
    for (const error of [systemError('ERR_INVALID_ARG'), new Error('no code')]) {
      expect([isConnectPhaseError(error), isTransientNetworkError(error)]).toEqual([false, false]);
    }
    for (const code of ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']) {
      expect([code, isTimeoutError(systemError(code))]).toEqual([code, true]);
    }
    expect(isTimeoutError(systemError('ECONNRESET'))).toBe(false);
  });

  const request = { method: 'GET', path: '/api/v1/z', baseUrl: BASE, attempts: 1 };

  it('says what happened in words, with the code, the attempts and why the retries stopped', () => {
    const refused = errorFromNetwork({
      ...request,
      attempts: 3,
      error: systemError('ECONNREFUSED'),
      gaveUp: 'budget spent',
    });
    expect(refused).toBeInstanceOf(NetworkError);
    expect(refused.exitCode).toBe(ExitCode.SERVICE);
    expect(refused.message).toBe(
      'could not reach the service for GET /api/v1/z: connection refused: nothing is listening there (ECONNREFUSED) after 3 attempts; budget spent',
    );
    expect(refused.hint).toMatch(/^check the base URL \(https:\/\/lms\.example, set by --base-url/);
    expect(refused.details).toEqual({ method: 'GET', path: '/api/v1/z', code: 'ECONNREFUSED', attempts: 3 });
    expect(refused.http).toEqual({ method: 'GET', path: '/api/v1/z', attempts: 3 });
    expect(refused.cause).toBeInstanceOf(Error);
    const odd = errorFromNetwork({ ...request, error: new Error('socket hang up') });
    expect(odd.message).toBe('could not reach the service for GET /api/v1/z: socket hang up');
    expect(errorFromNetwork({ ...request, error: 'weird' }).message).toMatch(/: weird$/);
    expect(errorFromNetwork({ ...request, error: systemError('EPROTO', 'proto') }).message).toMatch(
      /: proto \(EPROTO\)$/,
    );
  });

  it('a timeout: slow or unreachable, raise --timeout; not repeated because unsafe: check its effect', () => {
    expect(errorFromNetwork({ ...request, error: systemError('UND_ERR_HEADERS_TIMEOUT') }).hint).toMatch(
      /slow or unreachable.*--timeout/,
    );
    const unsafe = errorFromNetwork({
      ...request,
      error: systemError('UND_ERR_HEADERS_TIMEOUT'),
      notRepeatedBecauseUnsafe: true,
    });
    expect(unsafe.hint).toMatch(/may or may not have reached the service/);
  });

  describe('through a proxy', () => {
    const proxy = { shown: 'http://proxy.example:3128', variable: 'https_proxy' };

    it('a refused connection is the proxy down, named with its variable', () => {
      const error = errorFromNetwork({
        ...request,
        attempts: 2,
        error: systemError('ECONNREFUSED'),
        proxy,
        gaveUp: 'x y',
      });
      expect(error.message).toBe(
        'could not reach the proxy http://proxy.example:3128 (from https_proxy) for GET /api/v1/z: connection refused: nothing is listening there (ECONNREFUSED) after 2 attempts; x y',
      );
      expect(error.hint).toMatch(/^check https_proxy: the proxy it names is down or wrong/);
      expect(error.details).toEqual({
        method: 'GET',
        path: '/api/v1/z',
        code: 'ECONNREFUSED',
        attempts: 2,
        proxy: 'http://proxy.example:3128',
        proxy_variable: 'https_proxy',
      });
      expect(error.http).toEqual({ method: 'GET', path: '/api/v1/z', attempts: 2 });
      expect(error.cause).toBeInstanceOf(Error);
      expect(errorFromNetwork({ ...request, error: systemError('EADDRNOTAVAIL'), proxy }).message).toMatch(
        /for GET \/api\/v1\/z: EADDRNOTAVAIL \(EADDRNOTAVAIL\)$/,
      );
    });

    it('a tunnel refused: its status, and for 407 the credentials to give', () => {
      const refused = errorFromNetwork({
        ...request,
        error: new Error('Proxy response (502) !== 200 when HTTP Tunneling'),
        proxy,
      });
      expect(refused.message).toBe(
        `the proxy http://proxy.example:3128 (from https_proxy) would not connect GET /api/v1/z to the service: it answered HTTP 502 instead of connecting to ${BASE}`,
      );
      expect(refused.hint).toMatch(/NO_PROXY/);
      expect(refused.details).toMatchObject({ status: 502, proxy_variable: 'https_proxy' });
      expect(refused.http).toEqual({ method: 'GET', path: '/api/v1/z', attempts: 1 });
      const auth = errorFromNetwork({
        ...request,
        attempts: 2,
        error: new Error('Proxy response (407) !== 200 when HTTP Tunneling'),
        proxy,
        gaveUp: 'stop',
      });
      expect(auth.message).toMatch(/: it asks for a user name and password after 2 attempts; stop$/);
      expect(auth.hint).toBe("put the proxy's credentials in https_proxy (http://user:password@host:port)");
    });

    it('a failure after connecting is the service, not the proxy', () => {
      const error = errorFromNetwork({ ...request, error: systemError('ECONNRESET'), proxy });
      expect(error.message).toMatch(/^could not reach the service for GET/);
      expect(errorFromNetwork({ ...request, error: 'Proxy response (502)', proxy }).message).toMatch(
        /^could not reach the service/,
      );
    });
  });
});

describe('errorFromTokenResponse', () => {
  const token = (status: number, body: unknown) =>
    errorFromTokenResponse({ ...failed(status, { body, path: '/oauth/token' }), clientId: 'client-9' });

  it('400, 401 and 403: the credentials refused, with the OAuth error and its description', () => {
    const error = token(400, { error: 'invalid_grant', error_description: 'The grant is invalid.' });
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toBe(
      `the service at ${BASE} refused the credentials of client client-9 (invalid_grant: The grant is invalid.)`,
    );
    expect(error.hint).toMatch(/^run `leadctl auth login` again; if it keeps failing/);
    expect(error.details).toEqual({ status: 400, error: 'invalid_grant', error_description: 'The grant is invalid.' });
    expect(error.http).toMatchObject({ status: 400, path: '/oauth/token', body: { error: 'invalid_grant' } });
    expect(token(403, { error: 'invalid_client' }).hint).toMatch(/client id or secret is wrong/);
    expect(token(401, { error: 'other' }).hint).toMatch(/client id or secret is wrong/);
  });

  it('without an OAuth error: the message, else the body, else the status', () => {
    expect(token(401, { message: 'Unauthenticated.' }).message).toMatch(/\(Unauthenticated\.\)$/);
    expect(token(401, { error_description: 7, message: 'm' }).message).toMatch(/\(m\)$/);
    expect(token(401, 'denied').message).toMatch(/\(denied\)$/);
    expect(token(403, undefined).message).toMatch(/\(HTTP 403\)$/);
    expect(token(403, { error: 5 }).details).toEqual({ status: 403, error: undefined, error_description: undefined });
  });

  it('any other status is an answer like any other', () => {
    expect(token(500, { message: 'down' })).toBeInstanceOf(ServiceError);
    expect(token(404, { message: 'no' })).toBeInstanceOf(NotFoundError);
  });
});
