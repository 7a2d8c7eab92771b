import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Option } from '@commander-js/extra-typings';
import { EnvironmentError, environmentError, UsageError } from '../errors.js';
import { defineCommand, defineGroup } from './command.js';
import { fraction, wholeNumber } from './parse.js';

/** What anyone who can reach a sandbox listening beyond this machine can do with it. */
function exposureWarning(running: { address: string; port: number; dataDir: string | undefined }): string {
  const { address, port } = running;
  const where =
    address === '0.0.0.0' || address === '::'
      ? `port ${port} of any address of this machine`
      : `${address.includes(':') ? `[${address}]` : address}:${port}`;
  return (
    `the sandbox listens on ${address}, not a loopback address: anyone who can reach ${where} can use ` +
    'the token endpoint, the whole /api (with the client credentials printed here), the legacy lead post ' +
    '(with a campaign api key) and the /_sandbox admin endpoints (with the admin token or the client ' +
    `credentials), over plain http${running.dataDir === undefined ? '' : '; its store keeps what is sent, SSNs and bank details included'}. ` +
    'Use --host 127.0.0.1 unless other machines must reach it.'
  );
}

const start = defineCommand(
  (sandbox) =>
    sandbox
      .command('start')
      .description(
        'serve the whole service interface locally until SIGINT/SIGTERM (prints base URL, client credentials and campaign api keys)',
      )
      .option('--host <host>', 'interface to listen on', '127.0.0.1')
      .option('--port <port>', 'TCP port (0 = a free one)', wholeNumber('--port', 0, 65535), 0)
      .addOption(
        new Option('--data-dir <dir>', 'directory of the persistent store (default: the leadctl data dir)').conflicts(
          'memory',
        ),
      )
      .option('--memory', 'use a throwaway in-memory store')
      .option('--client-id <id>', 'OAuth client id to seed (default: a random UUID on first start)')
      .option(
        '--client-secret <secret>',
        'OAuth client secret to seed (default: 40 random letters and digits on first start)',
      )
      .option('--token-ttl <seconds>', 'access token lifetime', wholeNumber('--token-ttl', 1), 3600)
      .option(
        '--offer-ttl <seconds>',
        'price reject offer lifetime (300..345600)',
        wholeNumber('--offer-ttl', 300, 345_600),
        900,
      )
      .option('--fail-rate <fraction>', 'fraction of /api requests answered 503', fraction('--fail-rate'))
      .option(
        '--rate-limit <n>',
        '/api requests allowed per second (beyond: 429 with Retry-After)',
        wholeNumber('--rate-limit', 1),
      )
      .option('--latency <ms>', 'delay added to every /api request', wholeNumber('--latency', 0))
      .option(
        '--reset-rate <fraction>',
        'fraction of /api requests whose connection is dropped instead of answered',
        fraction('--reset-rate'),
      )
      .option(
        '--random-seed <n>',
        'seed of the fault generator, for repeatable runs',
        wholeNumber('--random-seed', 0, 2 ** 32 - 1),
      )
      .option(
        '--max-body <bytes>',
        'largest request body before 413 (default 52428800, 50 MB)',
        wholeNumber('--max-body', 1024),
      )
      .addOption(
        new Option(
          '--lists-prefix <which>',
          'serve lists under /api/v1/lead-management/lists, /api/v1/list-manager/lists, or both (default: both; list-manager with --minimal)',
        ).choices(['lead-management', 'list-manager', 'both'] as const),
      )
      .option(
        '--minimal',
        'answer only what the interface promises (no sandbox-only fields, upserts and batches without a body, lists under one path): rehearse against a stricter service',
      )
      .option(
        '--public-url <origin>',
        'origin of the absolute URLs the sandbox builds (redirect_url, page links), e.g. behind a proxy (default: the listening address)',
      )
      .option(
        '--save-profile <name>',
        'save the base URL and client credentials as this profile (active if none is), ready for `--profile NAME`',
      )
      .option(
        '--env [file]',
        'print `export LEADCTL_…` lines (profile or credentials, and LEADCTL_API_KEY) for `. ./file` instead of the listing; with a file, write them there once ready (never on failure)',
      ),
  async (ctx, _args, opts) => {
    const { startSandbox, defaultDataDir, SandboxOptionsError, SandboxStoreError } = await import(
      '../sandbox/index.js'
    );
    const dataDir = opts.memory ? undefined : (opts.dataDir ?? defaultDataDir(ctx.io.env));
    const login = await import('../config/sandbox-login.js');
    const store = opts.saveProfile === undefined ? undefined : await ctx.config.store();
    if (store && opts.saveProfile !== undefined) login.checkSandboxProfile(store, opts.saveProfile);
    let sandbox;
    try {
      sandbox = await startSandbox({
        host: opts.host,
        port: opts.port,
        memory: opts.memory === true,
        dataDir,
        clientId: opts.clientId,
        clientSecret: opts.clientSecret,
        tokenTtl: opts.tokenTtl,
        offerTtl: opts.offerTtl,
        failRate: opts.failRate,
        rateLimit: opts.rateLimit,
        latencyMs: opts.latency,
        resetRate: opts.resetRate,
        randomSeed: opts.randomSeed,
        maxBodyBytes: opts.maxBody,
        listsPrefix: opts.listsPrefix,
        minimal: opts.minimal === true,
        publicUrl: opts.publicUrl,
        onError: (message) => ctx.log.warn(message),
      });
    } catch (err) {
      if (err instanceof SandboxOptionsError)
        throw new UsageError(err.message, {
          hint: 'run `leadctl sandbox start --help` for every option and its range',
        });
      if (err instanceof SandboxStoreError) throw new EnvironmentError(err.message, { hint: err.hint, path: err.path });
      const code = (err as NodeJS.ErrnoException).code;
      if ((err as NodeJS.ErrnoException).syscall === 'listen') {
        throw new UsageError(`cannot listen on ${opts.host}:${opts.port} (${code})`, {
          hint: 'choose another --port, or --port 0 for a free one',
        });
      }
      // Opening the store: no space, no permission, a read-only disk.
      const environment = dataDir === undefined ? undefined : environmentError(err, dataDir, 'the sandbox store');
      if (environment) throw environment;
      throw err;
    }
    const running = sandbox;
    const { isLoopbackHost } = await import('../api/loopback.js');
    if (!isLoopbackHost(running.address)) ctx.log.warn(`Warning: ${exposureWarning(running)}`);
    for (const warning of running.warnings) ctx.log.warn(`Warning: ${warning}`);
    // Listen for signals before announcing readiness: a script may signal as soon as it reads the line.
    const stopped = new Promise<void>((resolve) => {
      const release = ctx.io.onSignal(() => {
        release();
        running.close().then(resolve, (err: unknown) => {
          ctx.log.warn(`sandbox: error while closing: ${(err as Error).message}`);
          resolve();
        });
      });
    });
    const credentials = { baseUrl: running.baseUrl, clientId: running.clientId, clientSecret: running.clientSecret };
    if (store && opts.saveProfile !== undefined) {
      const { current } = login.saveSandboxProfile(store, opts.saveProfile, credentials);
      ctx.log.info(
        `Saved profile "${opts.saveProfile}" in ${store.path}${current ? ' (the active profile)' : `; use it with --profile ${opts.saveProfile}`}.`,
      );
    }
    if (opts.env) {
      const lines = login.sandboxEnvLines(credentials, running.campaigns, opts.saveProfile).join('\n') + '\n';
      if (typeof opts.env === 'string') {
        try {
          writeEnvFile(ctx.io.cwd, opts.env, lines);
        } catch (err) {
          await running.close();
          const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
          throw new UsageError(`cannot write the --env file ${opts.env} (${code}); the sandbox stopped`, {
            hint: 'give --env a file in a folder you can write, e.g. --env ./sandbox.env',
          });
        }
      } else ctx.io.stdout.write(lines);
      ctx.log.info(`Sandbox listening on ${running.baseUrl}. Stop with Ctrl+C.`);
    } else if (ctx.globals.output === 'json' || ctx.globals.output === 'ndjson') {
      ctx.io.stdout.write(
        JSON.stringify({
          base_url: running.baseUrl,
          client_id: running.clientId,
          client_secret: running.clientSecret,
          admin_token: running.adminToken,
          campaigns: running.campaigns.map((c) => ({ api_key: c.api_key, price_reject: c.price_reject })),
        }) + '\n',
      );
    } else {
      const lines = [
        `Sandbox listening on ${running.baseUrl}`,
        `Store:          ${running.dataDir ?? 'in memory (discarded on exit)'}`,
        `Client id:      ${running.clientId}`,
        `Client secret:  ${running.clientSecret}`,
        `Admin token:    ${running.adminToken} (for /_sandbox/*)`,
        ...running.campaigns.map(
          (c) =>
            `Campaign:       ${c.name} (price ${c.price.toFixed(2)}${c.price_reject ? ', price reject' : ''}) api_key ${c.api_key}`,
        ),
      ];
      ctx.io.stdout.write(lines.join('\n') + '\n');
      ctx.log.info(`Fault seed ${running.randomSeed}. Stop with Ctrl+C.`);
    }
    await stopped;
    return 0;
  },
);

/**
 * Written whole (a temporary file renamed into place) once the sandbox is ready, so that a script
 * waiting for the file never reads half of it, and never written when the sandbox cannot start.
 * Mode 600: it holds a campaign's api key (and the client secret without --save-profile).
 */
function writeEnvFile(cwd: string, file: string, text: string): void {
  const target = resolve(cwd, file);
  const temporary = `${target}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, text, { mode: 0o600 });
    renameSync(temporary, target);
  } finally {
    rmSync(temporary, { force: true });
  }
}

export const register = defineGroup(
  'sandbox',
  'a faithful local implementation of the service, for rehearsals, demos and tests',
  [start],
);
