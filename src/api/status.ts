/**
 * The one status taxonomy: what an HTTP status from the service means for leadctl. Every
 * command reaches it through the API client (retries, token renewal) and errorFromResponse
 * (the typed error and its exit code); the exit-code table in docs/output.md is written from it.
 *
 * | status            | class            | what leadctl does                                            | exit |
 * |-------------------|------------------|--------------------------------------------------------------|------|
 * | 2xx               | success          | done (a batch without per-record detail is "unconfirmed")    | 0    |
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
