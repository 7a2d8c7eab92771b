import { isLoopbackHost } from '../api/loopback.js';
import { UsageError } from '../errors.js';

export { isLoopbackHost };

export const PRODUCTION_BASE_URL = 'https://api.decisioncloud.me';

/**
 * A base URL that is neither this machine (a local sandbox) nor a host named as a sandbox
 * (`sandbox.example.com`, `api.sandbox.example.com`): real leads and real money. Shown with a
 * `[production]` marker in human output.
 */
export function isProductionUrl(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return false;
  }
  if (isLoopbackHost(host)) return false;
  return !host
    .toLowerCase()
    .split('.')
    .some((label) => label === 'sandbox' || label.startsWith('sandbox-') || label.endsWith('-sandbox'));
}

/**
 * Checks and normalises a base URL (no trailing slash). Plain http is refused except on
 * loopback, so that credentials and personal data never cross a network unencrypted.
 * `origin` names where the value came from, for the message.
 */
export function normalizeBaseUrl(raw: string, origin: string): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new UsageError(`the base URL "${raw}" (from ${origin}) is not a valid URL`, {
      hint: `give a full address such as ${PRODUCTION_BASE_URL}`,
    });
  }
  // Checked first, and the URL never echoed whole: its user info or query may hold a secret.
  if (url.username || url.password) {
    throw new UsageError(`the base URL (from ${origin}) must not contain a user name or password`, {
      hint: 'give the client id and secret with `leadctl auth login` or LEADCTL_CLIENT_ID / LEADCTL_CLIENT_SECRET',
    });
  }
  const shown = url.protocol + '//' + url.host + url.pathname.replace(/\/$/, '');
  if (url.search || url.hash) {
    throw new UsageError(`the base URL "${shown}" (from ${origin}) must not have a query or fragment`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(`the base URL "${shown}" (from ${origin}) must start with https://`);
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new UsageError(
      `the base URL "${shown}" (from ${origin}) must use https: plain http is allowed only for loopback addresses (127.0.0.1, localhost, ::1)`,
      {
        hint: `use https://${url.host}${url.pathname === '/' ? '' : url.pathname}, or the URL a local sandbox prints`,
      },
    );
  }
  return (url.origin + url.pathname).replace(/\/+$/, '');
}
