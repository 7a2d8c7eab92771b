import { lookup } from 'node:dns/promises';
import { performance } from 'node:perf_hooks';
import { connect as netConnect, isIP } from 'node:net';
import type { Dispatcher } from 'undici';
import { request } from '../../api/undici.js';
import { createDispatcher, parseProxy, type ProxyInUse, proxyFor, proxyFromEnv } from '../../api/dispatcher.js';
import { isLoopbackHost } from '../../api/loopback.js';
import { formatMs } from '../../api/retry.js';
import { ExitCode, type UsageError } from '../../errors.js';
import { type CheckResult, duration, errorCode, fail, ok, skip, warn } from './check.js';

/** How the client reaches the base URL: through which proxy, or directly and why. */
export interface Route {
  /** The proxy the client goes through for this base URL (src/api/dispatcher.ts decides). */
  proxy?: ProxyInUse;
  /** The proxy an https URL would take, whether or not it applies to this one (for the value). */
  configured?: ProxyInUse;
  /** Why the connection is direct. */
  direct?: string;
  /** The proxy variable holds no usable proxy URL. */
  invalid?: { message: string; hint: string | null };
}

/** What the client does for this base URL (`proxyFor`, the one implementation), and why in words. */
export function routeFor(baseUrl: URL, env: Record<string, string | undefined>): Route {
  const settings = proxyFromEnv(env);
  const value = settings.httpsProxy ?? settings.httpProxy;
  if (!value) return { direct: 'no proxy variable is set' };
  const variable =
    settings.httpsProxy !== undefined
      ? (settings.httpsProxyVariable ?? 'HTTPS_PROXY')
      : (settings.httpProxyVariable ?? 'HTTP_PROXY');
  let configured: ProxyInUse;
  try {
    configured = parseProxy(value, variable);
  } catch (err) {
    return { invalid: { message: (err as Error).message, hint: (err as UsageError).hint ?? null } };
  }
  const proxy = proxyFor(baseUrl, settings);
  if (proxy) return { proxy, configured };
  const host = baseUrl.hostname.replace(/^\[|\]$/g, '');
  const direct =
    baseUrl.protocol !== 'https:'
      ? 'plain http is never proxied (it only goes to this machine)'
      : isLoopbackHost(host)
        ? `${host} is a loopback address, always reached directly`
        : `${host} is exempted by NO_PROXY (${settings.noProxy})`;
  return { configured, direct };
}

/** A proxy for people: scheme, host and port; a user name and password are said, never shown. */
export function showProxy(proxy: ProxyInUse): string {
  return `${proxy.shown}${new URL(proxy.url).username || proxy.password ? ' (with credentials, not shown)' : ''}`;
}

/** Does anything accept a connection at the proxy's address? */
function reachable(proxy: ProxyInUse, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: proxy.host, port: proxy.port });
    const done = (result: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done('no answer in time'), timeoutMs);
    socket.once('connect', () => done(undefined));
    socket.once('error', (err) => done(errorCode(err)));
  });
}

export interface ProxyVerdict {
  check: CheckResult;
  /** The proxy the base URL goes through does not answer: the later network checks cannot run. */
  dead: boolean;
}

export async function checkProxy(
  baseUrl: URL | undefined,
  env: Record<string, string | undefined>,
  offline: boolean,
  timeoutMs: number,
): Promise<ProxyVerdict> {
  const route = routeFor(baseUrl ?? new URL('https://service.invalid'), env);
  if (route.invalid)
    return { check: fail('proxy', route.invalid.message, route.invalid.hint, ExitCode.USAGE), dead: true };
  const configured = route.proxy ?? route.configured;
  if (!configured)
    return { check: ok('proxy', 'none (HTTPS_PROXY and HTTP_PROXY not set): connects directly'), dead: false };
  const variable = configured.variable;
  const shown = `${showProxy(configured)} from ${variable}`;
  const where = baseUrl ? `${baseUrl.host}` : 'the service';
  if (offline)
    return {
      check: skip('proxy', `${shown}${route.direct ? `, not used: ${route.direct}` : ''}; not tried (--offline)`),
      dead: false,
    };
  const down = await reachable(configured, timeoutMs);
  if (route.proxy) {
    if (!down) return { check: ok('proxy', `${shown}, used for ${where}: it answers`), dead: false };
    return {
      check: fail(
        'proxy',
        `${shown}, used for ${where}: it does not answer (${down})`,
        `start or fix the proxy, correct ${variable}, or, if ${where} is reachable without it, add its host to NO_PROXY`,
        ExitCode.SERVICE,
      ),
      dead: true,
    };
  }
  const value = `${shown}, not used: ${route.direct}`;
  if (!down) return { check: ok('proxy', value), dead: false };
  return {
    check: warn(
      'proxy',
      `${value}; it does not answer (${down})`,
      `other base URLs would go through it and fail: fix the proxy, or unset ${variable}`,
    ),
    dead: false,
  };
}

