import { readFileSync } from 'node:fs';
import type { CachedToken } from '../../api/token.js';
import { isLoopbackHost, isProductionUrl } from '../../config/base-url.js';
import {
  type CredentialSource,
  ENV,
  type ResolvedCredentials,
  requireUsableCredentials,
  resolveCredentials,
  resolveProfileName,
} from '../../config/credentials.js';
import { configFilePath } from '../../config/paths.js';
import { type ConfigData, ignoredProfiles, normalize } from '../../config/profiles.js';
import { ExitCode, LeadctlError } from '../../errors.js';
import { type CheckResult, duration, fail, ok, warn } from './check.js';

/**
 * The config file as it is, read without conf: conf would make the folder when it is missing, and
 * the profile store tightens loose modes as it reads, and doctor changes nothing.
 */
export function readConfigFile(dir: string): { data: ConfigData; error?: string; ignored?: string[] } {
  const path = configFilePath(dir);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { data: { profiles: {} } };
    return { data: { profiles: {} }, error: `${path} cannot be read: ${(err as Error).message}` };
  }
  try {
    const raw: unknown = JSON.parse(text);
    return { data: normalize(raw), ignored: ignoredProfiles(raw) };
  } catch (err) {
    // V8's message quotes the text around the fault, which may be a secret: only where it is.
    const where = /position \d+(?: \(line \d+ column \d+\))?/.exec((err as Error).message)?.[0];
    return { data: { profiles: {} }, error: `${path} cannot be read: not valid JSON${where ? ` (at ${where})` : ''}` };
  }
}

/** What the network checks need: where to go, as whom, and what stopped them if anything. */
export interface DoctorTarget {
  profile: string;
  /** Undefined when the base URL is not usable. */
  baseUrl?: string;
  production: boolean;
  clientId?: string;
  clientSecret?: string;
  /** The profile's cached token, read only (never refreshed or saved by doctor). */
  cachedToken?: CachedToken;
  /** Why there is no usable client id or secret (the token check skips then). */
  noCredentials?: string;
  /** Every saved profile's name (to name the owner of a record). */
  profiles: string[];
}

const FROM: Record<CredentialSource, string> = {
  flag: 'flag',
  environment: 'environment',
  profile: 'profile',
  default: 'default',
};

function cachedToken(resolved: ResolvedCredentials): CachedToken | undefined {
  const t = resolved.usesProfileToken ? resolved.stored?.token : undefined;
  if (!t || t.client_id !== resolved.clientId?.value || t.base_url !== resolved.baseUrl.value) return undefined;
  const expiresAt = Date.parse(t.expires_at);
  const obtainedAt = Date.parse(t.obtained_at);
  if (!t.access_token || Number.isNaN(expiresAt) || Number.isNaN(obtainedAt)) return undefined;
  return { accessToken: t.access_token, expiresAt, obtainedAt };
}

/**
 * The profile, base URL, client id and secret in use, by the usual precedence (flags >
 * LEADCTL_* > the active profile > defaults): the `credentials` and `base-url` checks.
 */
export function checkCredentials(
  configDir: string,
  flags: { profile?: string; baseUrl?: string },
  env: Record<string, string | undefined>,
  now: Date,
): { checks: [CheckResult, CheckResult]; target: DoctorTarget } {
  const file = readConfigFile(configDir);
  const result = credentialsOf(file, flags, env, now);
  const ignored = file.ignored ?? [];
  const [credentials, base] = result.checks;
  if (ignored.length === 0 || credentials.status !== 'ok') return result;
  // A profile leadctl cannot read is one a person meant to use: said, not passed over.
  const names = ignored.map((n) => JSON.stringify(n)).join(', ');
  return {
    ...result,
    checks: [
      warn(
        'credentials',
        `${credentials.value}; ${configFilePath(configDir)} also holds profile${ignored.length === 1 ? '' : 's'} ${names} in a shape leadctl does not read (ignored)`,
        'fix it by hand (a profile is an object with base_url, a URL in quotes), or remove it',
      ),
      base,
    ],
  };
}

