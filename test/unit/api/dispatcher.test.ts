/**
 * The connection rules without connecting: which proxy a base URL goes through (and which
 * variable to name), how NO_PROXY is read, how a proxy value is checked, and the loopback-only
 * resolver of plain http, fed by a scripted resolver. test/unit/api/connections.test.ts covers
 * the same rules end to end on 127.0.0.1.
 */
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, ProxyAgent } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  createDispatcher,
  findPlainHttpRefusal,
  loopbackOnlyLookup,
  parseProxy,
  PlainHttpRefusal,
  plainHttpError,
  proxyFor,
  proxyFromEnv,
  type ProxySettings,
} from '../../../src/api/dispatcher.js';
import { ExitCode, UsageError } from '../../../src/errors.js';

const thrown = (f: () => unknown): UsageError => {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error('nothing was thrown');
};

describe('proxyFromEnv', () => {
  it('reads each variable in lower case first, skipping blank values', () => {
    expect(
      proxyFromEnv({ http_proxy: 'http://lower:1', HTTP_PROXY: 'http://upper:1', no_proxy: 'a', NO_PROXY: 'b' }),
    ).toStrictEqual({
      httpProxy: 'http://lower:1',
      httpsProxy: undefined,
      noProxy: 'a',
      httpProxyVariable: 'http_proxy',
    });
    expect(
      proxyFromEnv({ https_proxy: '  ', HTTPS_PROXY: 'http://upper:2', no_proxy: ' ', NO_PROXY: 'b' }),
    ).toStrictEqual({
      httpProxy: undefined,
      httpsProxy: 'http://upper:2',
      noProxy: 'b',
      httpsProxyVariable: 'HTTPS_PROXY',
    });
  });

  it('an environment without proxies: nothing set, no variable named', () => {
    expect(proxyFromEnv({ PATH: '/bin' })).toStrictEqual({
      httpProxy: undefined,
      httpsProxy: undefined,
      noProxy: undefined,
    });
  });
});

