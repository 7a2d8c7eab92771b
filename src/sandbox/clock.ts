/** The sandbox's notion of "now": the real time, or an injected one, shifted by an adjustable offset. */
export interface Clock {
  now(): Date;
  /** Moves the sandbox's time forward (tests use it to expire tokens and offers without waiting). */
  advance(seconds: number): void;
}

export function createClock(base: () => Date = () => new Date()): Clock {
  let offsetMs = 0;
  return {
    now: () => new Date(base().getTime() + offsetMs),
    advance(seconds) {
      offsetMs += seconds * 1000;
    },
  };
}

/** `YYYY-MM-DDTHH:mm:ssZ`, the contract's datetime form (whole seconds, UTC). */
export function isoSeconds(date: Date): string {
  return date.toISOString().slice(0, 19) + 'Z';
}
