/** Counts and durations in the words of progress and summary lines. */

/** `1 customer`, `2 customers`, `1,024 rows`; `plural` for words that do not just take an s. */
export function count(n: number, word: string, plural = `${word}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? word : plural}`;
}

/**
 * How long something took, for "... in X": `0.3 s`, `12 s`; never `0 s`, which reads as if
 * nothing had been timed.
 */
export function seconds(value: number): string {
  if (value < 0.05) return 'under 0.1 s';
  return value < 10 ? `${value.toFixed(1)} s` : `${Math.round(value).toLocaleString('en-US')} s`;
}
