import type { AddressInfo } from 'node:net';
import { createClock } from './clock.js';
import type { SandboxContext } from './context.js';
import { TokenService } from './domain/tokens.js';
import { FaultInjector } from './http/faults.js';
import { RequestStats } from './http/request-stats.js';
import { DEFAULT_LIMITS } from './http/connections.js';
import { buildServer } from './http/server.js';
import { randomAlphanumeric } from './random.js';
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
import { openDatabase, storeError } from './store/database.js';
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
  /** Bearer token for the /_sandbox admin endpoints (new at every start; the client credentials work too). */
  adminToken: string;
  /** The address and port it listens on (the address as bound: 0.0.0.0 for every interface). */
  address: string;
  port: number;
  /** Things the operator should know about its store (a folder others can read). */
  warnings: string[];
  /** Row counts of the store. */
  counts(): StoreCounts;
  /** Stops listening, finishes in-flight requests and closes the store. */
  close(): Promise<void>;
}

export class SandboxOptionsError extends Error {}
export { SandboxStoreError } from './store/database.js';

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
  const warnings: string[] = [];
  const db = openDatabase(dataDir, (w) => warnings.push(w));
  try {
    let account;
    try {
      account = seedAccount(db, clock.now(), { clientId: options.clientId, clientSecret: options.clientSecret });
    } catch (err) {
      throw dataDir === undefined ? err : storeError(err, dataDir);
    }
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
      ownOrigins: new Set(),
      adminToken: randomAlphanumeric(40),
      onError: options.onError ?? (() => {}),
    };
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    // A request held back by --latency is not idle.
    limits.idleTimeoutMs += ctx.faults.settings.latencyMs;
    const app = buildServer(
      ctx,
      {
        open: [registerOAuthRoutes, registerLegacyRoutes, registerAdminRoutes],
        protected: [
          registerLoanPerformanceRoutes,
          registerListRoutes,
          registerLeadDataRoutes,
          registerDryRunRoutes,
          registerSystemsRoutes,
        ],
      },
      limits,
    );
    await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
    const address = app.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const baseUrl = `http://${host}:${address.port}`;
    ctx.publicOrigin = options.publicUrl?.replace(/\/+$/, '') ?? baseUrl;
    ctx.ownOrigins = new Set([baseUrl, new URL(ctx.publicOrigin).origin]);
    let closed: Promise<void> | undefined;
    return {
      baseUrl,
      address: address.address,
      port: address.port,
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
      adminToken: ctx.adminToken,
      warnings,
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
