/**
 * What the client takes out of answers and errors (its secrets, in every encoding, echoed by a
 * server), how it reads a token's lifetime, and how a quick check bounds its retries.
 *
 * The echo server is written here: test/helpers/hostile-server.ts (another helper's) did not exist
 * yet when this was written; its echo mode can replace it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createApiClient,
  MAX_TOKEN_LIFETIME_MS,
  tokenLifetimeMs,
  type ApiClient,
  type ApiClientOptions,
} from '../../../src/api/client.js';
import { AuthError, NetworkError, ServiceError } from '../../../src/errors.js';
import { Redactor } from '../../../src/redact.js';

/** The characters that URL, form, JSON and HTML encodings all treat specially. */
const SECRET = `Ab1+/= &"q'x\\y<z>%€9`;
const TOKEN = 'tK+/=9ZmVyeS1zZWNyZXQtdG9rZW4';
const API_KEY = 'campaign key+/=&1';

const servers: Server[] = [];
const clients: ApiClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** Every way the test's servers write back what they were sent. */
function encodings(value: string): string[] {
  return [
    value,
    encodeURIComponent(value),
    new URLSearchParams({ v: value }).toString().slice(2),
    JSON.stringify(value).slice(1, -1),
    JSON.stringify(value).slice(1, -1).replace(/\//g, '\\/'),
    Buffer.from(value).toString('base64'),
  ];
}

function expectNone(text: string, ...values: string[]) {
  for (const value of values) for (const form of encodings(value)) expect(text).not.toContain(form);
}

type Mode = (req: IncomingMessage, body: string, res: ServerResponse) => void;

/** A server that echoes requests back, in the ways some servers and proxies do. */
async function echoServer(modes: Record<string, Mode>) {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const prefix = `/${req.url!.split('/')[1]}`;
      const form = new URLSearchParams(body);
      if (req.url!.endsWith('/oauth/token') && !modes[`${prefix}/oauth/token`]) {
        if (form.get('client_secret') !== SECRET) return void res.writeHead(401).end();
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ token_type: 'Bearer', expires_in: 3600, access_token: TOKEN }));
      }
      const mode = modes[req.url!] ?? modes[prefix];
      if (!mode) return void res.writeHead(404).end();
      mode(req, body, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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

const shown = (e: unknown) => {
  const error = e as AuthError;
  return JSON.stringify({ message: error.message, hint: error.hint, json: error.toJSON(), stack: error.stack });
};

describe('no secret of the client in an error, whatever the server echoes', () => {
  it('a token endpoint echoing the form (raw, JSON, HTML) and the headers', async () => {
    const origin = await echoServer({
      '/json/oauth/token': (req, body, res) =>
        res.writeHead(400, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: 'invalid_request',
            error_description: `could not read ${body}`,
            received: Object.fromEntries(new URLSearchParams(body)),
            headers: req.headers,
          }),
        ),
      '/text/oauth/token': (_req, body, res) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`got ${body}`),
      '/html/oauth/token': (_req, body, res) => {
        const secret = new URLSearchParams(body).get('client_secret')!;
        const html = secret.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<p>Welcome! you sent <b>${html}</b></p>`);
      },
    });
    for (const prefix of ['/json', '/text', '/html']) {
      const error = await client(origin + prefix, { retry: { maxAttempts: 1 } })
        .authenticate()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(prefix === '/json' ? AuthError : ServiceError);
      const text = shown(error);
      expect(text).toContain('[REDACTED]');
      expectNone(text, SECRET);
    }
  });

  it('a service that answers 500 with the request headers (the bearer token) in JSON and in text', async () => {
    const origin = await echoServer({
      '/json': (req, _body, res) =>
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: `Server Error for ${req.headers.authorization}`, headers: req.headers })),
      '/text': (req, _body, res) =>
        res.writeHead(502, { 'content-type': 'text/plain' }).end(
          Object.entries(req.headers)
            .map(([k, v]) => `${k}: ${v}`)
            .join('\n'),
        ),
    });
    for (const prefix of ['/json', '/text']) {
      const error = await client(origin + prefix)
        .managementSystems()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceError);
      const text = shown(error);
      expect(text).toContain('[REDACTED]');
      expect(text).not.toContain('Bearer tK');
      expectNone(text, TOKEN, SECRET);
    }
  });

  it('a 2xx answer echoing the token keeps its data but not the token; the run redactor learns it', async () => {
    const origin = await echoServer({
      '/ok': (req, _body, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ data: [{ id: 1, name: `LMS ${req.headers.authorization}` }] })),
    });
    const redactor = new Redactor();
    const systems = await client(`${origin}/ok`, { redactor }).managementSystems();
    expect(systems).toEqual([{ id: 1, name: 'LMS Bearer [REDACTED]' }]);
    expect(redactor.text(`later: ${encodeURIComponent(TOKEN)} and ${SECRET}`)).toBe('later: [REDACTED] and [REDACTED]');
  });

  it('the legacy post: an error envelope echoing the api key is scrubbed, the price-reject key is kept', async () => {
    const origin = await echoServer({
      '/refused': (_req, body, res) => {
        const sent = JSON.parse(body) as { api_key: string };
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            status: 'ERROR',
            result: null,
            redirect_url: null,
            errors: [`api_key ${sent.api_key} (${encodeURIComponent(sent.api_key)}) is not active`],
          }),
        );
      },
      '/offers': (_req, body, res) => {
        const sent = JSON.parse(body) as { api_key: string };
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            status: 'OK',
            result: 'P',
            redirect_url: null,
            errors: null,
            lead_id: 5,
            price_reject: { api_key: sent.api_key, offers: [{ id: 1, price: 30, expires_in: 900 }] },
          }),
        );
      },
    });
    const refused = await client(`${origin}/refused`).legacyPost({ api_key: API_KEY, first_name: 'A' });
    expect(JSON.stringify(refused)).toContain('[REDACTED]');
    expectNone(JSON.stringify(refused), API_KEY);
    const offered = await client(`${origin}/offers`).legacyPost({ api_key: API_KEY, first_name: 'A' });
    expect(offered.price_reject?.api_key).toBe(API_KEY);
  });
});

describe("the token's lifetime", () => {
  const HOUR = 3_600_000;
  it.each([
    [3600, HOUR],
    ['7200', 2 * HOUR],
    [undefined, HOUR],
    [null, HOUR],
    [-5, HOUR],
    [0, HOUR],
    [Number.NaN, HOUR],
    ['soon', HOUR],
    [8.64e12 + 1, MAX_TOKEN_LIFETIME_MS],
    [1e300, MAX_TOKEN_LIFETIME_MS],
    [Number.POSITIVE_INFINITY, MAX_TOKEN_LIFETIME_MS],
  ])('expires_in %s gives %i ms', (expiresIn, expected) => {
    expect(tokenLifetimeMs(expiresIn)).toBe(expected);
  });

  it('an absurd expires_in from the service (past year 275760) is clamped, and the token works', async () => {
    for (const expiresIn of ['8640000000001', '1e300', '-3600', '"NaN"', '3599.5']) {
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            req.url === '/oauth/token'
              ? `{"token_type":"Bearer","expires_in":${expiresIn},"access_token":"tok-x"}`
              : '{"data":[]}',
          );
        });
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const c = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { now: () => 1_700_000_000_000 });
      const token = await c.authenticate();
      expect(new Date(token.expiresAt).toISOString()).toMatch(/^20\d\d-/);
      expect(token.expiresAt - token.obtainedAt).toBeGreaterThan(0);
      expect(token.expiresAt - token.obtainedAt).toBeLessThanOrEqual(MAX_TOKEN_LIFETIME_MS);
      expect(await c.managementSystems()).toEqual([]);
    }
  });
});

describe('a quick check (auth status): retries answers within a deadline, never a failed connection', () => {
  it('retries 503s until the deadline, then reports the answer (ServiceError), not unreachable', async () => {
    let calls = 0;
    const origin = await echoServer({
      '/busy': (_req, _body, res) => {
        calls++;
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"message":"Service Unavailable"}');
      },
    });
    const started = performance.now();
    const error = (await client(`${origin}/busy`, {
      retry: { maxAttempts: 50, baseDelayMs: 100, maxDelayMs: 400, maxTotalWaitMs: 60_000 },
      deadlineMs: 1500,
      timeoutMs: 1000,
      retryConnectionFailures: false,
    })
      .managementSystems()
      .catch((e: unknown) => e)) as ServiceError;
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.message).toContain('HTTP 503');
    expect(calls).toBeGreaterThan(1);
    expect(calls).toBeLessThan(50);
    // Generous: the deadline is 1.5 s; without it, 50 attempts would take far longer.
    expect(elapsed).toBeLessThan(15_000);
  });

  it('gives a refused connection one try only', async () => {
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const { port } = dead.address() as AddressInfo;
    await new Promise((r) => dead.close(r));
    const events: string[] = [];
    const error = await client(`http://127.0.0.1:${port}`, {
      retry: { maxAttempts: 5, baseDelayMs: 1 },
      deadlineMs: 3000,
      retryConnectionFailures: false,
      onEvent: (e) => events.push(e.type),
    })
      .managementSystems()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(events.filter((e) => e === 'network-error')).toHaveLength(1);
    expect(events).not.toContain('retry');
  });
});
