/**
 * When and how long to wait before repeating a request. Pure: no I/O, so the
 * policy can be tested without a network and tuned from the environment.
 */

export interface RetryPolicy {
  /** Attempts in all, the first one included. */
  maxAttempts: number;
  /** First backoff step; doubles on each further attempt. */
  baseDelayMs: number;
  /** Largest single wait (backoff only; a longer Retry-After is refused, see below). */
  maxDelayMs: number;
  /** Cap on the total time spent waiting between attempts of one request. */
  maxTotalWaitMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 6,
  baseDelayMs: 500,
  maxDelayMs: 20_000,
  maxTotalWaitMs: 60_000,
};

/**
 * Environment knobs, documented in docs/output.md. Tests use them to keep the
 * "service stays down" case short; operators use them to wait longer in cron.
 */
export function retryPolicyFromEnv(
  env: Record<string, string | undefined>,
  base: RetryPolicy = DEFAULT_RETRY_POLICY,
): RetryPolicy {
  const read = (name: string, min: number): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) {
      throw new RangeError(`${name} must be a number ≥ ${min}, got "${raw}"`);
    }
    return n;
  };
  return {
    maxAttempts: read('LEADCTL_RETRY_ATTEMPTS', 1) ?? base.maxAttempts,
    baseDelayMs: read('LEADCTL_RETRY_BASE_MS', 0) ?? base.baseDelayMs,
    maxDelayMs: read('LEADCTL_RETRY_MAX_DELAY_MS', 0) ?? base.maxDelayMs,
    maxTotalWaitMs: read('LEADCTL_RETRY_MAX_WAIT_MS', 0) ?? base.maxTotalWaitMs,
  };
}

/**
 * Exponential backoff with "equal jitter": half the step is fixed, half random,
 * so that many workers hit by the same outage do not come back in lockstep.
 */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

/**
 * Retry-After is either delay-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Returns milliseconds, or undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

export interface RetryDecision {
  retry: boolean;
  delayMs: number;
  /** Why not, in words, when retry is false. */
  reason?: string;
}

/**
 * Decides whether attempt `attempt` (1-based, the one that just failed) may be followed by another.
 * `waitedMs` is what this request has already spent waiting.
 */
export function decideRetry(
  attempt: number,
  waitedMs: number,
  policy: RetryPolicy,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): RetryDecision {
  if (attempt >= policy.maxAttempts) {
    return { retry: false, delayMs: 0, reason: `gave up after ${attempt} attempt${attempt === 1 ? '' : 's'}` };
  }
  const remaining = policy.maxTotalWaitMs - waitedMs;
  if (retryAfterMs !== undefined) {
    if (retryAfterMs > remaining) {
      return {
        retry: false,
        delayMs: 0,
        reason: `the service asked to wait ${formatMs(retryAfterMs)}, more than the ${formatMs(Math.max(0, remaining))} left of the retry budget`,
      };
    }
    // Retry-After is the least to wait, not the whole answer: workers that all come back after
    // exactly Retry-After collide again, and the unlucky one starves. So the backoff keeps growing
    // underneath it, and jitter of up to half the Retry-After (at most 1 s) spreads the workers out.
    const jitter = Math.round(random() * Math.min(1000, Math.max(policy.baseDelayMs, retryAfterMs / 2)));
    const delayMs = Math.min(remaining, Math.max(retryAfterMs, backoffDelay(attempt, policy, random)) + jitter);
    return { retry: true, delayMs };
  }
  const delayMs = backoffDelay(attempt, policy, random);
  if (delayMs > remaining) {
    return { retry: false, delayMs: 0, reason: `the retry budget of ${formatMs(policy.maxTotalWaitMs)} is used up` };
  }
  return { retry: true, delayMs };
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  return s < 10 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`;
}

/** A sleep that an AbortSignal can cut short (rejects with the signal's reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason ?? new Error('aborted'));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
