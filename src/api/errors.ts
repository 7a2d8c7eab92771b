/**
 * Turns HTTP answers and transport failures into the typed errors of src/errors.ts,
 * with messages that say what happened and what to do next.
 */
import {
  AuthError,
  ConflictError,
  type LeadctlError,
  NetworkError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  RequestProblemError,
  ServiceError,
  ValidationError,
} from '../errors.js';
import { maskPersonalNumbers } from '../io/mask.js';
import { printable } from '../io/printable.js';
import { ANSWER_PROBLEM_WORDS, classifyStatus, type AnswerProblem } from './status.js';

export interface FailedRequest {
  method: string;
  /** Path and query, never the host's credentials. */
  path: string;
  baseUrl: string;
  /** Attempts made in all. */
  attempts: number;
  /** The object the request names ("list 42", "lead 7"), when it names one: a 404 then means that object is unknown. */
  subject?: string;
  /** False when repeating the request could duplicate its effect (the legacy lead post). Default true. */
  repeatable?: boolean;
  /** 'none': the request carried no access token (the legacy post, whose api key is in the body). */
  auth?: 'bearer' | 'none';
}

export interface FailedResponse extends FailedRequest {
  status: number;
  /** Parsed JSON when the body was JSON, else its text. */
  body: unknown;
  /** Why the retries stopped, when they did. */
  gaveUp?: string;
  /** A 2xx that is not a well-formed answer (src/api/status.ts); `body` is then its text. */
  malformed?: AnswerProblem;
  /** Where a redirect (3xx) pointed, as its Location header said ('' when it said nothing). */
  location?: string;
}

const MAX_BODY_IN_MESSAGE = 500;

/** A message or reason of the service is at most this long where leadctl repeats it. */
export const MAX_SERVICE_TEXT = 500;
const MAX_FIELD_TEXT = 200;

/**
 * Words of the service (a message, a reason, an id it names) as leadctl repeats them on a terminal
 * or in a rejects file: control, bidi and separator characters escaped (a proxy's or a broken
 * service's text must not clear the screen, rewrite a line or set the window's title), cut to
 * `max` characters with `…` (a 3 MB message is not a message).
 */
export function serviceText(text: string, max: number = MAX_SERVICE_TEXT): string {
  return printable(text, max, false);
}

/**
 * The service's prose (a message, a reason, an error page): as serviceText, and an SSN or account
 * number it quotes back (a 422 naming the value it refused, a proxy's page echoing the request)
 * shows its last four only. Identifiers the run matches on (a skip's customer id) use serviceText.
 */
export function serviceProse(text: string, max: number = MAX_SERVICE_TEXT): string {
  return serviceText(maskPersonalNumbers(text), max);
}

/** Every string in a body, masked as serviceProse masks (numbers as JSON numbers are ids and amounts). */
export function maskedBody(body: unknown): unknown {
  if (typeof body === 'string') return maskPersonalNumbers(body);
  if (Array.isArray(body)) return body.map(maskedBody);
  if (body && typeof body === 'object')
    return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, maskedBody(v)]));
  return body;
}

/** The error body as the service wrote it, shortened and escaped, for bodies of unknown shape. */
export function describeBody(body: unknown): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  if (!text) return '';
  return serviceProse(text, MAX_BODY_IN_MESSAGE);
}

/** An error's details carry the body as it came when it is small; a larger one, cut (and escaped) as a message quotes it. */
const MAX_BODY_IN_DETAILS = 4096;

function boundedBody(body: unknown): unknown {
  const text = typeof body === 'string' ? body : (JSON.stringify(body) ?? '');
  return text.length <= MAX_BODY_IN_DETAILS ? maskedBody(body) : serviceProse(text, MAX_BODY_IN_DETAILS);
}

function messageOf(body: unknown): string | undefined {
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    return serviceProse((body as { message: string }).message);
  }
  return undefined;
}

/** Field errors of a Laravel-style validation body: {message, errors: {field: [reasons]}}. */
export function fieldErrorsOf(body: unknown): Record<string, string[]> {
  const errors = body && typeof body === 'object' ? (body as { errors?: unknown }).errors : undefined;
  const out: Record<string, string[]> = {};
  if (errors && typeof errors === 'object' && !Array.isArray(errors)) {
    for (const [field, reasons] of Object.entries(errors as Record<string, unknown>)) {
      // A key such as `list.3` (a list's row) is printable already: escaping leaves it as it is.
      const key = serviceText(field, MAX_FIELD_TEXT);
      if (Array.isArray(reasons)) out[key] = reasons.map((r) => serviceProse(String(r)));
      else if (reasons !== undefined && reasons !== null) out[key] = [serviceProse(String(reasons))];
    }
  } else if (Array.isArray(errors)) {
    out[''] = errors.map((r) => serviceProse(String(r)));
  }
  return out;
}

