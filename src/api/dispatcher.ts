/**
 * How the client's connections are made: plain http only to addresses that are this machine
 * (checked on the addresses a name resolves to, when connecting, before any byte is sent), and
 * https directly or through the proxy of HTTPS_PROXY / HTTP_PROXY, checked and named.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import type { Agent as AgentType, Dispatcher } from 'undici';
import { Agent, ProxyAgent } from './undici.js';
import { isLoopbackHost } from './loopback.js';
import { UsageError } from '../errors.js';

export interface ProxySettings {
  httpProxy?: string;
  httpsProxy?: string;
  noProxy?: string;
  /** The variable each came from (`HTTPS_PROXY` or `https_proxy`…), for messages. */
  httpProxyVariable?: string;
  httpsProxyVariable?: string;
}

/** The proxy settings of an environment, lower-case names first as curl reads them. */
export function proxyFromEnv(env: Record<string, string | undefined>): ProxySettings {
  const settings: ProxySettings = {};
  const pick = (name: string): [string, string] | undefined => {
    for (const variable of [name.toLowerCase(), name]) {
      const value = env[variable];
      if (value !== undefined && value.trim() !== '') return [value.trim(), variable];
    }
    return undefined;
  };
  const http = pick('HTTP_PROXY');
  const https = pick('HTTPS_PROXY');
  settings.httpProxy = http?.[0];
  settings.httpsProxy = https?.[0];
  settings.noProxy = pick('NO_PROXY')?.[0];
  if (http) settings.httpProxyVariable = http[1];
  if (https) settings.httpsProxyVariable = https[1];
  return settings;
}

/** The proxy a client goes through: where, from which variable, and how to show it (never its password). */
export interface ProxyInUse {
  url: string;
  /** `http://proxy.example:3128`: no user name or password. */
  shown: string;
  variable: string;
  /** The password in the URL, if any: a secret to redact. */
  password?: string;
  host: string;
  port: number;
}

const PROXY_PROTOCOLS = new Set(['http:', 'https:', 'socks5:', 'socks:']);

/** A proxy value as messages may show it: credentials in it masked. */
function shownValue(value: string): string {
  // Everything up to the last @ is user information (a password may hold a / or a space, and
  // the scheme is optional): masked whole, with the scheme kept.
  const at = value.lastIndexOf('@');
  if (at < 0) return value;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(value)?.[0] ?? '';
  return `${scheme}***${value.slice(at)}`;
}

/**
 * Checks a proxy setting. `proxy.example:3128` (no scheme) is read as http, as curl does.
 * Anything else that is not an http(s) or socks URL with a host is a usage error naming the variable.
 */
export function parseProxy(value: string, variable: string): ProxyInUse {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL | undefined;
  try {
    url = new URL(withScheme);
  } catch {
    url = undefined;
  }
  if (!url || !PROXY_PROTOCOLS.has(url.protocol) || url.hostname === '' || url.pathname.length > 1) {
    throw new UsageError(
      `the proxy "${shownValue(value)}" (from ${variable}) is not a valid proxy URL${url && !PROXY_PROTOCOLS.has(url.protocol) ? `: ${url.protocol.slice(0, -1)} is not a proxy scheme` : ''}`,
      {
        hint: `set ${variable} to the proxy's address, e.g. http://proxy.example:3128 (or http://user:password@proxy.example:3128), or unset it to connect directly`,
      },
    );
  }
  const defaultPort = url.protocol === 'https:' ? 443 : url.protocol === 'http:' ? 80 : 1080;
  return {
    url: url.href,
    shown: `${url.protocol}//${url.host}`,
    variable,
    password: url.password ? decodedUserinfo(url.password) : undefined,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : defaultPort,
  };
}

/** A user name or password as URL-encoded in a proxy URL; a stray `%` (not an escape) is taken as it is. */
export function decodedUserinfo(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

/**
 * The proxy an https base URL goes through, if any: HTTPS_PROXY, else HTTP_PROXY (as undici
 * does), unless NO_PROXY or the loopback rule exempts the host. Plain http is never proxied: it is
 * only allowed to this machine.
 */
export function proxyFor(baseUrl: URL, proxy: ProxySettings | undefined): ProxyInUse | undefined {
  if (baseUrl.protocol !== 'https:' || !proxy) return undefined;
  const value = proxy.httpsProxy ?? proxy.httpProxy;
  if (!value || exempt(baseUrl, proxy.noProxy)) return undefined;
  const variable =
    proxy.httpsProxy !== undefined
      ? (proxy.httpsProxyVariable ?? 'HTTPS_PROXY')
      : (proxy.httpProxyVariable ?? 'HTTP_PROXY');
  return parseProxy(value, variable);
}

/** NO_PROXY as curl and undici read it (exact host or a parent domain, `*`, optional port), loopback always. */
function exempt(url: URL, noProxy: string | undefined): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isLoopbackHost(host)) return true;
  const port = Number(url.port) || 443;
  for (const raw of (noProxy ?? '').split(/[,\s]+/)) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry === '*') return true;
    const match = /^(.+):(\d+)$/.exec(entry);
    const name = (match ? match[1]! : entry).replace(/^\*?\./, '').replace(/^\[|\]$/g, '');
    if (match && Number(match[2]) !== port) continue;
    if (host === name || host.endsWith(`.${name}`)) return true;
  }
  return false;
}

