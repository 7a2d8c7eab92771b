import { AuthError, ExitCode, LeadctlError, RequestProblemError, ValidationError } from '../errors.js';
import { sleep } from '../api/retry.js';

export type Attempted<T> = { ok: true; value: T; attempts: number } | { ok: false; error: unknown; attempts: number };

export interface RecordRetryOptions {
  /** Further attempts after the first. */
  retries: number;
  baseDelayMs?: number;
  signal?: AbortSignal;
}

/**
 * A second line of retries, per record, on top of the API client's: the client already repeats
 * transient failures, so this catches what is left (a lead not yet readable, a longer outage)
 * before the record is reported as failed. A refused record (400, 409, 422) is not repeated.
 * Refused credentials and a request the deployment refuses (405, 414…) end the whole run: every
 * record would meet them.
 */
export async function attemptRecord<T>(fn: () => Promise<T>, options: RecordRetryOptions): Promise<Attempted<T>> {
  const base = options.baseDelayMs ?? 500;
  let attempts = 0;
  for (;;) {
    attempts++;
    try {
      return { ok: true, value: await fn(), attempts };
    } catch (error) {
      if (error instanceof AuthError || error instanceof RequestProblemError) throw error;
      // The service refusing the content answers the same way every time.
      const final = error instanceof ValidationError;
      if (final || options.signal?.aborted || attempts > options.retries) return { ok: false, error, attempts };
      await sleep(base * 2 ** (attempts - 1), options.signal).catch(() => undefined);
    }
  }
}

/** One line, for a rejects listing: the message of a typed error, else the error's text. */
export function reasonOf(error: unknown): string {
  if (error instanceof LeadctlError) return error.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The exit code of a run that completed with some records failed: 5 when any of them failed
 * because the service stayed unavailable (429, 5xx, the network: try again later), else 4.
 */
export function failedRecordsExitCode(errors: readonly unknown[]): number {
  return errors.some((e) => e instanceof LeadctlError && e.exitCode === ExitCode.SERVICE)
    ? ExitCode.SERVICE
    : ExitCode.REJECTED;
}
