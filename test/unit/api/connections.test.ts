/**
 * Where the client's connections go: plain http only to this machine (decided on the addresses a
 * name resolves to, with an injected resolver: no real lookup, no traffic off 127.0.0.0/8), https
 * through the proxy of the environment, checked and named when it is wrong or down.
 *
 * The "remote" addresses the resolver hands out are 0.0.0.0 and :: (not loopback, so refused),
 * which Linux connects to this machine: should the rule ever break, the test fails on what the
 * local service saw, and nothing goes off the machine.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo, LookupFunction } from 'node:net';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../../src/api/client.js';
import { proxyFromEnv, parseProxy } from '../../../src/api/dispatcher.js';
import { ExitCode, NetworkError, UsageError } from '../../../src/errors.js';

const SECRET = 'Zq+/= &"sec\'ret-9';
const servers: Server[] = [];
const clients: ApiClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A service on 127.0.0.1 that records every request and answers the token and systems endpoints. */
async function service() {
  const seen: Array<{ url: string; headers: IncomingMessage['headers'] }> = [];
  const port = await listen(
    createServer((req, res) => {
      seen.push({ url: req.url!, headers: req.headers });
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(
            req.url === '/oauth/token'
              ? { token_type: 'Bearer', expires_in: 3600, access_token: 'tok-1' }
              : { data: [{ id: 1, name: 'LMS' }] },
          ),
        );
      });
    }),
  );
  return { port, seen };
}

/** A resolver that knows only the names it is given (and records what it was asked). */
function resolver(names: Record<string, string[]>) {
  const asked: string[] = [];
  const lookup: LookupFunction = (hostname, options, callback) => {
    asked.push(hostname);
    const addresses = names[hostname];
    if (!addresses) {
      callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      return;
    }
    const list: LookupAddress[] = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    if (options.all) callback(null, list);
    else callback(null, list[0]!.address, list[0]!.family);
  };
  return { lookup, asked };
}

function client(baseUrl: string, options: Partial<ApiClientOptions> = {}) {
  const c = createApiClient({
    baseUrl,
    clientId: 'client-1',
    clientSecret: SECRET,
    retry: { baseDelayMs: 1, maxDelayMs: 5, maxTotalWaitMs: 500, maxAttempts: 2 },
    random: () => 0.5,
    ...options,
  });
  clients.push(c);
  return c;
}