function what(r: FailedRequest): string {
  return `${r.method} ${r.path}`;
}

function attemptsNote(r: FailedRequest): string {
  return r.attempts > 1 ? ` after ${r.attempts} attempts` : '';
}

/** A non-2xx answer (after retries and the token renewal, where they apply), classified by src/api/status.ts. */
export function errorFromResponse(r: FailedResponse): LeadctlError {
  if (r.malformed) return errorFromMalformedAnswer(r, r.malformed);
  const serviceMessage = messageOf(r.body);
  const said = serviceMessage
    ? `: ${serviceMessage}`
    : r.body !== '' && r.body !== undefined
      ? `: ${describeBody(r.body)}`
      : '';
  const details = { status: r.status, method: r.method, path: r.path, attempts: r.attempts, body: boundedBody(r.body) };
  if (r.location !== undefined) return errorFromRedirect(r, details);
  switch (classifyStatus(r.status)) {
    case 'unauthenticated':
      if (r.auth === 'none') {
        return new AuthError(`the service refused the credentials of ${what(r)} (HTTP 401${said})`, {
          hint: 'check the campaign api key (--api-key or LEADCTL_API_KEY, or api_key in the file)',
          details,
          http: details,
        });
      }
      return new AuthError(
        `the service refused the access token for ${what(r)} (HTTP 401${said}), even after obtaining a new one`,
        {
          hint: 'the client credentials may have been revoked or rotated: run `leadctl auth login` with the current secret, or update LEADCTL_CLIENT_SECRET',
          details,
          http: details,
        },
      );
    case 'forbidden':
      return new AuthError(`not allowed for this client: ${what(r)} (HTTP 403${said})`, {
        hint: "the API client's scopes do not cover this endpoint: ask the account administrator to grant it in the dashboard, or log in with another client",
        details,
        http: details,
      });
    case 'not-found': {
      const gone = r.status === 410 ? 'is gone' : 'was not found';
      if (r.subject) {
        return new NotFoundError(`${r.subject} ${gone} (HTTP ${r.status} for ${what(r)}${said})`, {
          hint: 'check the id you gave; `leadctl lists ls` and similar commands show what exists',
          details: { ...details, subject: r.subject },
          http: details,
        });
      }
      return new NotFoundError(`the service at ${r.baseUrl} has no ${what(r)} (HTTP ${r.status}${said})`, {
        hint: 'check the base URL (--base-url, LEADCTL_BASE_URL or the profile): it may point at another service or version',
        details,
        http: details,
      });
    }
    case 'refused':
    case 'conflict': {
      const fieldErrors = fieldErrorsOf(r.body);
      const count = Object.values(fieldErrors).reduce((n, list) => n + list.length, 0);
      const first = Object.entries(fieldErrors)[0];
      const sample = first ? `; first: ${first[0] ? first[0] + ': ' : ''}${first[1][0]}` : '';
      const about = r.subject ? ` for ${r.subject}` : '';
      if (r.status === 409) {
        return new ConflictError(
          `the service refused ${what(r)}${about} as a conflict with what it holds (HTTP 409${said})${count ? `${sample}` : ''}`,
          fieldErrors,
          {
            hint: 'the record conflicts with one the service already has (a duplicate id, or an id that belongs to another customer or loan): fix the record, then send it again',
            details: { ...details, errors: fieldErrors },
            http: details,
          },
        );
      }
      return new ValidationError(
        `the service refused the request ${what(r)}${about} (HTTP ${r.status}${said})${count ? ` with ${count} field error${count === 1 ? '' : 's'}${sample}` : ''}`,
        fieldErrors,
        {
          hint: 'fix the fields named in the errors and run the command again',
          details: { ...details, errors: fieldErrors },
          http: details,
        },
      );
    }
    case 'too-large':
      return new PayloadTooLargeError(
        `the service refused ${what(r)} as too large (HTTP 413${said})`,
        {},
        {
          hint: 'send fewer records per request (split the input file into smaller ones), then run the command again',
          details,
          http: details,
        },
      );
    case 'retryable':
      if (r.status === 429) {
        return new RateLimitedError(
          `the service is still rate limiting ${what(r)}${attemptsNote(r)} (HTTP 429${said})${gaveUpNote(r.gaveUp)}`,
          {
            hint: 'wait a minute and run the command again; LEADCTL_RETRY_MAX_WAIT_MS allows a longer wait',
            details,
            http: details,
          },
        );
      }
      return new ServiceError(
        `the service failed on ${what(r)} with HTTP ${r.status}${said}${attemptsNote(r)}${gaveUpNote(r.gaveUp)}`,
        r.status,
        {
          hint:
            r.repeatable === false
              ? `the service at ${r.baseUrl} failed while handling the request, which may or may not have taken effect: check before sending it again`
              : `the service at ${r.baseUrl} is having trouble: run the command again later (it is safe to repeat)`,
          details,
          http: details,
        },
      );
    default:
      return new RequestProblemError(
        `the service refused the request ${what(r)} with HTTP ${r.status}${said}: the request does not fit this deployment (not retried)`,
        r.status,
        {
          hint: `check the base URL (${r.baseUrl}) and that this leadctl version fits the service; rerun with --verbose and report it if it persists`,
          details,
          http: details,
        },
      );
  }
}

