/**
 * `leadctl doctor`: the questions asked first when a nightly job fails, each answered by one
 * check with what it measured and, when it fails, what to do. It only looks: no file is created
 * or changed (not even the config folder), no token is cached, nothing is remembered, and with
 * `offline` nothing leaves the machine.
 */
import { tmpdir } from 'node:os';
import { createApiClient, proxyFromEnv } from '../../api/client.js';
import { parseProxy } from '../../api/dispatcher.js';
import { formatApiEvent } from '../../api/events.js';
import type { CachedToken } from '../../api/token.js';
import { stateDir } from '../../config/state-dir.js';
import { MIN_PASSWORD_LENGTH, type Redactor } from '../../redact.js';
import { type CheckName, type CheckResult, skip } from './check.js';
import { checkCredentials } from './credentials.js';
import { checkFolder, FREE_SPACE } from './folders.js';
import { checkClock, checkDns, checkProxy, dispatcherFor, routeFor } from './network.js';
import { checkTls } from './tls.js';
import { checkDeltaRecords, checkJournals } from './records.js';
import { CRON_PATH, checkCronPath, checkRuntime } from './runtime.js';
import { checkListsPath, checkToken } from './service.js';

export { type CheckResult, type CheckStatus, CHECK_NAMES, doctorExitCode } from './check.js';

export interface DoctorOptions {
  env: Record<string, string | undefined>;
  now: () => Date;
  configDir: string;
  /** --profile, --base-url and --lists-path as given. */
  profile?: string;
  baseUrl?: string;
  listsPath?: string;
  /** Bound on each network step (connect, handshake, answer). */
  timeoutMs: number;
  /** Local checks only: no DNS, no connection, no request. */
  offline: boolean;
  /** The PATH a cron job gets (default /usr/bin:/bin). */
  cronPath?: string;
  userAgent: string;
  /** --verbose lines (the logger redacts them). */
  debug?: (line: string) => void;
  /** The run's redactor: doctor teaches it the secrets in play and passes every value through it. */
  redactor: Redactor;
}

/** Who and where the run is about, known before the checks run (for the heading). */
export interface DoctorRun {
  profile: string;
  baseUrl: string | null;
  production: boolean;
  checks: AsyncGenerator<CheckResult>;
}

/** Where a folder's path comes from (as src/config/paths.ts and state-dir.ts choose it), for the value. */
function whence(env: Record<string, string | undefined>, own: string, xdg: string): string {
  if (env[own]?.trim()) return own;
  return env[xdg]?.startsWith('/') ? xdg : 'default';
}