/** A CONNECT proxy on 127.0.0.1 that records what it is asked and tunnels to `targetPort`, or answers `refuse`. */
async function connectProxy(targetPort: number, refuse?: number) {
  const asked: string[] = [];
  const proxy = createServer((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req, socket, head) => {
    asked.push(req.url!);
    if (refuse) {
      socket.end(`HTTP/1.1 ${refuse} Refused\r\n\r\n`);
      return;
    }
    const upstream = connect(targetPort, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket).pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  const port = await listen(proxy);
  return { url: `http://127.0.0.1:${port}`, port, asked };
}

/** A loopback port with nothing listening. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

describe('plain http goes only to this machine, decided on the resolved addresses', () => {
  it('connects when every address of the name is loopback', async () => {
    const svc = await service();
    const dns = resolver({ 'sandbox.test': ['127.0.0.1', '::1'] });
    const c = client(`http://sandbox.test:${svc.port}`, { lookup: dns.lookup });
    expect(await c.managementSystems()).toEqual([{ id: 1, name: 'LMS' }]);
    expect(dns.asked).toContain('sandbox.test');
    expect(svc.seen.map((s) => s.url)).toEqual(['/oauth/token', '/api/v1/resources/management-systems']);
  });

  for (const addresses of [['0.0.0.0'], ['127.0.0.1', '0.0.0.0'], ['::'], ['0.0.0.0', '::1']]) {
    it(`refuses (exit 2) a name resolving to ${addresses.join(' + ')}, before any byte of a secret is sent`, async () => {
      const svc = await service();
      const dns = resolver({ 'evil.localhost': addresses });
      const c = client(`http://evil.localhost:${svc.port}`, { lookup: dns.lookup });
      const error = (await c.managementSystems().catch((e: unknown) => e)) as UsageError;
      expect(error).toBeInstanceOf(UsageError);
      expect(error.exitCode).toBe(ExitCode.USAGE);
      const remote = addresses.filter((a) => !a.startsWith('127.') && a !== '::1');
      expect(error.message).toContain(`resolves to ${remote.join(', ')}`);
      expect(error.message).toMatch(/plain http is allowed only when every address .* loopback.*nothing was sent/);
      expect(error.hint).toContain(`https://evil.localhost:${svc.port}`);
      // Nothing reached even the loopback address the name also had.
      expect(svc.seen).toEqual([]);
    });
  }

  it('refuses a name that resolves to nothing, and never goes through a proxy for plain http', async () => {
    const svc = await service();
    const proxy = await connectProxy(svc.port);
    const dns = resolver({ 'empty.test': [] });
    const c = client(`http://empty.test:${svc.port}`, {
      lookup: dns.lookup,
      proxy: { httpProxy: proxy.url, httpsProxy: proxy.url },
    });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as UsageError;
    expect(error).toBeInstanceOf(UsageError);
    expect(error.message).toContain('resolves to no address');
    expect(proxy.asked).toEqual([]);
    expect(svc.seen).toEqual([]);
  });

  it('refuses a non-loopback IP literal when the client is made, without resolving anything', () => {
    const dns = resolver({});
    expect(() => client('http://198.51.100.4:8080', { lookup: dns.lookup })).toThrow(UsageError);
    expect(dns.asked).toEqual([]);
  });

  it('keeps a lookup failure a network problem (exit 5), not a refusal', async () => {
    const dns = resolver({});
    const c = client('http://nowhere.test:1', { lookup: dns.lookup });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toContain('ENOTFOUND');
  });
});

describe('proxies', () => {
  it('sends an https base URL through the proxy; the CONNECT names the service, the name is not resolved here', async () => {
    const svc = await service();
    const proxy = await connectProxy(svc.port);
    const dns = resolver({});
    // HTTP_PROXY serves https too when HTTPS_PROXY is unset, as undici does.
    const c = client('https://lead-service.invalid:8443', { lookup: dns.lookup, proxy: { httpProxy: proxy.url } });
    // The tunnel ends at a plain http server, so TLS fails: what matters is where the connection went.
    const error = await c.managementSystems().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(new Set(proxy.asked)).toEqual(new Set(['lead-service.invalid:8443']));
    expect(dns.asked).toEqual([]);
  });

  it('reaches loopback and NO_PROXY hosts directly even with a proxy set', async () => {
    const svc = await service();
    const proxy = await connectProxy(1);
    expect(
      await client(`http://127.0.0.1:${svc.port}`, { proxy: { httpProxy: proxy.url } }).managementSystems(),
    ).toHaveLength(1);
    const dns = resolver({ 'lms.internal': ['127.0.0.1'] });
    const direct = client(`https://lms.internal:${await deadPort()}`, {
      lookup: dns.lookup,
      proxy: { httpsProxy: 'http://[malformed', noProxy: '.internal' },
    });
    // Exempt by NO_PROXY: the (malformed) proxy is not used, so it is not an error either.
    const error = (await direct.managementSystems().catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toContain('ECONNREFUSED');
    expect(dns.asked).toContain('lms.internal');
    expect(proxy.asked).toEqual([]);
  });

  it('refuses a malformed proxy (exit 2) naming it and its variable, never its password', () => {
    for (const [value, variable] of [
      ['http://user:pa55word@[bad', 'HTTPS_PROXY'],
      ['ftp://proxy.example:21', 'https_proxy'],
      ['http://', 'HTTP_PROXY'],
      ['http://proxy.example:3128/some/path', 'HTTPS_PROXY'],
    ] as const) {
      const proxy = variable.toLowerCase() === 'http_proxy' ? { httpProxy: value } : { httpsProxy: value };
      let error: unknown;
      try {
        client('https://api.example.com', {
          proxy: { ...proxy, httpProxyVariable: variable, httpsProxyVariable: variable },
        });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UsageError);
      const e = error as UsageError;
      expect(e.exitCode).toBe(ExitCode.USAGE);
      expect(e.message).toMatch(new RegExp(`^the proxy ".*" \\(from ${variable}\\) is not a valid proxy URL`));
      expect(e.hint).toContain(variable);
      expect(JSON.stringify(e.toJSON())).not.toContain('pa55word');
    }
  });

  it('reads a proxy without a scheme as http (as curl does), and hides its password', () => {
    expect(parseProxy('proxy.example:3128', 'https_proxy')).toMatchObject({
      shown: 'http://proxy.example:3128',
      port: 3128,
      variable: 'https_proxy',
    });
    expect(parseProxy('http://u:s%3Dcret@proxy.example', 'HTTPS_PROXY')).toMatchObject({
      shown: 'http://proxy.example',
      password: 's=cret',
      port: 80,
    });
  });

  it('names a dead proxy and its variable (exit 5), not the base URL', async () => {
    const port = await deadPort();
    const c = client('https://api.example.com', {
      proxy: { httpsProxy: `http://user:pw-secret-1@127.0.0.1:${port}`, httpsProxyVariable: 'https_proxy' },
    });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.exitCode).toBe(ExitCode.SERVICE);
    expect(error.message).toMatch(
      new RegExp(
        `^could not reach the proxy http://127\\.0\\.0\\.1:${port} \\(from https_proxy\\) for POST /oauth/token: connection refused`,
      ),
    );
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.hint).toMatch(/^check https_proxy: the proxy it names is down or wrong/);
    expect(error.hint).not.toContain('--base-url');
    expect(JSON.stringify(error.toJSON())).not.toContain('pw-secret-1');
  });

  it('says when the proxy would not open the tunnel (its status), naming it', async () => {
    const proxy = await connectProxy(1, 502);
    const c = client('https://api.example.com', {
      proxy: { httpsProxy: proxy.url, httpsProxyVariable: 'HTTPS_PROXY' },
    });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toContain(`the proxy ${proxy.url} (from HTTPS_PROXY) would not connect`);
    expect(error.message).toContain('HTTP 502');
  });

  it('reads the proxy settings from the environment, lower-case names first, with their variable', () => {
    expect(
      proxyFromEnv({ HTTPS_PROXY: 'http://upper:1', https_proxy: 'http://lower:1', NO_PROXY: 'a.example' }),
    ).toEqual({
      httpProxy: undefined,
      httpsProxy: 'http://lower:1',
      httpsProxyVariable: 'https_proxy',
      noProxy: 'a.example',
    });
    expect(proxyFromEnv({ HTTP_PROXY: ' http://p:3128 ', https_proxy: '' })).toEqual({
      httpProxy: 'http://p:3128',
      httpProxyVariable: 'HTTP_PROXY',
    });
  });
});