/**
 * A redirect is never followed: the request, and the credentials with it, would go where the
 * answer says. When it points at the same service under another address (http to https, a new
 * host name), the base URL is what to change.
 */
function errorFromRedirect(r: FailedResponse, details: Record<string, unknown>): LeadctlError {
  // Where, not how: a Location's user, query and fragment may carry a code or a signature.
  let target: URL | undefined;
  try {
    target = r.location ? new URL(r.location, r.baseUrl) : undefined;
  } catch {
    target = undefined;
  }
  const to = target ? serviceText(`${target.origin}${target.pathname}`, 300) : '';
  const base = new URL(r.baseUrl);
  const upgrade = target?.protocol === 'https:' && base.protocol === 'http:' && target.hostname === base.hostname;
  return new RequestProblemError(
    `the service answered ${what(r)} with a redirect (HTTP ${r.status}${to ? ` to ${to}` : ', to nowhere said'}), which leadctl does not follow: the request and its credentials would go elsewhere`,
    r.status,
    {
      hint: to
        ? `if that is the service's address, make it the base URL (--base-url, LEADCTL_BASE_URL or the profile)${upgrade ? ': the service wants https://' : ''}; otherwise check what stands at ${r.baseUrl}`
        : `check the base URL (${r.baseUrl}): something there redirects instead of answering`,
      details: { ...details, location: to || null },
      http: details,
    },
  );
}

const EXCERPT_CHARS = 120;

/**
 * The first characters of an answer as messages quote it: control, bidi and separator characters
 * escaped (a page must not move the cursor or reorder the line), cut with `…`.
 */
export function answerExcerpt(text: string, max: number = EXCERPT_CHARS): string {
  return `"${printable(maskPersonalNumbers(text), max)}"`;
}

function bytesWords(n: number): string {
  return `${n.toLocaleString('en-US')} byte${n === 1 ? '' : 's'}`;
}

/**
 * A 2xx that is not the service's answer, after the retries where they apply: most often a
 * captive portal, a WAF or proxy block page, or a proxy sending the request elsewhere. Exit 5,
 * like an outage: the request is not taken as done.
 */
function errorFromMalformedAnswer(r: FailedResponse, p: AnswerProblem): LeadctlError {
  const type = p.contentType ? `content type ${printable(p.contentType, 80)}` : 'no content type';
  const text = typeof r.body === 'string' ? r.body : '';
  const start = p.bytes > 0 && text !== '' ? printable(text, EXCERPT_CHARS) : undefined;
  const message =
    `the answer to ${what(r)} is not a well-formed answer of the service (HTTP ${r.status}, ${type}, ${bytesWords(p.bytes)}): ` +
    `${ANSWER_PROBLEM_WORDS[p.kind]}${p.detail ? ` (${printable(p.detail, 300)})` : ''}${start !== undefined ? `, starting "${start}"` : ''}${attemptsNote(r)}${gaveUpNote(r.gaveUp)}` +
    '; a captive portal, a WAF or a proxy may be answering in its place';
  const hint =
    r.repeatable === false
      ? `check the base URL (${r.baseUrl}), HTTPS_PROXY / NO_PROXY and the network; the request may or may not have reached the service, so check its effect before sending it again`
      : `check the base URL (${r.baseUrl}), HTTPS_PROXY / NO_PROXY and the network (sign in to a captive portal), then run the command again; nothing was taken as done`;
  return new ServiceError(message, r.status, {
    hint,
    details: {
      status: r.status,
      method: r.method,
      path: r.path,
      attempts: r.attempts,
      problem: p.kind,
      content_type: p.contentType === undefined ? null : printable(p.contentType, 80),
      bytes: p.bytes,
      ...(p.detail ? { detail: printable(p.detail, 300) } : {}),
      ...(start !== undefined ? { start } : {}),
    },
    http: { method: r.method, path: r.path, status: r.status, attempts: r.attempts },
  });
}

