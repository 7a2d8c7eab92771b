/**
 * The access token's life cycle: obtained lazily, shared by concurrent callers,
 * reused until shortly before it expires, renewed when the service refuses it.
 */

export interface CachedToken {
  accessToken: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  /** Epoch milliseconds; lets the renewal margin scale with the token's lifetime. */
  obtainedAt: number;
}

/** Where a token outlives the process (the profile); optional. */
export interface TokenCache {
  load(): CachedToken | undefined;
  save(token: CachedToken): void;
  clear(): void;
}

export type TokenEvent =
  | { type: 'token'; action: 'cached'; expiresAt: number }
  | { type: 'token'; action: 'requested'; reason: 'none' | 'expiring' | 'refused' }
  | { type: 'token'; action: 'obtained'; expiresAt: number }
  /** The cache could not keep the token (a read-only config folder): the run goes on without it. */
  | { type: 'token'; action: 'not-saved'; reason: string };

/** Renew this long before expiry (capped at a tenth of the lifetime, for very short-lived tokens). */
export const RENEWAL_MARGIN_MS = 60_000;

export function isFresh(token: CachedToken, nowMs: number): boolean {
  const lifetime = Math.max(0, token.expiresAt - token.obtainedAt);
  const margin = Math.min(RENEWAL_MARGIN_MS, lifetime / 10);
  return nowMs < token.expiresAt - margin;
}

export interface TokenProviderOptions {
  /** Performs the client-credentials request. */
  fetchToken: () => Promise<CachedToken>;
  cache?: TokenCache;
  now?: () => number;
  onEvent?: (event: TokenEvent) => void;
}

export class TokenProvider {
  private current?: CachedToken;
  private pending?: Promise<CachedToken>;
  private loaded = false;
  private readonly now: () => number;

  constructor(private readonly options: TokenProviderOptions) {
    this.now = options.now ?? Date.now;
  }

  /** A token that is valid now. */
  async get(): Promise<string> {
    return (await this.getToken()).accessToken;
  }

  async getToken(): Promise<CachedToken> {
    let stale = false;
    // A token obtained since (renewNow) wins over the cache.
    if (!this.loaded && this.current === undefined) {
      this.loaded = true;
      const cached = safeLoad(this.options.cache);
      if (cached && isFresh(cached, this.now())) {
        this.current = cached;
        this.options.onEvent?.({ type: 'token', action: 'cached', expiresAt: cached.expiresAt });
      }
      stale = cached !== undefined && this.current === undefined;
    }
    if (this.current && isFresh(this.current, this.now())) return this.current;
    return this.renew(this.current || stale ? 'expiring' : 'none');
  }

  /**
   * The service refused `token`. Renews unless another caller already did
   * (several requests in flight may all see the same 401).
   */
  async refused(token: string): Promise<string> {
    if (this.current && this.current.accessToken !== token && isFresh(this.current, this.now())) {
      return this.current.accessToken;
    }
    if (this.current?.accessToken === token) {
      this.current = undefined;
      safeClear(this.options.cache);
    }
    return (await this.renew('refused')).accessToken;
  }

  /** Always asks the service for a new token (login, live checks). */
  async renewNow(): Promise<CachedToken> {
    return this.renew('none');
  }

  private renew(reason: 'none' | 'expiring' | 'refused'): Promise<CachedToken> {
    if (!this.pending) {
      this.options.onEvent?.({ type: 'token', action: 'requested', reason });
      this.pending = this.options
        .fetchToken()
        .then((token) => {
          this.current = token;
          const failure = safeSave(this.options.cache, token);
          if (failure !== undefined) this.options.onEvent?.({ type: 'token', action: 'not-saved', reason: failure });
          this.options.onEvent?.({ type: 'token', action: 'obtained', expiresAt: token.expiresAt });
          return token;
        })
        .finally(() => {
          this.pending = undefined;
        });
    }
    return this.pending;
  }
}

// A damaged or unreadable cache only costs a token request; it must never stop a run.
function safeLoad(cache: TokenCache | undefined): CachedToken | undefined {
  try {
    return cache?.load();
  } catch {
    return undefined;
  }
}

/** Why the token could not be saved, if it could not (never thrown: see safeLoad). */
function safeSave(cache: TokenCache | undefined, token: CachedToken): string | undefined {
  try {
    cache?.save(token);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function safeClear(cache: TokenCache | undefined): void {
  try {
    cache?.clear();
  } catch {
    /* see safeLoad */
  }
}