export function runDoctor(options: DoctorOptions): DoctorRun {
  const { env } = options;
  const now = options.now;
  const state = stateDir(env);
  const credentials = checkCredentials(
    options.configDir,
    { profile: options.profile, baseUrl: options.baseUrl },
    env,
    now(),
  );
  const target = credentials.target;

  // Whatever a check quotes (an answer, an error) never shows these, in any encoding.
  const { redactor } = options;
  redactor.add(target.clientSecret);
  redactor.add(target.cachedToken?.accessToken);
  const proxies = proxyFromEnv(env);
  for (const [value, variable] of [
    [proxies.httpsProxy, proxies.httpsProxyVariable],
    [proxies.httpProxy, proxies.httpProxyVariable],
  ]) {
    try {
      if (value) redactor.add(parseProxy(value, variable ?? 'HTTPS_PROXY').password, MIN_PASSWORD_LENGTH);
    } catch {
      // Not a proxy URL: the proxy check says so, without quoting a password.
    }
  }

  async function* checks(): AsyncGenerator<CheckResult> {
    for await (const check of unredacted())
      yield {
        ...check,
        value: redactor.text(check.value),
        hint: check.hint === null ? null : redactor.text(check.hint),
      };
  }

  async function* unredacted(): AsyncGenerator<CheckResult> {
    yield checkRuntime();
    yield checkFolder({
      name: 'config-folder',
      variable: 'LEADCTL_CONFIG_DIR',
      path: options.configDir,
      source: whence(env, 'LEADCTL_CONFIG_DIR', 'XDG_CONFIG_HOME'),
      private: true,
      secrets: true,
      minFree: FREE_SPACE.config,
    });
    yield checkFolder({
      name: 'state-folder',
      variable: 'LEADCTL_STATE_DIR',
      path: state,
      source: whence(env, 'LEADCTL_STATE_DIR', 'XDG_STATE_HOME'),
      private: true,
      secrets: false,
      minFree: FREE_SPACE.state,
    });
    // Where unsorted exports are staged (src/ingest/lms/staging.ts): a private folder is made inside.
    yield checkFolder({
      name: 'temp-folder',
      variable: 'LEADCTL_TMPDIR',
      path: env.LEADCTL_TMPDIR || tmpdir(),
      source: env.LEADCTL_TMPDIR ? 'LEADCTL_TMPDIR' : 'default',
      private: false,
      secrets: false,
      minFree: FREE_SPACE.temp,
    });
    const recordTarget = target.baseUrl
      ? { profile: target.profile, baseUrl: target.baseUrl, clientId: target.clientId }
      : undefined;
    yield checkDeltaRecords(state, recordTarget, [...new Set([target.profile, ...target.profiles])], now());
    yield checkJournals(state);
    yield checkCronPath(options.cronPath ?? CRON_PATH, env.PATH);
    yield* credentials.checks;

    const network: CheckName[] = ['dns', 'tls', 'clock', 'token', 'lists-path'];
    const skipRest = function* (from: CheckName, why: string) {
      for (const name of network.slice(network.indexOf(from))) yield skip(name, why);
    };
    const baseUrl = target.baseUrl ? new URL(target.baseUrl) : undefined;
    const proxy = await checkProxy(baseUrl, env, options.offline, options.timeoutMs);
    yield proxy.check;
    if (!baseUrl) return yield* skipRest('dns', 'not tried: no usable base URL (see base-url)');
    if (options.offline) return yield* skipRest('dns', 'not tried (--offline)');
    if (proxy.dead) return yield* skipRest('dns', 'not tried: the proxy does not answer (see proxy)');

    const route = routeFor(baseUrl, env);
    const dns = await checkDns(baseUrl, route, options.timeoutMs);
    yield dns.check;
    if (dns.failed) return yield* skipRest('tls', `not tried: ${baseUrl.hostname} does not resolve (see dns)`);

    if (baseUrl.protocol === 'http:') yield skip('tls', 'plain http to a loopback address (a local sandbox): no TLS');
    else {
      const tls = await checkTls(baseUrl, route, env, now(), options.timeoutMs);
      yield tls.check;
      if (tls.failed) return yield* skipRest('clock', 'not tried: no trusted TLS connection (see tls)');
    }

    const secret = target.clientSecret;
    const dispatcher = dispatcherFor(baseUrl, env, options.timeoutMs);
    // Read only: the profile's token may be used for the lists probe, never replaced or saved.
    const cached = target.cachedToken;
    const client = createApiClient({
      baseUrl: target.baseUrl!,
      clientId: target.clientId,
      clientSecret: secret,
      tokenCache: cached
        ? { load: (): CachedToken => cached, save: () => undefined, clear: () => undefined }
        : undefined,
      timeoutMs: options.timeoutMs,
      // One attempt each: doctor says what happens, it does not wait out an outage.
      retry: { maxAttempts: 1 },
      retryConnectionFailures: false,
      redactor,
      proxy: proxies,
      userAgent: options.userAgent,
      now: () => now().getTime(),
      onEvent: (event) => options.debug?.(formatApiEvent(event)),
    });
    try {
      yield await checkClock(baseUrl, dispatcher, now, options.userAgent, options.timeoutMs, options.debug);
      if (target.noCredentials) return yield* skipRest('token', `not tried: ${target.noCredentials} (see credentials)`);
      let haveToken = false;
      if (secret) {
        const token = await checkToken(client, now);
        haveToken = token.status === 'ok';
        yield token;
      } else {
        yield skip('token', 'not asked for: no secret; the cached token is used below (see credentials)');
        haveToken = cached !== undefined;
      }
      if (!haveToken) return yield* skipRest('lists-path', 'not tried: no token (see token)');
      yield await checkListsPath(client, {
        override: options.listsPath,
        stateDir: state,
        profile: target.profile,
        baseUrl: target.baseUrl!,
      });
    } finally {
      await Promise.allSettled([client.close(), dispatcher.close()]);
    }
  }

  return {
    profile: target.profile,
    baseUrl: target.baseUrl ?? null,
    production: target.production,
    checks: checks(),
  };
}