export interface OversizedAnswer extends FailedRequest {
  status: number;
  limit: number;
  /** What Content-Length announced, when it did. */
  declared?: number;
}

/** An answer larger than leadctl reads: refused unread, not retried (the same request would get it again). */
export function errorFromOversizedAnswer(r: OversizedAnswer): LeadctlError {
  const size =
    r.declared !== undefined
      ? `announced ${bytesWords(r.declared)} (Content-Length)`
      : `went on past ${bytesWords(r.limit)}`;
  return new ServiceError(
    `the answer to ${what(r)} (HTTP ${r.status}) is larger than leadctl reads: it ${size}, and the limit is ${formatBytes(r.limit)} per answer; not read, not retried`,
    r.status,
    {
      hint: `no answer of the service comes near that size: check the base URL (${r.baseUrl}) and any proxy between leadctl and the service`,
      details: {
        status: r.status,
        method: r.method,
        path: r.path,
        limit_bytes: r.limit,
        ...(r.declared !== undefined ? { content_length: r.declared } : {}),
      },
      http: { method: r.method, path: r.path, status: r.status, attempts: r.attempts },
    },
  );
}

function formatBytes(n: number): string {
  const mib = n / (1024 * 1024);
  return Number.isInteger(mib) ? `${mib} MiB` : bytesWords(n);
}

