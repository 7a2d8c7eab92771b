import { DateTime } from 'luxon';
import { UsageError } from '../errors.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
// A time without an offset would be read in whatever zone the machine is in: refuse it.
const DATETIME_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)$/i;

/**
 * `--date`: a real calendar day `YYYY-MM-DD`, or `today` / `yesterday`. Lead days are UTC days
 * (the service files leads by their UTC creation time), so the words mean the UTC day too.
 */
export function parseDateFlag(value: string, now: Date, flag = '--date'): string {
  const word = value.trim().toLowerCase();
  if (word === 'today' || word === 'yesterday') {
    const day = DateTime.fromJSDate(now, { zone: 'utc' }).minus({ days: word === 'today' ? 0 : 1 });
    return day.toFormat('yyyy-MM-dd');
  }
  if (!DATE.test(value)) {
    throw new UsageError(`${flag} must be a date YYYY-MM-DD (or today, yesterday), got "${value}"`);
  }
  const parsed = DateTime.fromFormat(value, 'yyyy-MM-dd', { zone: 'utc' });
  if (!parsed.isValid) throw new UsageError(`${flag} "${value}" is not a real calendar date`);
  return value;
}

/**
 * `--datetime`: ISO 8601 with `Z` or an offset; sent to the service as UTC `YYYY-MM-DDTHH:mm:ssZ`
 * (fractions of a second are dropped: the service's format has none).
 */
export function parseDateTimeFlag(value: string, flag = '--datetime'): string {
  if (!DATETIME_WITH_ZONE.test(value)) {
    throw new UsageError(
      `${flag} must be an ISO date-time with a zone, like 2024-01-05T14:00:00Z or 2024-01-05T08:00:00-06:00, got "${value}"`,
    );
  }
  const parsed = DateTime.fromISO(value, { setZone: true });
  if (!parsed.isValid)
    throw new UsageError(
      `${flag} "${value}" is not a real date and time (${parsed.invalidExplanation ?? parsed.invalidReason})`,
    );
  if (Math.abs(parsed.offset) > MAX_OFFSET_MINUTES)
    throw new UsageError(`${flag} "${value}": a zone offset is at most ±14:00`);
  return parsed.toUTC().startOf('second').toFormat("yyyy-MM-dd'T'HH:mm:ss'Z'");
}

export function parsePositiveInt(value: string, flag: string, max?: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`${flag} must be a whole number of at least 1, got "${value}"`);
  }
  if (max !== undefined && n > max) throw new UsageError(`${flag} must be at most ${max}, got ${n}`);
  return n;
}

/** `--retries`: further attempts per record, 0 to 10. */
export function parseRetries(value: string, flag = '--retries'): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) > 10)
    throw new UsageError(`${flag} must be a whole number from 0 to 10, got "${value}"`);
  return Number(value);
}

/** Real zones span UTC-12:00 to UTC+14:00; ISO 8601 allows ±14:00 at most. */
export const MAX_OFFSET_MINUTES = 14 * 60;
