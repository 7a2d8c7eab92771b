import type { CachedToken } from '../api/token.js';
import type { CredentialSource, ResolvedCredentials } from '../config/credentials.js';
import { defineCommand, defineGroup } from './command.js';
import type { CommandContext } from './context.js';
import {
  AuthError,
  ExitCode,
  type HttpContext,
  NetworkError,
  RateLimitedError,
  ServiceError,
  UsageError,
} from '../errors.js';

interface LoginOptions {
  clientId?: string;
  clientSecretStdin?: boolean;
  clientSecretFile?: string;
  saveSecret: boolean;
}

const SOURCE_LABEL: Record<CredentialSource, string> = {
  flag: 'flag',
  environment: 'environment',
  profile: 'profile',
  default: 'default',
};

function isoSeconds(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The secret, from exactly one place: --client-secret-stdin, --client-secret-file, the environment, or a hidden prompt. */
async function readSecret(
  ctx: CommandContext,
  opts: LoginOptions,
  envSecret: string | undefined,
): Promise<string | undefined> {
  if (opts.clientSecretStdin && opts.clientSecretFile) {
    throw new UsageError('give the client secret with either --client-secret-stdin or --client-secret-file, not both', {
      hint: 'keep one: e.g. `leadctl auth login --client-id ID --client-secret-file ~/.leadctl-secret`',
    });
  }
  if (opts.clientSecretStdin) {
    const { secretFromStdin } = await import('../config/secret-input.js');
    return secretFromStdin(
      ctx.io,
      '--client-secret-stdin',
      'pipe the secret in, e.g. `pass show leadctl | leadctl auth login --client-id ID --client-secret-stdin`',
    );
  }
  if (opts.clientSecretFile) {
    const { secretFromFile } = await import('../config/secret-input.js');
    return secretFromFile(ctx.io, opts.clientSecretFile, 'client secret', (line) => ctx.log.warn(line));
  }
  if (envSecret !== undefined) return envSecret;
  if (ctx.io.stdin.isTTY) {
    const { ask } = await import('../output/prompt.js');
    const secret = (await ask(ctx.io, 'Client secret (input hidden): ', { hidden: true })).trim();
    return secret || undefined;
  }
  return undefined;
}

const login = defineCommand(
  (auth) =>
    auth
      .command('login')
      .description('verify client credentials by obtaining a token, and save them in a profile')
      .option('--client-id <id>', 'API client id (env LEADCTL_CLIENT_ID)')
      .option('--client-secret-stdin', 'read the client secret from stdin (first line)')
      .option('--client-secret-file <path>', 'read the client secret from a file (first line)')
      .option('--no-save-secret', 'do not save the secret; only the token is kept until it expires')
      .addHelpText(
        'after',
        '\nWithout --client-secret-stdin or --client-secret-file, the secret comes from LEADCTL_CLIENT_SECRET,\nor is asked for with hidden input on a terminal. Use --profile NAME and --base-url URL to choose where.',
      ),
  async (ctx, _args, opts) => {
    const { ENV, environmentCredentialsSet } = await import('../config/credentials.js');
    const store = await ctx.config.store();
    const current = await ctx.config.credentials();

    let clientId = opts.clientId?.trim() || current.clientId?.value;
    if (!clientId && ctx.io.stdin.isTTY && !opts.clientSecretStdin) {
      const { ask } = await import('../output/prompt.js');
      clientId = (await ask(ctx.io, 'Client id: ')).trim() || undefined;
    }
    if (!clientId) {
      throw new UsageError('no client id given', { hint: `give --client-id ID (or set ${ENV.clientId})` });
    }
    const envSecret = ctx.io.env[ENV.clientSecret]?.trim() || undefined;
    const secret = await readSecret(ctx, opts, envSecret);
    if (!secret) {
      throw new UsageError('no client secret given', {
        hint: `pipe it with --client-secret-stdin, name a file with --client-secret-file, set ${ENV.clientSecret}, or run on a terminal to be asked`,
      });
    }

    const client = await ctx.api({ clientId, clientSecret: secret });
    const resolved = await ctx.config.credentials({ clientId, clientSecret: secret });
    const token = await client.authenticate();

    const profileName = resolved.profile.value;
    const now = ctx.io.now();
    store.saveProfile(
      profileName,
      {
        base_url: resolved.baseUrl.value,
        client_id: clientId,
        ...(opts.saveSecret ? { client_secret: secret } : {}),
        token: {
          access_token: token.accessToken,
          expires_at: new Date(token.expiresAt).toISOString(),
          obtained_at: new Date(token.obtainedAt).toISOString(),
          client_id: clientId,
          base_url: resolved.baseUrl.value,
        },
        logged_in_at: now.toISOString(),
      },
      { makeCurrent: true },
    );

    if (environmentCredentialsSet(ctx.io.env)) {
      ctx.log.warn(
        `Note: ${ENV.clientId} / ${ENV.clientSecret} are set in this environment; they still win over the saved profile until you unset them.`,
      );
    }
    if (!opts.saveSecret) {
      ctx.log.info(
        `The secret was not saved: commands work until the token expires (${isoSeconds(token.expiresAt)}), then run \`leadctl auth login\` again.`,
      );
    }
    const summary = {
      profile: profileName,
      base_url: resolved.baseUrl.value,
      client_id: clientId,
      secret_saved: opts.saveSecret,
      token_expires_at: isoSeconds(token.expiresAt),
      config_file: store.path,
    };
    await ctx.output.document({ logged_in: true, ...summary }, () =>
      [
        `Logged in to ${summary.base_url} as client ${clientId} (profile "${profileName}").`,
        `Token valid until ${ctx.output.time(summary.token_expires_at)}; ${opts.saveSecret ? 'secret saved' : 'secret not saved'} in ${store.path}.`,
      ].join('\n'),
    );
  },
);

interface LiveCheck {
  ok: boolean;
  /** Nothing answered (no connection, or no answer within a second): nothing is known of the credentials. */
  unreachable?: boolean;
  /** The service answered, but only with errors (429/5xx) within the check's time. */
  answering_with_errors?: boolean;
  token_expires_at?: string;
  error?: Record<string, unknown>;
  note?: string;
}

/** The live check's bound on each attempt: an unreachable service is said within about a second. */
const LIVE_CHECK_TIMEOUT_MS = 1000;
/**
 * The live check's bound in all, retries of 429/5xx answers included: room for four attempts one
 * second apart (the Retry-After a busy service usually asks for).
 */
const LIVE_CHECK_DEADLINE_MS = 3200;

/** Proves the credentials work: a token (cached or new) that the service accepts on a real call. */
async function liveCheck(ctx: CommandContext): Promise<LiveCheck & { answered?: HttpContext }> {
  const client = await ctx.quickApi(LIVE_CHECK_TIMEOUT_MS, LIVE_CHECK_DEADLINE_MS);
  let token: CachedToken;
  try {
    token = await client.token();
    await client.managementSystems();
    // The call may have renewed a refused token: report the one now in use.
    token = await client.token();
    return { ok: true, token_expires_at: isoSeconds(token.expiresAt) };
  } catch (error) {
    // 403: the credentials work, this client is just not allowed to list management systems.
    if (error instanceof AuthError && error.http?.status === 403) {
      token = await client.token();
      return {
        ok: true,
        token_expires_at: isoSeconds(token.expiresAt),
        note: 'authenticated; this client may not list management systems',
      };
    }
    if (error instanceof AuthError) return { ok: false, error: error.toJSON() };
    if (error instanceof ServiceError || error instanceof RateLimitedError) {
      return {
        ok: false,
        answering_with_errors: true,
        answered: error.http,
        error: {
          ...error.toJSON(),
          hint: 'the service answered, but with errors: the status above is what is saved locally; run `leadctl auth status` again later',
        },
      };
    }
    if (error instanceof NetworkError) {
      return {
        ok: false,
        unreachable: true,
        error: {
          ...error.toJSON(),
          hint: 'the status above is what is saved locally; check the network or the base URL, and run `leadctl auth status` again',
        },
      };
    }
    throw error;
  }
}

/** "HTTP 503, 4 attempts" from what the client knew of the failed request. */
function answerNote(http: HttpContext | undefined): string {
  const attempts = http?.attempts ?? 1;
  return `HTTP ${http?.status ?? '?'}, ${attempts} attempt${attempts === 1 ? '' : 's'}`;
}

function storedTokenExpiry(resolved: ResolvedCredentials): string | undefined {
  const token = resolved.usesProfileToken ? resolved.stored?.token : undefined;
  if (!token || token.client_id !== resolved.clientId?.value || token.base_url !== resolved.baseUrl.value)
    return undefined;
  return token.expires_at.replace(/\.\d{3}Z$/, 'Z');
}

const status = defineCommand(
  (auth) =>
    auth
      .command('status')
      .description('show the profile, base URL and client id in use (and where each comes from), and check they work')
      .option('--all', 'also list every saved profile'),
  async (ctx, _args, opts) => {
    const { isProductionUrl } = await import('../config/base-url.js');
    const store = await ctx.config.store();
    const resolved = await ctx.config.credentials();
    const cachedExpiry = storedTokenExpiry(resolved);

    const doc: Record<string, unknown> = {
      profile: resolved.profile.value,
      profile_source: resolved.profile.source,
      profile_saved: resolved.stored !== undefined,
      base_url: resolved.baseUrl.value,
      base_url_source: resolved.baseUrl.source,
      client_id: resolved.clientId?.value ?? null,
      client_id_source: resolved.clientId?.source ?? null,
      client_secret: resolved.clientSecret ? 'set' : 'none',
      client_secret_source: resolved.clientSecret?.source ?? null,
      cached_token_expires_at: cachedExpiry ?? null,
      config_file: store.path,
    };

    let live: LiveCheck;
    let answered: HttpContext | undefined;
    if (!resolved.clientId) {
      live = {
        ok: false,
        error: new AuthError(
          `not logged in: no client id for profile "${resolved.profile.value}" and none in the environment`,
        ).toJSON(),
      };
    } else {
      ({ answered, ...live } = await liveCheck(ctx));
    }
    doc.live_check = live;

    let profiles: Array<Record<string, unknown>> | undefined;
    if (opts.all) {
      const data = store.read();
      profiles = Object.entries(data.profiles).map(([name, p]) => ({
        name,
        current: name === data.current_profile,
        base_url: p.base_url,
        client_id: p.client_id ?? null,
        secret_saved: p.client_secret !== undefined,
        token_expires_at: p.token?.expires_at.replace(/\.\d{3}Z$/, 'Z') ?? null,
        logged_in_at: p.logged_in_at ?? null,
      }));
      doc.profiles = profiles;
    }

    const src = (s: CredentialSource | null | undefined) => (s ? ` (${SOURCE_LABEL[s]})` : '');
    const cachedTokenState = (expiry: string) =>
      `cached, ${Date.parse(expiry) > ctx.io.now().getTime() ? 'valid until' : 'expired at'} ${ctx.output.time(expiry)}`;
    const human = () => {
      const lines = [
        `Profile:       ${resolved.profile.value}${src(resolved.profile.source)}${resolved.stored ? '' : ' (not saved)'}`,
        `Base URL:      ${resolved.baseUrl.value}${src(resolved.baseUrl.source)}${isProductionUrl(resolved.baseUrl.value) ? ' [production]' : ''}`,
        `Client id:     ${resolved.clientId?.value ?? '(none)'}${src(resolved.clientId?.source)}`,
        `Client secret: ${resolved.clientSecret ? 'set' : 'none'}${src(resolved.clientSecret?.source)}`,
        `Token:         ${live.ok && live.token_expires_at ? `valid until ${ctx.output.time(live.token_expires_at)}` : cachedExpiry ? cachedTokenState(cachedExpiry) : 'none cached'}`,
        `Live check:    ${
          live.ok
            ? `ok${live.note ? ` (${live.note})` : ''}`
            : live.unreachable
              ? `not done: the service could not be reached (one try of at most ${LIVE_CHECK_TIMEOUT_MS / 1000} s)`
              : live.answering_with_errors
                ? `not done: the service answered with errors (${answerNote(answered)})`
                : `FAILED: ${String(live.error?.message ?? 'unknown')}`
        }`,
        `Config file:   ${store.path}`,
      ];
      if (profiles) {
        lines.push('', 'Profiles:');
        if (profiles.length === 0) lines.push('  (none saved)');
        for (const p of profiles) {
          lines.push(
            `${p.current ? '* ' : '  '}${String(p.name)}  ${String(p.base_url)}  client ${String(p.client_id ?? '(none)')}  secret ${p.secret_saved ? 'saved' : 'not saved'}  token ${p.token_expires_at ? `until ${ctx.output.time(String(p.token_expires_at))}` : 'none'}`,
          );
        }
      }
      return lines.join('\n');
    };
    await ctx.output.document(doc, human);
    if (!live.ok) {
      const error = live.error ?? {};
      if (live.unreachable) {
        ctx.log.warn(
          `Error: the service could not be reached (one try of at most ${LIVE_CHECK_TIMEOUT_MS / 1000} s): ${String(error.message ?? 'no answer')}`,
        );
        ctx.log.warn(`Hint: ${String(error.hint)}`);
        return ExitCode.SERVICE;
      }
      if (live.answering_with_errors) {
        ctx.log.warn(
          `Error: the service answered, but with errors (tried for about ${Math.round(LIVE_CHECK_DEADLINE_MS / 1000)} s): ${String(error.message ?? 'an error status')}`,
        );
        ctx.log.warn(`Hint: ${String(error.hint)}`);
        return ExitCode.SERVICE;
      }
      ctx.log.warn(`Error: ${String(error.message ?? 'the credentials do not work')}`);
      ctx.log.warn(`Hint: ${String(error.hint ?? 'run `leadctl auth login`')}`);
      return ExitCode.AUTH;
    }
    return ExitCode.OK;
  },
);

const logout = defineCommand(
  (auth) =>
    auth
      .command('logout')
      .description("forget the profile's secret and token (keeps base URL and client id)")
      .option('--remove', 'remove the profile entirely (asks first; --yes to skip)')
      .option('-y, --yes', 'with --remove: do not ask (needed when there is no terminal to ask on)'),
  async (ctx, _args, opts) => {
    const { ENV, environmentCredentialsSet, resolveProfileName } = await import('../config/credentials.js');
    const store = await ctx.config.store();
    const name = resolveProfileName({ profile: ctx.globals.profile }, ctx.io.env, store.read()).value;
    if (opts.remove) {
      const { confirm } = await import('../output/prompt.js');
      await confirm(ctx.io, `Remove profile "${name}" (base URL, client id, secret and token)?`, {
        yes: opts.yes === true,
      });
    }
    const existed = opts.remove ? store.removeProfile(name) : store.forgetSecrets(name);
    if (opts.remove) {
      // A profile removed leaves no record of what it sent, and no key, behind.
      const [{ forgetProfile }, { stateDir }] = await Promise.all([
        import('../jobs/delta/record.js'),
        import('../config/state-dir.js'),
      ]);
      forgetProfile(stateDir(ctx.io.env), ctx.config.dir, name);
    }
    if (environmentCredentialsSet(ctx.io.env)) {
      ctx.log.warn(
        `Note: ${ENV.clientId} / ${ENV.clientSecret} are still set in this environment; commands keep using them.`,
      );
    }
    const action = opts.remove ? 'removed' : 'secret and token forgotten';
    await ctx.output.document({ profile: name, logged_out: existed, removed: opts.remove === true && existed }, () =>
      existed
        ? `Logged out of profile "${name}": ${action}.${opts.remove ? '' : ' Base URL and client id are kept; `leadctl auth login` asks only for the secret.'}`
        : `Profile "${name}" has nothing saved; nothing to forget.`,
    );
  },
);

const token = defineCommand(
  (auth) =>
    auth
      .command('token')
      .description('print a valid access token (for curl and other tools); it is a secret, handle it as one'),
  async (ctx) => {
    const client = await ctx.api();
    const t = await client.token();
    // `curl -H "Authorization: Bearer $(leadctl auth token)"`: the bare token unless JSON is asked for by name.
    if (!(ctx.globals.outputExplicit && (ctx.globals.output === 'json' || ctx.globals.output === 'ndjson'))) {
      await ctx.output.write(t.accessToken + '\n');
      return;
    }
    await ctx.output.document(
      { access_token: t.accessToken, token_type: 'Bearer', expires_at: isoSeconds(t.expiresAt) },
      () => t.accessToken,
    );
  },
);

export const register = defineGroup('auth', 'log in to the service, check credentials, print a token', [
  login,
  status,
  logout,
  token,
]);
