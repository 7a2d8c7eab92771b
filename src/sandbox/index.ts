import type { AddressInfo } from 'node:net';
import { createClock } from './clock.js';
import type { SandboxContext } from './context.js';
import { TokenService } from './domain/tokens.js';
import { FaultInjector } from './http/faults.js';
import { RequestStats } from './http/request-stats.js';
import { buildServer } from './http/server.js';
import type { ListsPrefixChoice, SandboxOptions } from './options.js';
import { BODY_LIMIT_BYTES, checkOptions, DEFAULT_OFFER_TTL, DEFAULT_TOKEN_TTL } from './options.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerOAuthRoutes } from './routes/oauth.js';
import { registerDryRunRoutes } from './routes/dry-run.js';
import { registerLeadDataRoutes } from './routes/lead-data.js';
import { registerLegacyRoutes } from './routes/legacy.js';
import { LIST_PREFIXES, registerListRoutes } from './routes/lists.js';
import { registerLoanPerformanceRoutes } from './routes/loan-performance.js';
import { registerSystemsRoutes } from './routes/systems.js';
import { ClientStore } from './store/clients.js';
import { openDatabase } from './store/database.js';
import type { StoreCounts } from './store/counts.js';
import { storeCounts } from './store/counts.js';
import { seedAccount } from './store/seed.js';

export type { SandboxOptions } from './options.js';
export { defaultDataDir } from './data-dir.js';
export { checkOptions } from './options.js';

export interface SandboxCampaign {
  api_key: string;
  price_reject: boolean;
  name: string;
  price: number;
}

export interface RunningSandbox {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  campaigns: SandboxCampaign[];
  /** Where the store lives; undefined for an in-memory store. */
  dataDir: string | undefined;
  /** The seed of the fault generator (give it back with --random-seed to replay a run). */
  randomSeed: number;
  /** Row counts of the store. */
  counts(): StoreCounts;
  /** Stops listening, finishes in-flight requests and closes the store. */
  close(): Promise<void>;
}

export class SandboxOptionsError extends Error {}

function listPrefixes(choice: ListsPrefixChoice): string[] {
  if (choice === 'both') return [...LIST_PREFIXES];
  return [`/${choice}/lists`];
}

/** Opens (or creates and seeds) the store and serves the whole service interface over HTTP. */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const problems = checkOptions(options);
  if (problems.length > 0) throw new SandboxOptionsError(problems.join('; '));
  const dataDir = options.memory ? undefined : options.dataDir;
  if (!options.memory && dataDir === undefined)
    throw new SandboxOptionsError('give a data dir or ask for an in-memory store');

  const clock = createClock(options.now);
  const db = openDatabase(dataDir);
  try {
    const account = seedAccount(db, clock.now(), { clientId: options.clientId, clientSecret: options.clientSecret });
    const clients = new ClientStore(db);
    const randomSeed = options.randomSeed ?? FaultInjector.defaultSeed();
    const ctx: SandboxContext = {
      db,
      clock,
      account,
      clients,
      tokens: new TokenService(clients, account.signingKey, options.tokenTtl ?? DEFAULT_TOKEN_TTL, clock),
      faults: new FaultInjector({
        failRate: options.failRate ?? 0,
        rateLimit: options.rateLimit ?? 0,
        latencyMs: options.latencyMs ?? 0,
        resetRate: options.resetRate ?? 0,
        randomSeed,
      }),
      requests: new RequestStats(),
      offerTtlSeconds: options.offerTtl ?? DEFAULT_OFFER_TTL,
      maxBodyBytes: options.maxBodyBytes ?? BODY_LIMIT_BYTES,
      listPrefixes: listPrefixes(options.listsPrefix ?? (options.minimal ? 'list-manager' : 'both')),
      minimal: options.minimal === true,
      publicOrigin: '',
      onError: options.onError ?? (() => {}),
    };
    const app = buildServer(ctx, {
      open: [registerOAuthRoutes, registerLegacyRoutes, registerAdminRoutes],
      protected: [
        registerLoanPerformanceRoutes,
        registerListRoutes,
        registerLeadDataRoutes,
        registerDryRunRoutes,
        registerSystemsRoutes,
      ],
    });
    await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
    const address = app.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    ctx.publicOrigin = options.publicUrl?.replace(/\/+$/, '') ?? `http://${host}:${address.port}`;
    let closed: Promise<void> | undefined;
    return {
      baseUrl: `http://${host}:${address.port}`,
      get clientId() {
        return account.clientId;
      },
      get clientSecret() {
        return account.clientSecret;
      },
      campaigns: account.campaigns.map((c) => ({
        api_key: c.api_key,
        price_reject: c.price_reject,
        name: c.name,
        price: c.price,
      })),
      dataDir,
      randomSeed,
      counts: () => storeCounts(db),
      close() {
        closed ??= app.close().finally(() => db.close());
        return closed;
      },
    };
  } catch (err) {
    if (db.open) db.close();
    throw err;
  }
}