/** undici and Node put the system error code on the error or on its cause. */
export function networkErrorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Failures that happen before a request leaves this machine: repeating can never duplicate it. */
const CONNECT_PHASE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** Failures that may have happened after the request was (partly) sent. */
const TRANSIENT_CODES = new Set([
  ...CONNECT_PHASE_CODES,
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

export function isConnectPhaseError(err: unknown): boolean {
  const code = networkErrorCode(err);
  return code !== undefined && CONNECT_PHASE_CODES.has(code);
}

export function isTransientNetworkError(err: unknown): boolean {
  const code = networkErrorCode(err);
  return code !== undefined && TRANSIENT_CODES.has(code);
}

export function isTimeoutError(err: unknown): boolean {
  const code = networkErrorCode(err);
  return (
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'ETIMEDOUT'
  );
}

const CODE_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing is listening there',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed (DNS)',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'the network is unreachable',
  ECONNRESET: 'connection reset by the service',
  UND_ERR_SOCKET: 'connection closed by the service',
  UND_ERR_CONNECT_TIMEOUT: 'timed out connecting',
  UND_ERR_HEADERS_TIMEOUT: 'timed out waiting for the answer',
  UND_ERR_BODY_TIMEOUT: 'timed out reading the answer',
};

export interface NetworkFailure extends FailedRequest {
  error: unknown;
  gaveUp?: string;
  /** True when the request may have reached the service and was not repeated because that is unsafe. */
  notRepeatedBecauseUnsafe?: boolean;
  /** The proxy every connection goes to, when there is one: failing to connect is failing to reach it. */
  proxy?: { shown: string; variable: string };
}

/** What the proxy said when it would not open a tunnel (undici: "Proxy response (502) !== 200 …"). */
function proxyRefusalStatus(error: unknown): number | undefined {
  const message = error instanceof Error ? error.message : '';
  const match = /Proxy response \((\d{3})\)/.exec(message);
  return match ? Number(match[1]) : undefined;
}

function errorFromProxy(f: NetworkFailure & { proxy: { shown: string; variable: string } }): NetworkError | undefined {
  const code = networkErrorCode(f.error);
  const named = `the proxy ${f.proxy.shown} (from ${f.proxy.variable})`;
  const status = proxyRefusalStatus(f.error);
  const details = {
    method: f.method,
    path: f.path,
    code,
    attempts: f.attempts,
    proxy: f.proxy.shown,
    proxy_variable: f.proxy.variable,
  };
  if (status !== undefined) {
    const why =
      status === 407
        ? 'it asks for a user name and password'
        : `it answered HTTP ${status} instead of connecting to ${f.baseUrl}`;
    return new NetworkError(
      `${named} would not connect ${f.method} ${f.path} to the service: ${why}${attemptsNote(f)}${gaveUpNote(f.gaveUp)}`,
      {
        hint:
          status === 407
            ? `put the proxy's credentials in ${f.proxy.variable} (http://user:password@host:port)`
            : `check that the proxy can reach ${f.baseUrl}, or add its host to NO_PROXY to connect directly`,
        details: { ...details, status },
        http: { method: f.method, path: f.path, attempts: f.attempts },
        cause: f.error,
      },
    );
  }
  if (!isConnectPhaseError(f.error)) return undefined;
  return new NetworkError(
    `could not reach ${named} for ${f.method} ${f.path}: ${(code && CODE_WORDS[code]) ?? code}${code ? ` (${code})` : ''}${attemptsNote(f)}${gaveUpNote(f.gaveUp)}`,
    {
      hint: `check ${f.proxy.variable}: the proxy it names is down or wrong; unset it (or add the service's host to NO_PROXY) to connect directly`,
      details,
      http: { method: f.method, path: f.path, attempts: f.attempts },
      cause: f.error,
    },
  );
}

export function errorFromNetwork(f: NetworkFailure): NetworkError {
  if (f.proxy) {
    const viaProxy = errorFromProxy({ ...f, proxy: f.proxy });
    if (viaProxy) return viaProxy;
  }
  const code = networkErrorCode(f.error);
  const words = (code && CODE_WORDS[code]) ?? (f.error instanceof Error ? f.error.message : String(f.error));
  const timeout = isTimeoutError(f.error);
  const hint = f.notRepeatedBecauseUnsafe
    ? 'the request may or may not have reached the service and is not repeated automatically, to avoid a duplicate; check its effect before sending it again'
    : timeout
      ? `the service at ${f.baseUrl} is slow or unreachable: try again later or raise --timeout`
      : `check the base URL (${f.baseUrl}, set by --base-url, LEADCTL_BASE_URL or the profile) and the network, then run the command again`;
  return new NetworkError(
    `could not reach the service for ${f.method} ${f.path}: ${words}${code ? ` (${code})` : ''}${attemptsNote(f)}${gaveUpNote(f.gaveUp)}`,
    {
      hint,
      details: { method: f.method, path: f.path, code, attempts: f.attempts },
      http: { method: f.method, path: f.path, attempts: f.attempts },
      cause: f.error,
    },
  );
}

/** The token endpoint's answer to bad credentials (OAuth 2.0 error form, RFC 6749 §5.2). */
export function errorFromTokenResponse(r: FailedResponse & { clientId: string }): LeadctlError {
  const body = r.body && typeof r.body === 'object' ? (r.body as Record<string, unknown>) : {};
  const oauthError = typeof body.error === 'string' ? serviceText(body.error) : undefined;
  const description =
    typeof body.error_description === 'string'
      ? serviceText(body.error_description)
      : typeof body.message === 'string'
        ? serviceText(body.message)
        : undefined;
  if (r.status === 400 || r.status === 401 || r.status === 403) {
    const reason = [oauthError, description].filter(Boolean).join(': ') || describeBody(r.body) || `HTTP ${r.status}`;
    return new AuthError(`the service at ${r.baseUrl} refused the credentials of client ${r.clientId} (${reason})`, {
      hint:
        oauthError === 'invalid_client' || r.status === 401
          ? 'the client id or secret is wrong, or the secret was rotated: run `leadctl auth login` with the current secret (or fix LEADCTL_CLIENT_ID / LEADCTL_CLIENT_SECRET)'
          : 'run `leadctl auth login` again; if it keeps failing, rerun with --verbose and report the answer',
      details: { status: r.status, error: oauthError, error_description: description },
      http: { method: r.method, path: r.path, status: r.status, attempts: r.attempts, body: boundedBody(r.body) },
    });
  }
  return errorFromResponse(r);
}

/** Why the retries stopped, unless it only repeats the attempt count already in the message. */
function gaveUpNote(gaveUp: string | undefined): string {
  return gaveUp && !/^gave up after \d+ attempts?$/.test(gaveUp) ? `; ${gaveUp}` : '';
}
