/**
 * One-step login to a local sandbox: its address and credentials saved as a profile, or printed
 * as `export LEADCTL_…` lines for a shell to source, so that nothing is copied by hand.
 */
import { UsageError } from '../errors.js';
import { isLoopbackHost } from './base-url.js';
import { ENV } from './credentials.js';
import { validateProfileName, type ProfileStore } from './profiles.js';

export interface SandboxLogin {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
}

export interface SandboxCampaign {
  name: string;
  api_key: string;
  price: number;
  price_reject: boolean;
}

export const API_KEY_ENV = 'LEADCTL_API_KEY';

/**
 * Checked before the sandbox starts: a profile that points at a real service is never
 * overwritten with sandbox credentials (its secret would be lost).
 */
export function checkSandboxProfile(store: ProfileStore, name: string): void {
  validateProfileName(name, '--save-profile');
  const existing = store.profile(name);
  if (!existing) return;
  let host: string;
  try {
    host = new URL(existing.base_url).hostname;
  } catch {
    return;
  }
  if (!isLoopbackHost(host)) {
    throw new UsageError(
      `the profile "${name}" points at ${new URL(existing.base_url).origin}, not a local sandbox: --save-profile will not overwrite it`,
      {
        hint: 'choose another name, e.g. --save-profile sandbox',
      },
    );
  }
}

/** Saves (or replaces, dropping its cached token) the profile; it becomes the active one only if none is. */
export function saveSandboxProfile(store: ProfileStore, name: string, login: SandboxLogin): { current: boolean } {
  store.saveProfile(name, { base_url: login.baseUrl, client_id: login.clientId, client_secret: login.clientSecret });
  return { current: store.read().current_profile === name };
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * Lines for `. ./sandbox.env`: the saved profile's name when there is one (the profile carries the
 * rest), else the address and credentials; LEADCTL_API_KEY is the price-reject campaign's key, so a
 * legacy post shows offers; the other campaigns follow as comments.
 */
export function sandboxEnvLines(login: SandboxLogin, campaigns: SandboxCampaign[], profile?: string): string[] {
  const lines = profile
    ? [`export ${ENV.profile}=${shellQuote(profile)}`]
    : [
        `export ${ENV.baseUrl}=${shellQuote(login.baseUrl)}`,
        `export ${ENV.clientId}=${shellQuote(login.clientId)}`,
        `export ${ENV.clientSecret}=${shellQuote(login.clientSecret)}`,
      ];
  const keyed = campaigns.find((c) => c.price_reject) ?? campaigns[0];
  if (keyed) lines.push(`export ${API_KEY_ENV}=${shellQuote(keyed.api_key)}  # campaign ${keyed.name}`);
  for (const c of campaigns)
    if (c !== keyed)
      lines.push(
        `# campaign ${c.name} (price ${c.price.toFixed(2)}${c.price_reject ? ', price reject' : ''}): api_key ${c.api_key}`,
      );
  return lines;
}
