import type { ApiClient, ApiEvent } from '../api/client.js';
import type { CredentialFlags, ResolvedCredentials } from '../config/credentials.js';
import { isProductionUrl } from '../config/base-url.js';
import { configDir } from '../config/paths.js';
import type { ProfileStore } from '../config/profiles.js';
import { UsageError } from '../errors.js';
import { createProgress, progressModeFor, type Progress } from '../output/progress.js';
import { Output, outputWidth } from '../output/render.js';
import { localZone } from '../output/time.js';
import { Redactor } from '../redact.js';
import type { IO } from '../io/io.js';

import type { OutputFormat } from '../io/output-format.js';
import type { GlobalFlags } from './global-options.js';

export type { OutputFormat };

/** Global flags as the user gave them, resolved against the terminal and environment. */
export interface GlobalOptions {
  output: OutputFormat;
  /** true when the user chose the format explicitly (not defaulted from the TTY). */
  outputExplicit: boolean;
  verbose: boolean;
  quiet: boolean;
  color: boolean;
  /** --utc: times for people in UTC instead of the local zone. */
  utc: boolean;
  profile?: string;
  baseUrl?: string;
  /** Per-request timeout in milliseconds. */
  timeoutMs?: number;
  /** Where lists are served (`--lists-path`), overriding the probe of the two documented paths. */
  listsPath?: string;
}

export interface Logger {
  /** Progress and notes for a person; silenced by --quiet. */
  info(message: string): void;
  /** Always shown (stderr). */
  warn(message: string): void;
  /** Only with --verbose. */
  debug(message: string): void;
}

/** The config folder, the profiles in it, and the credentials a command resolves to. */
export interface ConfigAccess {
  /** LEADCTL_CONFIG_DIR, else the platform's standard folder for leadctl. */
  readonly dir: string;
  /** The profile store (conf is loaded on first use). */
  store(): Promise<ProfileStore>;
  /** Flags > environment > profile, with where each value came from. */
  credentials(flags?: Pick<CredentialFlags, 'clientId' | 'clientSecret'>): Promise<ResolvedCredentials>;
}

/** What every command handler receives instead of importing globals. */
export interface CommandContext {
  io: IO;
  globals: GlobalOptions;
  log: Logger;
  config: ConfigAccess;
  /** Results on stdout in the chosen --output format. */
  output: Output;
  /**
   * The run's one redactor: the API clients teach it every secret they send; the logger, the
   * error rendering and whatever writes diagnostics pass their text through it.
   */
  redactor: Redactor;
  /** Progress on stderr for a long run (spinner on a TTY, lines in logs, nothing with --quiet or json). */
  progress(text?: string): Progress;
  /**
   * The API client for the resolved credentials (flags > environment > profile), created once
   * per run. `flags` (auth login) creates a separate client for those credentials.
   */
  api(flags?: Pick<CredentialFlags, 'clientId' | 'clientSecret'>): Promise<ApiClient>;
  /**
   * A separate client for a quick question (auth status's live check): a failed connection is not
   * retried and each attempt is bounded by `timeoutMs`, so that an unreachable service is said at
   * once; answers of 429/5xx are retried, everything ending within `deadlineMs`.
   */
  quickApi(timeoutMs: number, deadlineMs: number): Promise<ApiClient>;
  /** Hears every event of the clients this context makes (a run's report and metrics); returns the way to stop. */
  watchApi(listener: (event: ApiEvent) => void): () => void;
  /** Frees connections and finishes progress output; main calls it after the handler. */
  dispose(): Promise<void>;
  /** Runs another leadctl command line in-process (the demo's steps): `main`, handed in by main itself. */
  runCommand: RunCommand;
}

export type RunCommand = (argv: string[], io: IO) => Promise<number>;

function resolveGlobals(io: IO, raw: GlobalFlags): GlobalOptions {
  const explicit = raw.output !== undefined;
  const noColorEnv = io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '';
  return {
    output: raw.output ?? (io.stdout.isTTY ? 'table' : 'json'),
    outputExplicit: explicit,
    verbose: raw.verbose === true,
    quiet: raw.quiet === true,
    color: raw.color !== false && !noColorEnv && io.stderr.isTTY === true,
    utc: raw.utc === true,
    profile: raw.profile,
    baseUrl: raw.baseUrl,
    timeoutMs: raw.timeout === undefined ? undefined : Math.round(raw.timeout * 1000),
    listsPath: raw.listsPath,
  };
}

function createLogger(
  io: IO,
  globals: Pick<GlobalOptions, 'quiet' | 'verbose'>,
  redactor: Redactor = new Redactor(),
): Logger {
  const write = (text: string) => {
    const line = redactor.text(text);
    io.stderr.write(line.endsWith('\n') ? line : line + '\n');
  };
  return {
    info: (m) => {
      if (!globals.quiet) write(m);
    },
    warn: (m) => write(m),
    debug: (m) => {
      if (globals.verbose) write(m);
    },
  };
}

