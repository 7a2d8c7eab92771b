import type { ServerLimits } from './http/connections.js';

/** How to run a sandbox. Everything is optional; the defaults give a quiet, fault-free service. */
export interface SandboxOptions {
  /** Interface to listen on (default 127.0.0.1). */
  host?: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Directory of the persistent store. Ignored with `memory`. */
  dataDir?: string;
  /** Throwaway in-memory store. */
  memory?: boolean;
  /** OAuth client id to seed (or to switch the seeded client to). Default: a random UUID on first start. */
  clientId?: string;
  /** OAuth client secret to seed (or to switch to). Default: 40 random letters and digits on first start. */
  clientSecret?: string;
  /** Access token lifetime in seconds (default 3600). */
  tokenTtl?: number;
  /** Lifetime of price reject offers in seconds, 300..345600 (default 900). */
  offerTtl?: number;
  /** Fraction (0..1) of /api requests answered 503. */
  failRate?: number;
  /** Requests per second allowed on /api; beyond it 429 with Retry-After. 0/undefined = unlimited. */
  rateLimit?: number;
  /** Delay added to every /api request, in milliseconds. */
  latencyMs?: number;
  /** Fraction (0..1) of /api requests whose connection is destroyed instead of answered. */
  resetRate?: number;
  /** Seed of the fault generator, for repeatable runs. Default: random. */
  randomSeed?: number;
  /** Largest request body in bytes before 413 (default 50 MB); lower it to rehearse a stricter service. */
  maxBodyBytes?: number;
  /** Which documented list path(s) to serve (default both; `minimal` defaults to list-manager). */
  listsPrefix?: ListsPrefixChoice;
  /**
   * Answer only what the interface promises: no sandbox-only fields, upserts and batches answered
   * without a body, lists under one path only. The "foreign server" the CLI is tested against.
   */
  minimal?: boolean;
  /** Origin of the absolute URLs the sandbox builds (legacy redirect_url, page links); default: the listening address. */
  publicUrl?: string;
  /** The time source (tests); the admin endpoint can still shift it. */
  now?: () => Date;
  /** Where unexpected server errors are reported (never request bodies or secrets). */
  onError?: (message: string) => void;
  /** The server's timeouts and connection cap (tests shorten them; see DEFAULT_LIMITS). */
  limits?: Partial<ServerLimits>;
}

export const LISTS_PREFIX_CHOICES = ['lead-management', 'list-manager', 'both'] as const;
export type ListsPrefixChoice = (typeof LISTS_PREFIX_CHOICES)[number];

export const DEFAULT_TOKEN_TTL = 3600;
export const DEFAULT_OFFER_TTL = 900;
export const MIN_OFFER_TTL = 300;
export const MAX_OFFER_TTL = 345_600;
export const BODY_LIMIT_BYTES = 50 * 1024 * 1024;

/** Checks option values, so both the command and library callers fail early and clearly. */
export function checkOptions(o: SandboxOptions): string[] {
  const problems: string[] = [];
  const fraction = (name: string, v: number | undefined) => {
    if (v !== undefined && !(Number.isFinite(v) && v >= 0 && v <= 1))
      problems.push(`${name} must be a number from 0 to 1, got ${v}`);
  };
  const nonNegativeInt = (name: string, v: number | undefined) => {
    if (v !== undefined && !(Number.isInteger(v) && v >= 0))
      problems.push(`${name} must be a whole number of 0 or more, got ${v}`);
  };
  fraction('fail-rate', o.failRate);
  fraction('reset-rate', o.resetRate);
  nonNegativeInt('rate-limit', o.rateLimit);
  nonNegativeInt('latency', o.latencyMs);
  nonNegativeInt('random-seed', o.randomSeed);
  if (o.maxBodyBytes !== undefined && !(Number.isInteger(o.maxBodyBytes) && o.maxBodyBytes >= 1024))
    problems.push(`max-body must be a whole number of bytes, at least 1024, got ${o.maxBodyBytes}`);
  if (o.port !== undefined && !(Number.isInteger(o.port) && o.port >= 0 && o.port <= 65535))
    problems.push(`port must be 0..65535, got ${o.port}`);
  if (o.tokenTtl !== undefined && !(Number.isInteger(o.tokenTtl) && o.tokenTtl > 0))
    problems.push(`token-ttl must be a positive whole number of seconds, got ${o.tokenTtl}`);
  if (
    o.offerTtl !== undefined &&
    !(Number.isInteger(o.offerTtl) && o.offerTtl >= MIN_OFFER_TTL && o.offerTtl <= MAX_OFFER_TTL)
  ) {
    problems.push(
      `offer-ttl must be a whole number of seconds from ${MIN_OFFER_TTL} to ${MAX_OFFER_TTL}, got ${o.offerTtl}`,
    );
  }
  if (o.clientId !== undefined && !/^[\x21-\x7e]{1,255}$/.test(o.clientId))
    problems.push('client-id must be 1..255 printable characters without spaces');
  if (o.clientSecret !== undefined && !/^[\x21-\x7e]{8,255}$/.test(o.clientSecret))
    problems.push('client-secret must be 8..255 printable characters without spaces');
  if (o.listsPrefix !== undefined && !(LISTS_PREFIX_CHOICES as readonly string[]).includes(o.listsPrefix))
    problems.push(`lists-prefix must be one of ${LISTS_PREFIX_CHOICES.join(', ')}`);
  if (o.publicUrl !== undefined) {
    let ok = false;
    try {
      const u = new URL(o.publicUrl);
      ok =
        (u.protocol === 'http:' || u.protocol === 'https:') &&
        u.pathname === '/' &&
        !u.search &&
        !u.username &&
        !u.password;
    } catch {
      ok = false;
    }
    if (!ok)
      problems.push(`public-url must be an origin like https://sandbox.example.com (no path), got ${o.publicUrl}`);
  }
  if (o.memory && o.dataDir !== undefined) problems.push('choose either a data dir or an in-memory store, not both');
  return problems;
}