describe('parseProxy', () => {
  it.each([
    ['http://proxy.example', 'http://proxy.example', 80],
    ['https://proxy.example', 'https://proxy.example', 443],
    ['socks5://proxy.example', 'socks5://proxy.example', 1080],
    ['socks://proxy.example:9050', 'socks://proxy.example:9050', 9050],
    ['HTTP://Proxy.Example:3128', 'http://proxy.example:3128', 3128],
    ['http://proxy.example:3128/', 'http://proxy.example:3128', 3128],
  ])('%s is shown as %s, port %i', (value, shown, port) => {
    const proxy = parseProxy(value, 'HTTPS_PROXY');
    expect(proxy).toMatchObject({ shown, port, variable: 'HTTPS_PROXY', host: new URL(shown).hostname });
    expect(proxy.url).toBe(new URL(value).href);
    expect(proxy.password).toBeUndefined();
  });

  it('gives the host of an IPv6 proxy without brackets, and keeps its password aside, decoded', () => {
    expect(parseProxy('http://me:p%40ss@[::1]:3128', 'https_proxy')).toMatchObject({
      host: '::1',
      port: 3128,
      shown: 'http://[::1]:3128',
      password: 'p@ss',
    });
  });

  it('an unparsable value: the message quotes it with its credentials masked, and names the variable', () => {
    const error = thrown(() => parseProxy('http://user:pa55word@[bad', 'HTTPS_PROXY'));
    expect(error.exitCode).toBe(ExitCode.USAGE);
    expect(error.message).toBe('the proxy "http://***@[bad" (from HTTPS_PROXY) is not a valid proxy URL');
    expect(error.hint).toMatch(/^set HTTPS_PROXY to the proxy's address/);
  });

  it('masks the whole user part however the password is written: a / or space in it, no scheme, a stray %', () => {
    for (const [value, shown] of [
      ['u:PxPass-CANARY-77@127.0.0.1:99999', '***@127.0.0.1:99999'],
      ['http://u:Px/Pass-CANARY-77@127.0.0.1:3128/x', 'http://***@127.0.0.1:3128/x'],
      ['http://u:Px Pass-CANARY-77@proxy.example/x', 'http://***@proxy.example/x'],
    ]) {
      const error = thrown(() => parseProxy(value!, 'HTTPS_PROXY'));
      expect(error.message).toBe(`the proxy "${shown}" (from HTTPS_PROXY) is not a valid proxy URL`);
      expect(error.message).not.toContain('CANARY');
    }
    // Not an escape: taken as written, not a crash (exit 1).
    expect(parseProxy('http://u:50%zz@proxy.example:3128', 'HTTPS_PROXY').password).toBe('50%zz');
  });

  it('a scheme that is not a proxy scheme is named', () => {
    expect(thrown(() => parseProxy('ftp://proxy.example', 'HTTP_PROXY')).message).toMatch(
      /is not a valid proxy URL: ftp is not a proxy scheme$/,
    );
  });

  it('a URL with a path, or without a host, is refused, without a scheme complaint', () => {
    for (const value of ['http://proxy.example/x', 'http://', 'socks5://']) {
      expect(thrown(() => parseProxy(value, 'HTTP_PROXY')).message).toMatch(/is not a valid proxy URL$/);
    }
  });
});

describe('proxyFor: the proxy an https base URL goes through', () => {
  const base = new URL('https://api.example.com/v1');
  const at = (url: string, proxy: ProxySettings) => proxyFor(new URL(url), proxy)?.shown;

  it('none for plain http, or without settings', () => {
    expect(proxyFor(new URL('http://localhost:8080'), { httpProxy: 'http://p:1', httpsProxy: 'http://p:1' })).toBe(
      undefined,
    );
    expect(proxyFor(base, undefined)).toBeUndefined();
    expect(proxyFor(base, {})).toBeUndefined();
  });

  it('HTTPS_PROXY over HTTP_PROXY, each named by its variable (or its usual name)', () => {
    expect(
      proxyFor(base, { httpsProxy: 'http://s:1', httpProxy: 'http://h:1', httpProxyVariable: 'http_proxy' }),
    ).toMatchObject({ shown: 'http://s:1', variable: 'HTTPS_PROXY' });
    expect(proxyFor(base, { httpProxy: 'http://h:1', httpsProxyVariable: 'https_proxy' })).toMatchObject({
      shown: 'http://h:1',
      variable: 'HTTP_PROXY',
    });
    expect(proxyFor(base, { httpProxy: 'http://h:1', httpProxyVariable: 'http_proxy' })).toMatchObject({
      variable: 'http_proxy',
    });
    expect(proxyFor(base, { httpsProxy: 'http://s:1', httpsProxyVariable: 'https_proxy' })).toMatchObject({
      variable: 'https_proxy',
    });
  });

  it('never for a loopback host, whatever NO_PROXY says', () => {
    for (const url of ['https://127.0.0.1:8443', 'https://[::1]:8443', 'https://localhost']) {
      expect(at(url, { httpsProxy: 'http://p:1' })).toBeUndefined();
    }
  });

  it('NO_PROXY: a host and its subdomains, not a longer name; any case; commas or spaces', () => {
    const proxy = (noProxy: string) => ({ httpsProxy: 'http://p:1', noProxy });
    expect(at('https://example.com', proxy('example.com'))).toBeUndefined();
    expect(at('https://api.example.com', proxy('example.com'))).toBeUndefined();
    expect(at('https://badexample.com', proxy('example.com'))).toBe('http://p:1');
    expect(at('https://api.example.com', proxy('.example.com'))).toBeUndefined();
    expect(at('https://api.example.com', proxy('*.example.com'))).toBeUndefined();
    expect(at('https://api.example.com', proxy('API.Example.COM'))).toBeUndefined();
    expect(at('https://b.test', proxy('a.test, b.test'))).toBeUndefined();
    expect(at('https://b.test', proxy('a.test b.test'))).toBeUndefined();
    expect(at('https://b.test', proxy(',,a.test,,'))).toBe('http://p:1');
    expect(at('https://b.test', proxy('*'))).toBeUndefined();
    expect(at('https://b.test', proxy('*x'))).toBe('http://p:1');
  });

  it('NO_PROXY with a port: only that port, 443 when the URL gives none', () => {
    const proxy = (noProxy: string) => ({ httpsProxy: 'http://p:1', noProxy });
    expect(at('https://example.com', proxy('example.com:443'))).toBeUndefined();
    expect(at('https://example.com:8443', proxy('example.com:443'))).toBe('http://p:1');
    expect(at('https://example.com:8443', proxy('example.com:8443'))).toBeUndefined();
    expect(at('https://example.com', proxy('example.com:8443'))).toBe('http://p:1');
  });

  it('NO_PROXY with an IPv6 address in brackets, with or without a port', () => {
    const proxy = (noProxy: string) => ({ httpsProxy: 'http://p:1', noProxy });
    expect(at('https://[2001:db8::1]', proxy('[2001:db8::1]'))).toBeUndefined();
    expect(at('https://[2001:db8::1]', proxy('[2001:db8::1]:443'))).toBeUndefined();
    expect(at('https://[2001:db8::2]', proxy('[2001:db8::1]'))).toBe('http://p:1');
  });
});

describe('plain http refusals', () => {
  it('a refusal names the host and what it resolved to', () => {
    const refusal = new PlainHttpRefusal('evil.test', ['10.0.0.1', '127.0.0.1']);
    expect(refusal.message).toBe('evil.test resolves to 10.0.0.1, 127.0.0.1, not only to this machine');
    expect(refusal.code).toBe('ERR_LEADCTL_PLAIN_HTTP_REMOTE');
    expect(new PlainHttpRefusal('none.test', []).message).toBe(
      'none.test resolves to no address, not only to this machine',
    );
  });

  it('is found up to four causes deep, not deeper, and not in what is not an error', () => {
    const refusal = new PlainHttpRefusal('h', []);
    let wrapped: unknown = refusal;
    for (let depth = 0; depth < 5; depth++) {
      expect(findPlainHttpRefusal(wrapped)).toBe(refusal);
      wrapped = new Error(`wrap ${depth}`, { cause: wrapped });
    }
    expect(findPlainHttpRefusal(wrapped)).toBeUndefined();
    expect(findPlainHttpRefusal(undefined)).toBeUndefined();
    expect(findPlainHttpRefusal('text')).toBeUndefined();
    expect(findPlainHttpRefusal(new Error('other'))).toBeUndefined();
  });

  it('the usage error names the remote addresses only, or the IP literal, and suggests the https URL', () => {
    const named = plainHttpError('http://evil.test:8080/api/', {
      hostname: 'evil.test',
      addresses: ['127.0.0.1', '10.0.0.9'],
    });
    expect(named.exitCode).toBe(ExitCode.USAGE);
    expect(named.message).toMatch(
      /^the base URL http:\/\/evil\.test:8080 resolves to 10\.0\.0\.9, which is not this machine/,
    );
    expect(named.hint).toMatch(/^use https:\/\/evil\.test:8080\/api, or/);
    expect(named.details).toEqual({ base_url: 'http://evil.test:8080', addresses: ['127.0.0.1', '10.0.0.9'] });
    const literal = plainHttpError('http://[2001:db8::5]/', { hostname: '[2001:db8::5]', addresses: ['2001:db8::5'] });
    expect(literal.message).toMatch(/^the base URL http:\/\/\[2001:db8::5\] is \[2001:db8::5\], which/);
    expect(literal.hint).toMatch(/^use https:\/\/\[2001:db8::5\], or/);
    const nothing = plainHttpError('http://gone.test', { hostname: 'gone.test', addresses: [] });
    expect(nothing.message).toContain('gone.test resolves to no address, which');
  });
});

describe('loopbackOnlyLookup', () => {
  type Answer = { err?: NodeJS.ErrnoException; found?: LookupAddress[] | string };
  function lookupWith(answer: Answer) {
    const asked: unknown[] = [];
    const resolve = ((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
      asked.push({ hostname, ...options });
      callback(answer.err ?? null, answer.found ?? []);
    }) as unknown as LookupFunction;
    return { lookup: loopbackOnlyLookup(resolve), asked };
  }
  const run = (lookup: LookupFunction, all: boolean) =>
    new Promise<unknown[]>((done) => lookup('host.test', { all, family: 0 }, (...args: unknown[]) => done(args)));

  it('asks for every address, and answers in the form the caller asked for', async () => {
    const found = [
      { address: '127.0.0.2', family: 4 },
      { address: '::1', family: 6 },
    ];
    const { lookup, asked } = lookupWith({ found });
    expect(await run(lookup, false)).toEqual([null, '127.0.0.2', 4]);
    expect(await run(lookup, true)).toEqual([null, found]);
    expect(asked).toEqual([
      { hostname: 'host.test', all: true, family: 0 },
      { hostname: 'host.test', all: true, family: 0 },
    ]);
  });

  it('takes a resolver that answers with one address as text', async () => {
    expect(await run(lookupWith({ found: '127.0.0.1' }).lookup, false)).toEqual([null, '127.0.0.1', 4]);
    const [refused] = await run(lookupWith({ found: '10.1.1.1' }).lookup, false);
    expect(refused).toBeInstanceOf(PlainHttpRefusal);
    expect((refused as PlainHttpRefusal).addresses).toEqual(['10.1.1.1']);
  });

  it('refuses a name with no address, or with one that is not loopback, listing them all', async () => {
    const [empty] = await run(lookupWith({ found: '' }).lookup, false);
    expect((empty as PlainHttpRefusal).addresses).toEqual([]);
    const [mixed, address] = await run(
      lookupWith({
        found: [
          { address: '127.0.0.1', family: 4 },
          { address: '192.0.2.1', family: 4 },
        ],
      }).lookup,
      true,
    );
    expect(mixed).toBeInstanceOf(PlainHttpRefusal);
    expect((mixed as PlainHttpRefusal).addresses).toEqual(['127.0.0.1', '192.0.2.1']);
    expect(address).toBe('');
  });

  it("passes the resolver's own failure on as it is", async () => {
    const failure = Object.assign(new Error('getaddrinfo ENOTFOUND host.test'), { code: 'ENOTFOUND' });
    expect(await run(lookupWith({ err: failure }).lookup, false)).toEqual([failure, '', 0]);
  });
});

describe('createDispatcher', () => {
  const setup = { agent: { connect: { timeout: 1000 } } };

  it('plain http to a loopback literal or a name: a direct agent; to another literal: refused at once', async () => {
    for (const url of ['http://127.0.0.1:1', 'http://[::1]:1', 'http://sandbox.test:1']) {
      const made = createDispatcher(new URL(url), { ...setup, proxy: { httpProxy: 'http://p:1' } });
      expect(made.dispatcher).toBeInstanceOf(Agent);
      expect(made.proxy).toBeUndefined();
      await made.dispatcher.close();
    }
    const error = thrown(() => createDispatcher(new URL('http://[2001:db8::7]:80'), setup));
    expect(error.message).toContain('is 2001:db8::7,');
    expect(error.details).toEqual({ base_url: 'http://[2001:db8::7]', addresses: ['2001:db8::7'] });
  });

  it('https: through the proxy that applies, named; directly otherwise', async () => {
    const viaProxy = createDispatcher(new URL('https://api.example.com'), {
      ...setup,
      proxy: { httpsProxy: 'http://proxy.example:3128', httpsProxyVariable: 'https_proxy' },
    });
    expect(viaProxy.dispatcher).toBeInstanceOf(ProxyAgent);
    expect(viaProxy.proxy).toMatchObject({ shown: 'http://proxy.example:3128', variable: 'https_proxy' });
    await viaProxy.dispatcher.close();
    const direct = createDispatcher(new URL('https://api.example.com'), setup);
    expect(direct.dispatcher).not.toBeInstanceOf(ProxyAgent);
    expect(direct.proxy).toBeUndefined();
    await direct.dispatcher.close();
  });
});
