import type { z } from 'zod';

/**
 * The one status taxonomy: what an HTTP status from the service means for leadctl. Every
 * command reaches it through the API client (retries, token renewal) and errorFromResponse
 * (the typed error and its exit code); the exit-code table in docs/output.md is written from it.
 *
 * | status            | class            | what leadctl does                                            | exit |
 * |-------------------|------------------|--------------------------------------------------------------|------|
 * | 2xx               | success          | done (a batch without per-record detail is "unconfirmed")    | 0    |
 * | 2xx, malformed    | (see checkAnswer)| not an answer: retried like a 5xx, then stop                  | 5    |
 * | 400, 422          | refused          | that record is rejected, the run goes on                      | 4 (2 for a one-request command) |
 * | 409               | conflict         | that record is rejected as a conflict, with the reason        | 4 (2 for a one-request command) |
 * | 413               | too-large        | a batch is halved and resent; one record is rejected          | 4 / 2 |
 * | 401               | unauthenticated  | a new token once, then stop                                   | 3    |
 * | 403               | forbidden        | stop: not allowed for this client                             | 3    |
 * | 404, 410          | not-found        | the named object does not exist (a missing route: a deployment problem) | 2 |
 * | 405, 414, other 4xx, 1xx, 3xx | request-problem | a leadctl or deployment problem: never retried, never "unavailable" | 2 |
 * | 429, 5xx          | retryable        | retried with backoff (safe requests only), then stop          | 5    |
 */
export type StatusClass =
  | 'success'
  | 'refused'
  | 'conflict'
  | 'too-large'
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'request-problem'
  | 'retryable';

export function classifyStatus(status: number): StatusClass {
  if (status >= 200 && status < 300) return 'success';
  if (status === 400 || status === 422) return 'refused';
  if (status === 409) return 'conflict';
  if (status === 413) return 'too-large';
  if (status === 401) return 'unauthenticated';
  if (status === 403) return 'forbidden';
  if (status === 404 || status === 410) return 'not-found';
  if (status === 429 || (status >= 500 && status < 600)) return 'retryable';
  return 'request-problem';
}

/** Worth repeating: the same request may succeed later. Every other non-2xx is an answer about the request. */
export function isRetryableStatus(status: number): boolean {
  return classifyStatus(status) === 'retryable';
}

// ---- answers -------------------------------------------------------------------------------------

/**
 * What a 2xx must be to count as the service's answer. A 2xx that is not (an HTML page from a
 * captive portal or a WAF, an empty or cut-off body, JSON of another shape) is `malformed`: it is
 * retried like a 5xx and, if it stays so, the request fails (exit 5). It never acknowledges
 * anything: a push neither journals nor remembers what it sent with it.
 *
 * | the 2xx answer                                              | problem       |
 * |-------------------------------------------------------------|---------------|
 * | no body, where the endpoint may answer without one (`empty`) | none: done    |
 * | no body anywhere else                                       | `empty`       |
 * | a content type that is not JSON (`text/html`, none at all)   | `not-json`    |
 * | a JSON content type, but the body does not parse (cut short) | `unparsable`  |
 * | JSON that lacks what the contract promises (`schema`)        | `wrong-shape` |
 *
 * Every answer, 2xx or not, is read within the request's deadline (`--timeout`) and refused
 * unread past MAX_ANSWER_BYTES (`too-large`: not retried, exit 5).
 */
export interface AnswerRule {
  /** The contract's shape of the body (tolerant: extra fields pass, missing essentials do not). */
  schema?: z.ZodType;
  /**
   * When a 2xx without a body is an answer: `no-content` for 204 and 205 only (the default
   * without a schema), `always` (the single upserts, whose contract shows no body), `never` (the
   * default with a schema: the body is the answer).
   */
  empty?: 'no-content' | 'always' | 'never';
}

/** Largest answer leadctl reads (docs/guarantees-network.md); a larger one is refused unread. */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

export type AnswerProblemKind = 'empty' | 'not-json' | 'unparsable' | 'wrong-shape';

/** Each problem in a few words (retry lines, messages). */
export const ANSWER_PROBLEM_WORDS: Record<AnswerProblemKind, string> = {
  empty: 'an empty body',
  'not-json': 'not JSON',
  unparsable: 'JSON that does not parse (cut short?)',
  'wrong-shape': 'JSON of another shape',
};

export interface AnswerProblem {
  kind: AnswerProblemKind;
  /** The content type as sent, when there was one. */
  contentType?: string;
  /** Bytes of the body. */
  bytes: number;
  /** What was wrong, in words (the parser's complaint, the first shape issues). */
  detail?: string;
}

export type AnswerCheck = { ok: true; body: unknown } | { ok: false; problem: AnswerProblem };

const JSON_TYPE = /^\s*(?:application\/(?:[\w.+-]+\+)?json|text\/json)\s*(?:;|$)/i;

export function isJsonContentType(contentType: string | undefined): boolean {
  return contentType !== undefined && JSON_TYPE.test(contentType);
}

/** Whether a 2xx answer is well-formed under `rule`; its parsed body when it is. */
export function checkAnswer(
  status: number,
  contentType: string | undefined,
  text: string,
  bytes: number,
  rule: AnswerRule = {},
): AnswerCheck {
  const problem = (kind: AnswerProblemKind, detail?: string): AnswerCheck => ({
    ok: false,
    problem: { kind, bytes, ...(contentType ? { contentType } : {}), ...(detail ? { detail } : {}) },
  });
  if (bytes === 0) {
    const empty = rule.empty ?? (rule.schema ? 'never' : 'no-content');
    const noContent = status === 204 || status === 205;
    return empty === 'always' || (empty === 'no-content' && noContent)
      ? { ok: true, body: undefined }
      : problem('empty');
  }
  if (!isJsonContentType(contentType)) return problem('not-json');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    // Only the position: the parser's message quotes the body, unescaped.
    const at = /at position (\d+)/.exec((err as Error).message);
    return problem('unparsable', at ? `invalid at character ${at[1]}` : undefined);
  }
  if (!rule.schema) return { ok: true, body };
  const parsed = rule.schema.safeParse(body);
  if (parsed.success) return { ok: true, body: parsed.data };
  const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  return problem('wrong-shape', issues.join('; '));
}
