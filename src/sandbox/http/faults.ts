import { randomInt } from 'node:crypto';
import { seededRandom } from '../random.js';

export interface FaultSettings {
  failRate: number;
  rateLimit: number;
  latencyMs: number;
  resetRate: number;
  randomSeed: number;
}

/** What to do to one request. */
export interface FaultDecision {
  latencyMs: number;
  /** Answer with this status instead of handling the request. */
  status?: 500 | 503 | 429;
  /** Handle the request, then destroy the connection instead of answering. */
  reset: boolean;
  /** Rate limit headers to send (only when rate limiting is on). */
  rateLimit?: { limit: number; remaining: number; retryAfter?: number };
  /** Name of the fault, for the stats (`503`, `429`, `reset`, `latency`...). */
  applied: string[];
}

export const FAULT_HEADER = 'x-sandbox-fault';
const HEADER_VALUES = '503, 500, 429, reset or latency=MS';
/** The limit announced by a forced 429 when no --rate-limit is set. */
const FORCED_RATE_LIMIT = 60;

export class FaultHeaderError extends Error {
  constructor(value: string) {
    super(`X-Sandbox-Fault must be ${HEADER_VALUES}; got "${value}"`);
  }
}

/**
 * Decides the faults of each request: first what the X-Sandbox-Fault header forces, then the
 * flags (rate limit, latency, fail rate, reset rate). The generator is drawn exactly twice per
 * flagged request whatever happens, so a given seed replays the same sequence.
 */
export class FaultInjector {
  private readonly random: () => number;
  private windowSecond = 0;
  private windowCount = 0;

  constructor(
    readonly settings: FaultSettings,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.random = seededRandom(settings.randomSeed);
  }

  static defaultSeed(): number {
    return randomInt(0, 2 ** 31);
  }

  decide(header: string | string[] | undefined, applyFlags: boolean): FaultDecision {
    const decision: FaultDecision = { latencyMs: 0, reset: false, applied: [] };
    const forced = Array.isArray(header) ? header[0] : header;
    if (forced !== undefined && forced !== '') this.applyHeader(forced.trim().toLowerCase(), decision);
    if (!applyFlags) return decision;
    const { failRate, rateLimit, latencyMs, resetRate } = this.settings;
    if (rateLimit > 0) this.applyRateLimit(rateLimit, decision);
    const failDraw = this.random();
    const resetDraw = this.random();
    if (latencyMs > 0) {
      decision.latencyMs += latencyMs;
      decision.applied.push('latency');
    }
    if (decision.status === undefined && failDraw < failRate) {
      decision.status = 503;
      decision.applied.push('503');
    }
    if (decision.status === undefined && !decision.reset && resetDraw < resetRate) {
      decision.reset = true;
      decision.applied.push('reset');
    }
    return decision;
  }

  private applyHeader(value: string, decision: FaultDecision): void {
    if (value === '503' || value === '500' || value === '429') {
      decision.status = Number(value) as 503 | 500 | 429;
      if (value === '429')
        decision.rateLimit = { limit: this.settings.rateLimit || FORCED_RATE_LIMIT, remaining: 0, retryAfter: 1 };
    } else if (value === 'reset') {
      decision.reset = true;
    } else {
      const m = /^latency=(\d{1,6})$/.exec(value);
      if (!m) throw new FaultHeaderError(value);
      decision.latencyMs += Number(m[1]);
    }
    decision.applied.push(value.startsWith('latency') ? 'latency' : value);
  }

  /** A fixed one-second window: simple, and what "N requests per second" means to an operator. */
  private applyRateLimit(limit: number, decision: FaultDecision): void {
    const now = this.nowMs();
    const second = Math.floor(now / 1000);
    if (second !== this.windowSecond) {
      this.windowSecond = second;
      this.windowCount = 0;
    }
    this.windowCount++;
    const remaining = Math.max(0, limit - this.windowCount);
    if (this.windowCount > limit && decision.status === undefined) {
      decision.status = 429;
      decision.rateLimit = { limit, remaining: 0, retryAfter: 1 };
      decision.applied.push('429');
    } else if (!decision.rateLimit) {
      decision.rateLimit = { limit, remaining };
    }
  }
}
