import { DateTime } from 'luxon';
import { UsageError } from '../../errors.js';

/**
 * The contract gives time_stamp as `yyyy-mm-dd hh:mm:ss`, "UTC-06:00 (Central)". We follow the
 * explicit offset, not the America/Chicago wall clock: the string carries no offset, so the
 * receiver can only read it one way, and a fixed offset has no skipped or repeated hour at the
 * daylight-saving changes. During CDT this stamp is one hour behind a Chicago wall clock.
 * `--stamp-zone America/Chicago` switches to the wall clock if the service turns out to mean it.
 */
export const DEFAULT_STAMP_ZONE = 'UTC-6';
export const TIME_STAMP_FORMAT = 'yyyy-MM-dd HH:mm:ss';
export const SOURCE_URL_MAX = 255;

export type ApiKeySource = 'flag' | 'environment' | 'file';

export interface PrepareOptions {
  /** --api-key */
  apiKeyFlag?: string;
  /** LEADCTL_API_KEY */
  apiKeyEnv?: string;
  /** --stamp: fill a missing time_stamp. */
  stamp: boolean;
  stampZone?: string;
  now: Date;
}

export interface PreparedLead {
  data: Record<string, unknown>;
  apiKeySource?: ApiKeySource;
  /** Changes made to the lead, for the user to see (stderr). */
  notes: string[];
}

/** Validates a time-zone flag early so a typo is a usage error, not a silent UTC. */
export function checkStampZone(zone: string): string {
  if (!DateTime.now().setZone(zone).isValid) {
    throw new UsageError(`--stamp-zone: unknown time zone "${zone}"`, {
      hint: 'use an IANA name such as America/Chicago, or a fixed offset such as UTC-6',
    });
  }
  return zone;
}

/** The current time as the contract's time_stamp (`yyyy-mm-dd hh:mm:ss` at UTC-06:00 by default). */
export function centralTimeStamp(now: Date, zone: string = DEFAULT_STAMP_ZONE): string {
  return DateTime.fromJSDate(now).setZone(zone).toFormat(TIME_STAMP_FORMAT);
}

/**
 * The contract: "drop query parameters if it would exceed 255 chars". The fragment goes too,
 * since it follows the query. The result may still be too long; validation reports that.
 */
export function shortenSourceUrl(url: string): { url: string; changed: boolean } {
  if (url.length <= SOURCE_URL_MAX) return { url, changed: false };
  const cut = url.search(/[?#]/);
  if (cut < 0) return { url, changed: false };
  return { url: url.slice(0, cut), changed: true };
}

/** Flag > LEADCTL_API_KEY > the lead's own api_key, in the order the issue names them. */
export function resolveApiKey(
  flag: string | undefined,
  env: string | undefined,
  inFile: unknown,
): { key?: string; source?: ApiKeySource } {
  if (flag) return { key: flag, source: 'flag' };
  if (env) return { key: env, source: 'environment' };
  if (typeof inFile === 'string' && inFile !== '') return { key: inFile, source: 'file' };
  return {};
}

/** Applies the conveniences (api key, time stamp, long source_url) to one lead, without mutating it. */
export function prepareLegacyLead(raw: Record<string, unknown>, options: PrepareOptions): PreparedLead {
  const data: Record<string, unknown> = { ...raw };
  const notes: string[] = [];

  const { key, source } = resolveApiKey(options.apiKeyFlag, options.apiKeyEnv, raw.api_key);
  if (key !== undefined) {
    if (source !== 'file' && typeof raw.api_key === 'string' && raw.api_key !== '' && raw.api_key !== key) {
      notes.push(
        `api_key from the file replaced by the one from ${source === 'flag' ? '--api-key, --api-key-file or --api-key-stdin' : 'LEADCTL_API_KEY'}`,
      );
    }
    data.api_key = key;
  }

  if (options.stamp && (data.time_stamp === undefined || data.time_stamp === null || data.time_stamp === '')) {
    data.time_stamp = centralTimeStamp(options.now, options.stampZone);
    notes.push(`time_stamp set to ${data.time_stamp} (${options.stampZone ?? DEFAULT_STAMP_ZONE})`);
  }

  if (typeof data.source_url === 'string') {
    const { url, changed } = shortenSourceUrl(data.source_url);
    if (changed) {
      notes.push(
        `source_url was ${data.source_url.length} characters (over ${SOURCE_URL_MAX}): query parameters dropped, as the contract asks`,
      );
      data.source_url = url;
    }
  }
  return { data, apiKeySource: source, notes };
}
