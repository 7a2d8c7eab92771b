/** The sandbox's notion of "now": the real time, or an injected one, shifted by an adjustable offset. */
export interface Clock {
  now(): Date;
  /** Moves the sandbox's time forward (tests use it to expire tokens and offers without waiting). */
  advance(seconds: number): void;
}

/** How far the clock may be moved in all: a century covers every rehearsal and keeps dates valid. */
export const MAX_CLOCK_ADVANCE_SECONDS = 100 * 365 * 86_400;

export function createClock(base: () => Date = () => new Date()): Clock {
  let offsetMs = 0;
  return {
    now: () => new Date(base().getTime() + offsetMs),
    advance(seconds) {
      if (!(Number.isFinite(seconds) && seconds >= 0 && offsetMs / 1000 + seconds <= MAX_CLOCK_ADVANCE_SECONDS)) {
        throw new RangeError(`the clock moves forward by at most ${MAX_CLOCK_ADVANCE_SECONDS} seconds in all`);
      }
      offsetMs += seconds * 1000;
    },
  };
}

/** `YYYY-MM-DDTHH:mm:ssZ`, the contract's datetime form (whole seconds, UTC). */
export function isoSeconds(date: Date): string {
  return date.toISOString().slice(0, 19) + 'Z';
}
