import { AuthError, environmentError, ExitCode, LeadctlError } from '../../errors.js';
import type { Signal } from '../../io/io.js';
import { ReadingStopped } from './reading.js';
import type { StopReason } from './summary.js';

/**
 * How long in-flight requests may take to finish after SIGINT/SIGTERM before they are cut off:
 * short, so that a signal ends a run within 2 s even while an answer hangs. A request cut off is
 * not acknowledged, and --resume sends it again (upserts are safe to repeat).
 */
export const DEFAULT_STOP_GRACE_MS = 1_000;

/**
 * Why and how a batch run stops before its end. The first signal stops the reading and the
 * starting of requests, and gives those in flight a short grace; a second one cuts them off.
 * Refused credentials or a service that stays down stop the run too; an unexpected error outranks
 * all of them as the reason given.
 */
export class RunStop {
  reason: StopReason | undefined;
  /** Cuts off the requests in flight (and their retries' waits). */
  private readonly requests = new AbortController();
  /** Aborted by the first signal: a read waiting on a pipe or a FIFO stops at once. */
  private readonly reading = new AbortController();

  constructor(private readonly graceMs: number = DEFAULT_STOP_GRACE_MS) {}

  get requestSignal(): AbortSignal {
    return this.requests.signal;
  }

  get readingSignal(): AbortSignal {
    return this.reading.signal;
  }

  get stopped(): boolean {
    return this.reason !== undefined;
  }

  /** An unexpected error: the run ends, with this error as the reason. */
  fail(err: unknown): void {
    if (this.reason?.kind === 'failed') return;
    const error =
      err instanceof LeadctlError
        ? err
        : (environmentError(err) ??
          new LeadctlError('unexpected', ExitCode.UNEXPECTED, err instanceof Error ? err.message : String(err), {
            cause: err,
          }));
    this.reason = { kind: 'failed', error };
  }

  /**
   * A request that failed after its retries: refused credentials or an outage stop the run (the
   * first one given is the reason); anything else is thrown back. Nothing, once cut off.
   */
  requestFailed(err: unknown): void {
    if (this.requests.signal.aborted) return;
    if (err instanceof AuthError) this.reason ??= { kind: 'auth', error: err };
    else if (err instanceof LeadctlError && err.exitCode === ExitCode.SERVICE)
      this.reason ??= { kind: 'service', error: err };
    else throw err;
  }

  /** SIGINT or SIGTERM; `stopping` is told of the first one, before the grace begins. */
  signal(signal: Signal, stopping: () => void): void {
    if (this.reason?.kind === 'signal') {
      this.cutOff(new Error(`stopped by a second ${signal}`));
      return;
    }
    this.reason ??= { kind: 'signal', signal };
    this.reading.abort(new ReadingStopped());
    stopping();
    setTimeout(() => this.cutOff(new Error('the wait for requests in flight ran out')), this.graceMs).unref();
  }

  /** Cuts off whatever is in flight (the reason is kept in the signal). */
  cutOff(reason: unknown): void {
    this.requests.abort(reason);
  }
}
