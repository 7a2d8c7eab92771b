/**
 * Which service and which credentials a command uses, and where each came from:
 * flags > environment (LEADCTL_*) > the profile in the config file > built-in default.
 */
import type { CachedToken, TokenCache } from '../api/token.js';
import { UsageError } from '../errors.js';
import { PRODUCTION_BASE_URL, normalizeBaseUrl } from './base-url.js';
import { DEFAULT_PROFILE, validateProfileName, type ConfigData, type Profile, type ProfileStore } from './profiles.js';

export type CredentialSource = 'flag' | 'environment' | 'profile' | 'default';

export interface Sourced<T> {
  value: T;
  source: CredentialSource;
}

export interface CredentialFlags {
  profile?: string;
  baseUrl?: string;
  clientId?: string;
  clientSecret?: string;
}

export interface ResolvedCredentials {
  profile: Sourced<string>;
  /** The profile as stored, when it exists. */
  stored?: Profile;
  baseUrl: Sourced<string>;
  clientId?: Sourced<string>;
  clientSecret?: Sourced<string>;
  /**
   * True when the profile's cached token may be used and refreshed: the effective client id and
   * base URL are the profile's own. Environment credentials for another client never touch it.
   */
  usesProfileToken: boolean;
}

export const ENV = {
  profile: 'LEADCTL_PROFILE',
  baseUrl: 'LEADCTL_BASE_URL',
  clientId: 'LEADCTL_CLIENT_ID',
  clientSecret: 'LEADCTL_CLIENT_SECRET',
} as const;

const SOURCE_WORDS: Record<CredentialSource, string> = {
  flag: 'flag',
  environment: 'environment',
  profile: 'profile',
  default: 'default',
};

function envValue(env: Record<string, string | undefined>, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function pick<T>(...candidates: Array<[T | undefined, CredentialSource]>): Sourced<T> | undefined {
  for (const [value, source] of candidates) if (value !== undefined) return { value, source };
  return undefined;
}

/** Says where a value came from, in words for messages: "--base-url", "LEADCTL_BASE_URL", "profile default". */
export function describeOrigin(source: CredentialSource, flag: string, envName: string, profile: string): string {
  switch (source) {
    case 'flag':
      return flag;
    case 'environment':
      return envName;
    case 'profile':
      return `profile "${profile}"`;
    default:
      return SOURCE_WORDS.default;
  }
}

export function resolveProfileName(
  flags: CredentialFlags,
  env: Record<string, string | undefined>,
  data: ConfigData,
): Sourced<string> {
  const fromFlag = flags.profile;
  const fromEnv = envValue(env, ENV.profile);
  const chosen = pick<string>([fromFlag, 'flag'], [fromEnv, 'environment'], [data.current_profile, 'profile']) ?? {
    value: DEFAULT_PROFILE,
    source: 'default' as const,
  };
  validateProfileName(
    chosen.value,
    chosen.source === 'flag' ? '--profile' : chosen.source === 'environment' ? ENV.profile : 'the config file',
  );
  return chosen;
}

export function resolveCredentials(
  flags: CredentialFlags,
  env: Record<string, string | undefined>,
  data: ConfigData,
): ResolvedCredentials {
  const profile = resolveProfileName(flags, env, data);
  const stored = data.profiles[profile.value];

  const rawBase = pick<string>(
    [flags.baseUrl, 'flag'],
    [envValue(env, ENV.baseUrl), 'environment'],
    [stored?.base_url, 'profile'],
  ) ?? {
    value: PRODUCTION_BASE_URL,
    source: 'default' as const,
  };
  const baseUrl: Sourced<string> = {
    value: normalizeBaseUrl(rawBase.value, describeOrigin(rawBase.source, '--base-url', ENV.baseUrl, profile.value)),
    source: rawBase.source,
  };

  const clientId = pick<string>(
    [flags.clientId, 'flag'],
    [envValue(env, ENV.clientId), 'environment'],
    [stored?.client_id, 'profile'],
  );
  // The profile's secret belongs to the profile's client: never pair it with another client id.
  const profileSecret =
    stored?.client_secret !== undefined && clientId?.value === stored.client_id ? stored.client_secret : undefined;
  const clientSecret = pick<string>(
    [flags.clientSecret, 'flag'],
    [envValue(env, ENV.clientSecret), 'environment'],
    [profileSecret, 'profile'],
  );

  const usesProfileToken =
    stored !== undefined &&
    clientId?.value === stored.client_id &&
    baseUrl.value === normalizeStoredBase(stored.base_url);
  return { profile, stored, baseUrl, clientId, clientSecret, usesProfileToken };
}

function normalizeStoredBase(url: string): string {
  try {
    return normalizeBaseUrl(url, 'the profile');
  } catch {
    return url;
  }
}

/** True when LEADCTL_CLIENT_ID or LEADCTL_CLIENT_SECRET is set (they win over any saved profile). */
export function environmentCredentialsSet(env: Record<string, string | undefined>): boolean {
  return envValue(env, ENV.clientId) !== undefined || envValue(env, ENV.clientSecret) !== undefined;
}

/** The profile as a token cache for the API client (only when `usesProfileToken`). */
export function profileTokenCache(store: ProfileStore, resolved: ResolvedCredentials): TokenCache | undefined {
  if (!resolved.usesProfileToken || !resolved.clientId) return undefined;
  const name = resolved.profile.value;
  const clientId = resolved.clientId.value;
  const baseUrl = resolved.baseUrl.value;
  return {
    load(): CachedToken | undefined {
      const token = store.profile(name)?.token;
      if (!token || token.client_id !== clientId || token.base_url !== baseUrl) return undefined;
      const expiresAt = Date.parse(token.expires_at);
      const obtainedAt = Date.parse(token.obtained_at);
      if (!token.access_token || Number.isNaN(expiresAt) || Number.isNaN(obtainedAt)) return undefined;
      return { accessToken: token.access_token, expiresAt, obtainedAt };
    },
    save(token: CachedToken): void {
      store.saveToken(name, {
        access_token: token.accessToken,
        expires_at: new Date(token.expiresAt).toISOString(),
        obtained_at: new Date(token.obtainedAt).toISOString(),
        client_id: clientId,
        base_url: baseUrl,
      });
    },
    clear(): void {
      store.clearToken(name);
    },
  };
}

/** A profile must exist when it was named explicitly and no environment credentials stand in for it. */
export function requireUsableCredentials(resolved: ResolvedCredentials): void {
  if (resolved.clientId) return;
  const named = resolved.profile.source === 'flag' || resolved.profile.source === 'environment';
  if (named && !resolved.stored) {
    throw new UsageError(`there is no profile named "${resolved.profile.value}"`, {
      hint: `run \`leadctl auth login --profile ${resolved.profile.value}\`, or \`leadctl auth status --all\` to see the profiles`,
    });
  }
}
