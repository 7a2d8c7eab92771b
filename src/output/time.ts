/**
 * Times for people: the service's ISO 8601 instants shown in the local time zone with the offset
 * (`2026-11-25 10:37:40 -06:00`), or in UTC with the global `--utc` (`2026-11-25 16:37:40 UTC`).
 * Machine formats keep the service's value. Intl only: this runs for every table, and loads nothing.
 */

export interface TimeSettings {
  /** --utc: UTC instead of the local zone. */
  utc?: boolean;
  /** The local zone (IANA name, e.g. from TZ); the system's when absent. */
  zone?: string;
}

/** An instant with a zone: `2024-01-05T14:00:00Z`, `…T14:00:00.123+01:00`. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/;

export function isIsoInstant(value: unknown): value is string {
  return typeof value === 'string' && ISO_INSTANT.test(value);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string | undefined): Intl.DateTimeFormat {
  const key = zone ?? '';
  let f = formatters.get(key);
  if (!f) {
    const options: Intl.DateTimeFormatOptions = {
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    };
    try {
      f = new Intl.DateTimeFormat('en-US', { ...options, timeZone: zone });
    } catch {
      // An unknown TZ name: the system's zone, as the C library would do.
      f = new Intl.DateTimeFormat('en-US', options);
    }
    formatters.set(key, f);
  }
  return f;
}

/** The zone leadctl shows local times in: TZ when it names one (`:America/Chicago` too), else the system's. */
export function localZone(env: Record<string, string | undefined>): string | undefined {
  const tz = env.TZ?.replace(/^:/, '').trim();
  return tz ? tz : undefined;
}

/** An instant for people; anything that is not a valid instant is returned as it was. */
export function formatTime(value: string | Date, settings: TimeSettings = {}): string {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  const parts = Object.fromEntries(
    formatter(settings.utc ? 'UTC' : settings.zone)
      .formatToParts(date)
      .map((p) => [p.type, p.value]),
  );
  const stamp = `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
  if (settings.utc) return `${stamp} UTC`;
  // "GMT-06:00", "GMT+05:30", or "GMT" for UTC itself
  const offset = (parts.timeZoneName ?? 'GMT').replace(/^GMT/, '') || '+00:00';
  return `${stamp} ${offset}`;
}