/** The connection was refused before it was made: plain http to an address that is not this machine. */
export class PlainHttpRefusal extends Error {
  readonly code = 'ERR_LEADCTL_PLAIN_HTTP_REMOTE';
  constructor(
    readonly hostname: string,
    readonly addresses: readonly string[],
  ) {
    super(`${hostname} resolves to ${addresses.join(', ') || 'no address'}, not only to this machine`);
  }
}

export function findPlainHttpRefusal(error: unknown): PlainHttpRefusal | undefined {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++) {
    if (e instanceof PlainHttpRefusal) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The usage error for a plain http base URL that is not this machine. */
export function plainHttpError(baseUrl: string, refusal: { hostname: string; addresses: readonly string[] }) {
  const url = new URL(baseUrl);
  const remote = refusal.addresses.filter((a) => !isLoopbackHost(a));
  const resolved =
    isIP(refusal.hostname.replace(/^\[|\]$/g, '')) !== 0
      ? `is ${refusal.hostname}`
      : remote.length
        ? `resolves to ${remote.join(', ')}`
        : 'resolves to no address';
  return new UsageError(
    `the base URL ${url.origin} ${resolved}, which is not this machine: plain http is allowed only when every address of the host is a loopback address (127.0.0.0/8, ::1); nothing was sent`,
    {
      hint: `use https://${url.host}${url.pathname === '/' ? '' : url.pathname.replace(/\/+$/, '')}, or the loopback URL a local sandbox prints`,
      details: { base_url: url.origin, addresses: refusal.addresses },
    },
  );
}

/**
 * A lookup that lets a connection go ahead only when every address of the name is loopback
 * (`resolve` does the resolving: the system's resolver, or a test's).
 */
export function loopbackOnlyLookup(resolve: LookupFunction = dnsLookup as unknown as LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, found) => {
      if (err) {
        callback(err, '', 0);
        return;
      }
      const list: LookupAddress[] = Array.isArray(found)
        ? found
        : typeof found === 'string' && found !== ''
          ? [{ address: found, family: isIP(found) }]
          : [];
      if (list.length === 0 || list.some((a) => !isLoopbackHost(a.address))) {
        callback(
          new PlainHttpRefusal(
            hostname,
            list.map((a) => a.address),
          ) as unknown as NodeJS.ErrnoException,
          '',
          0,
        );
        return;
      }
      if (options.all) callback(null, list);
      else callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

export interface DispatcherSetup {
  agent: AgentType.Options;
  proxy?: ProxySettings;
  /** Name resolution for direct connections (tests); the system's otherwise. */
  lookup?: LookupFunction;
}

/**
 * The dispatcher for one base URL. Plain http: direct, to loopback addresses only (an IP literal
 * is checked here, a name when it is resolved). https: through the proxy that applies, checked.
 */
export function createDispatcher(baseUrl: URL, setup: DispatcherSetup): { dispatcher: Dispatcher; proxy?: ProxyInUse } {
  if (baseUrl.protocol === 'http:') {
    const host = baseUrl.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) !== 0 && !isLoopbackHost(host))
      throw plainHttpError(baseUrl.href, { hostname: host, addresses: [host] });
    return {
      dispatcher: new Agent({
        ...setup.agent,
        connect: { ...(setup.agent.connect as object), lookup: loopbackOnlyLookup(setup.lookup) },
      }),
    };
  }
  const proxy = proxyFor(baseUrl, setup.proxy);
  if (!proxy) {
    const connect = setup.lookup ? { ...(setup.agent.connect as object), lookup: setup.lookup } : setup.agent.connect;
    return { dispatcher: new Agent({ ...setup.agent, connect }) };
  }
  // The IO's environment decides (never undici's own reading of process.env).
  return { dispatcher: new ProxyAgent({ ...setup.agent, uri: proxy.url }), proxy };
}