function credentialsOf(
  { data, error }: { data: ConfigData; error?: string },
  flags: { profile?: string; baseUrl?: string },
  env: Record<string, string | undefined>,
  now: Date,
): { checks: [CheckResult, CheckResult]; target: DoctorTarget } {
  const profiles = Object.keys(data.profiles);
  const target: DoctorTarget = { profile: flags.profile ?? env[ENV.profile] ?? 'default', production: false, profiles };
  const problem = (err: unknown) =>
    err instanceof LeadctlError
      ? { message: err.message, hint: err.hint ?? null, exitCode: err.exitCode }
      : { message: String(err), hint: null, exitCode: ExitCode.USAGE };

  let profileSource: CredentialSource;
  try {
    const p = resolveProfileName(flags, env, data);
    target.profile = p.value;
    profileSource = p.source;
  } catch (err) {
    const p = problem(err);
    const failed = fail('credentials', p.message, p.hint, p.exitCode);
    target.noCredentials = 'no usable profile';
    return { checks: [failed, fail('base-url', 'not known: no usable profile', null, ExitCode.USAGE)], target };
  }

  // The base URL is checked apart, so that a bad one still leaves the credentials to be shown.
  let baseCheck: CheckResult;
  let resolved: ResolvedCredentials;
  try {
    resolved = resolveCredentials(flags, env, data);
    const url = resolved.baseUrl.value;
    target.baseUrl = url;
    target.production = isProductionUrl(url);
    const plain = new URL(url).protocol === 'http:';
    baseCheck = ok(
      'base-url',
      `${url} (${FROM[resolved.baseUrl.source]})${target.production ? ' [production]' : ''}${plain && isLoopbackHost(new URL(url).hostname) ? ': plain http, allowed to a loopback address only' : ''}`,
    );
  } catch (err) {
    const p = problem(err);
    baseCheck = fail('base-url', p.message, p.hint, p.exitCode);
    resolved = resolveCredentials({ ...flags, baseUrl: 'http://127.0.0.1' }, env, data);
  }

  if (error) {
    target.noCredentials = 'the config file cannot be read';
    // The profile's base URL is in that file: the built-in default would be a guess.
    if (resolved.baseUrl.source === 'default') {
      target.baseUrl = undefined;
      target.production = false;
      baseCheck = fail('base-url', 'not known: the config file cannot be read (see credentials)', null, ExitCode.USAGE);
    }
    return {
      checks: [
        fail(
          'credentials',
          error,
          'fix the file by hand, or delete it and run `leadctl auth login` again',
          ExitCode.USAGE,
        ),
        baseCheck,
      ],
      target,
    };
  }
  try {
    requireUsableCredentials(resolved);
  } catch (err) {
    const p = problem(err);
    target.noCredentials = `no profile "${target.profile}"`;
    return { checks: [fail('credentials', p.message, p.hint, p.exitCode), baseCheck], target };
  }

  const who = `profile "${target.profile}" (${FROM[profileSource]}${resolved.stored ? '' : ', not saved'})`;
  if (!resolved.clientId) {
    target.noCredentials = 'no client id';
    return {
      checks: [
        fail(
          'credentials',
          `${who}: no client id`,
          `run \`leadctl auth login${target.profile === 'default' ? '' : ` --profile ${target.profile}`}\`, or set ${ENV.clientId} and ${ENV.clientSecret}`,
          ExitCode.AUTH,
        ),
        baseCheck,
      ],
      target,
    };
  }
  target.clientId = resolved.clientId.value;
  target.clientSecret = resolved.clientSecret?.value;
  target.cachedToken = cachedToken(resolved);
  const idPart = `client id ${resolved.clientId.value} (${FROM[resolved.clientId.source]})`;
  if (resolved.clientSecret)
    return {
      checks: [ok('credentials', `${who}, ${idPart}, secret set (${FROM[resolved.clientSecret.source]})`), baseCheck],
      target,
    };

  const token = target.cachedToken;
  if (token && token.expiresAt > now.getTime()) {
    return {
      checks: [
        warn(
          'credentials',
          `${who}, ${idPart}, no secret: commands work on the cached token for ${duration(token.expiresAt - now.getTime())} more`,
          `\`leadctl auth login${target.profile === 'default' ? '' : ` --profile ${target.profile}`}\` with the secret saved, or set ${ENV.clientSecret}, before the token expires`,
        ),
        baseCheck,
      ],
      target,
    };
  }
  target.noCredentials = 'no client secret';
  return {
    checks: [
      fail(
        'credentials',
        `${who}, ${idPart}, no secret and no valid cached token`,
        `run \`leadctl auth login${target.profile === 'default' ? '' : ` --profile ${target.profile}`}\`, or set ${ENV.clientSecret}`,
        ExitCode.AUTH,
      ),
      baseCheck,
    ],
    target,
  };
}