export function createContext(
  io: IO,
  raw: GlobalFlags,
  runCommand: RunCommand,
  redactor: Redactor = new Redactor(),
): CommandContext {
  const globals = resolveGlobals(io, raw);
  const log = createLogger(io, globals, redactor);
  const dir = configDir(io.env);
  let store: Promise<ProfileStore> | undefined;
  let shared: Promise<ApiClient> | undefined;
  const clients: Array<Promise<ApiClient>> = [];
  const progresses: Progress[] = [];
  const apiListeners = new Set<(event: ApiEvent) => void>();

  const config: ConfigAccess = {
    dir,
    store: () => (store ??= import('../config/profiles.js').then((m) => m.openProfileStore(dir))),
    async credentials(flags = {}) {
      const [{ resolveCredentials }, profiles] = await Promise.all([
        import('../config/credentials.js'),
        config.store(),
      ]);
      return resolveCredentials(
        { profile: globals.profile, baseUrl: globals.baseUrl, ...flags },
        io.env,
        profiles.read(),
      );
    },
  };

  let marked = false;
  /** A person working against production sees so, once per run, before anything is sent. */
  const markProduction = (baseUrl: string, profile: string) => {
    if (marked || globals.output !== 'table' || globals.quiet || !isProductionUrl(baseUrl)) return;
    marked = true;
    log.warn(`[production] ${baseUrl} (profile "${profile}")`);
  };

  const makeClient = async (
    flags: Pick<CredentialFlags, 'clientId' | 'clientSecret'>,
    quick?: { timeoutMs: number; deadlineMs: number },
  ): Promise<ApiClient> => {
    const [
      { createApiClient, proxyFromEnv },
      { formatMs, retryPolicyFromEnv },
      { formatApiEvent },
      credentials,
      { listsPathMemory },
      { stateDir },
      { packageVersion },
    ] = await Promise.all([
      import('../api/client.js'),
      import('../api/retry.js'),
      import('../api/events.js'),
      import('../config/credentials.js'),
      import('../config/lists-path.js'),
      import('../config/state-dir.js'),
      import('../version.js'),
    ]);
    const profiles = await config.store();
    const resolved = credentials.resolveCredentials(
      { profile: globals.profile, baseUrl: globals.baseUrl, ...flags },
      io.env,
      profiles.read(),
    );
    credentials.requireUsableCredentials(resolved);
    markProduction(resolved.baseUrl.value, resolved.profile.value);
    let retry;
    try {
      retry = retryPolicyFromEnv(io.env);
      // A quick check retries answers of 429/5xx a few times, briefly; the deadline bounds it all.
      if (quick)
        retry = {
          maxAttempts: Math.min(retry.maxAttempts, 4),
          baseDelayMs: Math.min(retry.baseDelayMs, 250),
          maxDelayMs: Math.min(retry.maxDelayMs, 1000),
          maxTotalWaitMs: Math.min(retry.maxTotalWaitMs, quick.deadlineMs),
        };
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const secret = resolved.clientSecret?.value;
    let tokenNotSaved = false;
    // Credentials given explicitly (auth login) are being tried out: keep them away from the profile's token.
    const explicit = flags.clientId !== undefined || flags.clientSecret !== undefined;
    return createApiClient({
      baseUrl: resolved.baseUrl.value,
      clientId: resolved.clientId?.value,
      clientSecret: secret,
      tokenCache: explicit ? undefined : credentials.profileTokenCache(profiles, resolved),
      timeoutMs: quick ? Math.min(quick.timeoutMs, globals.timeoutMs ?? Infinity) : globals.timeoutMs,
      deadlineMs: quick?.deadlineMs,
      // One person waiting, not a fleet of workers to spread out: no jitter, so the retries fit the deadline.
      random: quick ? () => 0 : undefined,
      retryConnectionFailures: quick ? false : undefined,
      redactor,
      retry,
      proxy: proxyFromEnv(io.env),
      userAgent: `leadctl/${packageVersion()} node/${process.versions.node}`,
      now: () => io.now().getTime(),
      listsPath: globals.listsPath,
      listsMemory: listsPathMemory(stateDir(io.env), resolved.profile.value, resolved.baseUrl.value),
      onEvent: (event) => {
        for (const listener of apiListeners) listener(event);
        if (event.type === 'token' && event.action === 'not-saved') {
          // The run goes on with its token; the next one will have to ask for another.
          if (!tokenNotSaved) log.warn(`Warning: ${formatApiEvent(event)}`);
          tokenNotSaved = true;
        } else if (globals.verbose) log.debug(formatApiEvent(event));
        else if (event.type === 'retry') {
          // A run waiting on a struggling service says so, above its progress, instead of going quiet.
          const line = `${event.method} ${event.path}: ${event.reason}, retry ${event.attempt} of ${retry.maxAttempts - 1} in ${formatMs(event.delayMs)}`;
          const progress = progresses[progresses.length - 1];
          if (progress && !globals.quiet) progress.note(line);
          else log.info(line);
        }
      },
    });
  };

  return {
    io,
    globals,
    log,
    config,
    runCommand,
    redactor,
    output: new Output(io.stdout, {
      format: globals.output,
      color: globals.color && io.stdout.isTTY === true,
      csvRaw: io.csv?.raw,
      time: { utc: globals.utc, zone: localZone(io.env) },
      width: outputWidth(io.stdout, io.env),
    }),
    progress(text) {
      const progress = createProgress(io.stderr, {
        mode: progressModeFor(io.stderr, io.env, globals.quiet),
        color: globals.color,
        now: () => io.now().getTime(),
      });
      progresses.push(progress);
      if (text !== undefined) progress.start(text);
      return progress;
    },
    api(flags) {
      if (flags && (flags.clientId !== undefined || flags.clientSecret !== undefined)) {
        const client = makeClient(flags);
        clients.push(client);
        return client;
      }
      if (!shared) {
        shared = makeClient({});
        clients.push(shared);
      }
      return shared;
    },
    quickApi(timeoutMs, deadlineMs) {
      const client = makeClient({}, { timeoutMs, deadlineMs });
      clients.push(client);
      return client;
    },
    watchApi(listener) {
      apiListeners.add(listener);
      return () => apiListeners.delete(listener);
    },
    async dispose() {
      await Promise.all(progresses.map((p) => p.flush()));
      await Promise.allSettled(clients.map(async (c) => (await c).close()));
    },
  };
}
