/** One line of --verbose text per client event. Pure; the caller redacts and writes it. */
import type { ApiEvent } from './client.js';
import { formatMs } from './retry.js';

function until(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function formatApiEvent(event: ApiEvent): string {
  switch (event.type) {
    case 'response':
      return `[http] ${event.method} ${event.path} → ${event.status} in ${formatMs(event.durationMs)}${event.attempt > 1 ? ` (attempt ${event.attempt})` : ''}`;
    case 'network-error':
      return `[http] ${event.method} ${event.path} → ${event.code} after ${formatMs(event.durationMs)}${event.attempt > 1 ? ` (attempt ${event.attempt})` : ''}`;
    case 'retry':
      return `[http] retrying ${event.method} ${event.path} in ${formatMs(event.delayMs)} (attempt ${event.attempt} failed: ${event.reason})`;
    case 'give-up':
      return `[http] not retrying ${event.method} ${event.path} after ${event.attempts} attempt${event.attempts === 1 ? '' : 's'}: ${event.reason}`;
    case 'lists-path':
      return `[lists] no lists route at ${event.path} (${event.reason})`;
    case 'token':
      switch (event.action) {
        case 'cached':
          return `[auth] using the cached access token (valid until ${until(event.expiresAt)})`;
        case 'requested':
          return `[auth] requesting an access token (${event.reason === 'none' ? 'none cached' : event.reason === 'expiring' ? 'the cached one has expired or is about to' : 'the service refused the previous one'})`;
        case 'obtained':
          return `[auth] obtained an access token (valid until ${until(event.expiresAt)})`;
        case 'not-saved':
          return `the access token could not be saved for the next run: ${event.reason}`;
      }
  }
}
