import type { Clock } from './clock.js';
import type { TokenService } from './domain/tokens.js';
import type { FaultInjector } from './http/faults.js';
import type { RequestStats } from './http/request-stats.js';
import type { ClientStore } from './store/clients.js';
import type { Db } from './store/database.js';
import type { SeededAccount } from './store/seed.js';

/** Everything the routes share. Built once by startSandbox. */
export interface SandboxContext {
  db: Db;
  clock: Clock;
  account: SeededAccount;
  clients: ClientStore;
  tokens: TokenService;
  faults: FaultInjector;
  requests: RequestStats;
  offerTtlSeconds: number;
  maxBodyBytes: number;
  /** List paths served, under /api/v1 (e.g. `/list-manager/lists`). */
  listPrefixes: readonly string[];
  /** The interface's promises only (see SandboxOptions.minimal). */
  minimal: boolean;
  /** Origin of absolute URLs: --public-url, else the listening address (set once listening). */
  publicOrigin: string;
  /** The origins a request from the sandbox's own pages would carry (--public-url and the listening address). */
  ownOrigins: Set<string>;
  /** Bearer token for the /_sandbox admin endpoints, printed at start (new at every start). */
  adminToken: string;
  onError: (message: string) => void;
}