export interface DnsVerdict {
  check: CheckResult;
  failed: boolean;
}

/** Does the base URL's host resolve here, to which addresses (plain http: loopback ones only)? */
export async function checkDns(baseUrl: URL, route: Route, timeoutMs: number): Promise<DnsVerdict> {
  const host = baseUrl.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return { check: ok('dns', `${host} is an address: nothing to resolve`), failed: false };
  if (route.proxy)
    return {
      check: skip('dns', `${host} is resolved by the proxy (${route.proxy.variable}), not on this machine`),
      failed: false,
    };
  let addresses: string[];
  try {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('no answer in time'), { code: 'ETIMEOUT' })), timeoutMs);
    });
    try {
      addresses = (await Promise.race([lookup(host, { all: true }), timeout])).map((a) => a.address);
    } finally {
      clearTimeout(timer);
    }
  } catch (err) {
    const code = errorCode(err);
    return {
      check: fail(
        'dns',
        `${host} does not resolve (${code})`,
        code === 'ENOTFOUND'
          ? `check the base URL's host name; if the service is only reachable through a proxy, set HTTPS_PROXY`
          : 'the DNS server did not answer: check /etc/resolv.conf and the network, and try again',
        ExitCode.SERVICE,
      ),
      failed: true,
    };
  }
  const list = addresses.join(', ');
  if (baseUrl.protocol === 'http:') {
    const outside = addresses.filter((a) => !isLoopbackHost(a));
    if (outside.length > 0)
      return {
        check: fail(
          'dns',
          `${host} → ${list}: plain http would leave this machine (${outside.join(', ')})`,
          `use https://, or 127.0.0.1 for a local sandbox`,
          ExitCode.USAGE,
        ),
        failed: true,
      };
  }
  return { check: ok('dns', `${host} → ${list}`), failed: false };
}

/** The client's dispatcher for this base URL (src/api/dispatcher.ts): its proxy, its loopback rule. */
export function dispatcherFor(baseUrl: URL, env: Record<string, string | undefined>, timeoutMs: number): Dispatcher {
  return createDispatcher(baseUrl, { agent: { connect: { timeout: timeoutMs } }, proxy: proxyFromEnv(env) }).dispatcher;
}

/** Clocks this far apart are fine (the Date header has whole seconds), a warning, a failure. */
export const CLOCK_OK_MS = 30_000;
export const CLOCK_FAIL_MS = 5 * 60_000;

/**
 * The local clock against the `Date` header of the service's answer to an unauthenticated
 * `GET /` (whatever its status), taken at the middle of the round trip.
 */
export async function checkClock(
  baseUrl: URL,
  dispatcher: Dispatcher,
  now: () => Date,
  userAgent: string,
  timeoutMs: number,
  debug?: (line: string) => void,
): Promise<CheckResult> {
  const sent = now().getTime();
  const started = performance.now();
  let date: string | undefined;
  try {
    const res = await request(new URL('/', baseUrl).href, {
      method: 'GET',
      dispatcher,
      headers: { 'user-agent': userAgent, accept: 'application/json' },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    await res.body.dump();
    debug?.(`[http] GET / → ${res.statusCode} in ${formatMs(performance.now() - started)} (for its Date header)`);
    const header = res.headers.date;
    date = Array.isArray(header) ? header[0] : header;
  } catch (err) {
    debug?.(`[http] GET / → ${errorCode(err)} after ${formatMs(performance.now() - started)}`);
    return fail(
      'clock',
      `no answer from ${baseUrl.host} to compare clocks (${errorCode(err)})`,
      'see the checks above: the service could not be reached',
      ExitCode.SERVICE,
    );
  }
  const received = now().getTime();
  const service = date ? Date.parse(date) : Number.NaN;
  if (Number.isNaN(service))
    return warn(
      'clock',
      `the service's answer has ${date ? `an unreadable Date header ("${date.slice(0, 40)}")` : 'no Date header'}: not compared`,
      null,
    );
  // The header has whole seconds, cut down: the service's time was half a second later on average.
  const skew = (sent + received) / 2 - (service + 500);
  const size = Math.abs(skew);
  const words =
    size < 1500
      ? 'clock in step with the service (within 1 s)'
      : `clock ${duration(size)} ${skew > 0 ? 'ahead of' : 'behind'} the service`;
  const value = `${words} (Date: ${date})`;
  const hint =
    'set the clock from NTP (`timedatectl set-ntp true`, or chrony/ntpd): token lifetimes, certificate dates, journal times and date flags depend on it';
  if (size <= CLOCK_OK_MS) return ok('clock', value);
  if (size <= CLOCK_FAIL_MS) return warn('clock', value, hint);
  return fail('clock', value, hint, ExitCode.USAGE);
}
