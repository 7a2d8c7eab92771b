import { InvalidArgumentError } from '@commander-js/extra-typings';

/**
 * Parsers of option and argument values, shared by the command files: each throws commander's
 * InvalidArgumentError, which main prints as a usage error (exit 2) naming the option.
 */

export const wholeNumber =
  (name: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  (value: string): number => {
    const text = value.trim();
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
      throw new InvalidArgumentError(`${name} takes a whole number from ${min} to ${max}.`);
    }
    return Number(text);
  };

/** A fraction from 0 to 1, e.g. 0.05. */
export const fraction = (name: string) => (value: string) => {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new InvalidArgumentError(`${name} takes a fraction from 0 to 1, e.g. 0.05.`);
  return n;
};

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1000,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1000 ** 2,
  mib: 1024 ** 2,
};

/** `8388608`, `8MiB`, `8MB`, `512k`. */
export const byteSize = (value: string): number => {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(value.trim());
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined)
    throw new InvalidArgumentError('--max-bytes takes a size such as 8388608, 8MiB, 8MB or 512k.');
  const bytes = Math.floor(Number(m[1]) * unit);
  if (bytes < 1024) throw new InvalidArgumentError('--max-bytes must be at least 1 KiB.');
  return bytes;
};

/** `--max-removed`: a count (`500`) or a percentage (`10%`, `100%`). */
export const removalLimit = (value: string): { count: number } | { percent: number } => {
  const text = value.trim();
  const percent = /^(\d+(?:\.\d+)?)\s*%$/.exec(text);
  if (percent && Number(percent[1]) <= 100) return { percent: Number(percent[1]) };
  if (/^\d+$/.test(text) && Number.isSafeInteger(Number(text))) return { count: Number(text) };
  throw new InvalidArgumentError('--max-removed takes a number of values (500) or a percentage from 0% to 100% (10%).');
};

/** Repeatable options: every value given, in order. */
export const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];
