import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createApiClient,
  encodeQuery,
  type ApiClient,
  type ApiClientOptions,
  type ApiEvent,
} from '../../../src/api/client.js';
import { formatApiEvent } from '../../../src/api/events.js';
import { streamLeadIds } from '../../../src/jobs/lead-ids.js';
import type { CachedToken, TokenCache } from '../../../src/api/token.js';
import {
  AuthError,
  ConflictError,
  ExitCode,
  InputError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  RequestProblemError,
  ServiceError,
  ValidationError,
} from '../../../src/errors.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

type Handler = (req: Seen, res: ServerResponse, n: number) => void;

const SECRET = 'S3cretS3cretS3cretS3cretS3cretS3cretS3cr';
const servers: Server[] = [];
const clients: ApiClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A scripted service on 127.0.0.1: answers the token endpoint itself, everything else with `handler`. */
async function service(handler: Handler, options: { tokenTtl?: number; port?: number } = {}) {
  const seen: Seen[] = [];
  let tokens = 0;
  let calls = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      seen.push(s);
      if (req.url === '/oauth/token') {
        const form = new URLSearchParams(s.body);
        if (form.get('client_secret') !== SECRET) {
          res
            .writeHead(401, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: 'invalid_client', error_description: 'Client authentication failed' }));
          return;
        }
        tokens++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            token_type: 'Bearer',
            expires_in: options.tokenTtl ?? 3600,
            access_token: `tok${tokens}`,
          }),
        );
        return;
      }
      handler(s, res, ++calls);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    seen,
    api: () => seen.filter((s) => s.url !== '/oauth/token'),
    tokenCount: () => tokens,
  };
}

function client(baseUrl: string, options: Partial<ApiClientOptions> = {}) {
  const events: ApiEvent[] = [];
  const c = createApiClient({
    baseUrl,
    clientId: 'client-1',
    clientSecret: SECRET,
    retry: { baseDelayMs: 5, maxDelayMs: 20, maxTotalWaitMs: 2000, maxAttempts: 5 },
    onEvent: (e) => events.push(e),
    random: () => 0.5,
    ...options,
  });
  clients.push(c);
  return { c, events };
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

const SYSTEMS = { data: [{ id: 1, name: 'LMS One', extra: true }] };

describe('ApiClient: tokens', () => {
  it('obtains a token lazily, sends it as a bearer and reuses it', async () => {
    const svc = await service((_req, res) => json(res, 200, SYSTEMS));
    const { c } = client(svc.baseUrl);
    expect(svc.seen).toHaveLength(0);
    expect(await c.managementSystems()).toEqual([{ id: 1, name: 'LMS One', extra: true }]);
    await c.managementSystems();
    expect(svc.tokenCount()).toBe(1);
    const tokenRequest = svc.seen[0]!;
    expect(tokenRequest.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(tokenRequest.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'client-1',
      client_secret: SECRET,
    });
    expect(svc.api().map((s) => s.headers.authorization)).toEqual(['Bearer tok1', 'Bearer tok1']);
    expect(svc.api()[0]!.headers.accept).toBe('application/json');
  });

  it('renews the token once on a 401 and repeats the request', async () => {
    const svc = await service((req, res) =>
      req.headers.authorization === 'Bearer tok1'
        ? json(res, 401, { message: 'Unauthenticated.' })
        : json(res, 200, SYSTEMS),
    );
    const { c } = client(svc.baseUrl);
    expect(await c.managementSystems()).toHaveLength(1);
    expect(svc.tokenCount()).toBe(2);
    expect(svc.api().map((s) => s.headers.authorization)).toEqual(['Bearer tok1', 'Bearer tok2']);
  });

  it('gives up with an AuthError (exit 3) when the renewed token is refused too', async () => {
    const svc = await service((_req, res) => json(res, 401, { message: 'Unauthenticated.' }));
    const { c } = client(svc.baseUrl);
    const error = await c.managementSystems().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).exitCode).toBe(ExitCode.AUTH);
    expect((error as AuthError).message).toMatch(/refused the access token/);
    expect(svc.tokenCount()).toBe(2);
    expect(svc.api()).toHaveLength(2);
  });

  it('reports a wrong secret as an AuthError naming the OAuth error', async () => {
    const svc = await service((_req, res) => json(res, 200, SYSTEMS));
    const { c } = client(svc.baseUrl, { clientSecret: 'wrong-secret-wrong-secret' });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toContain('invalid_client');
    expect(error.hint).toMatch(/auth login/);
    expect(svc.api()).toHaveLength(0);
  });

  it('never quotes the secret when a token endpoint echoes the request back', async () => {
    const echo = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const status = req.url === '/bad/oauth/token' ? 400 : req.url === '/down/oauth/token' ? 500 : 200;
        res
          .writeHead(status, { 'content-type': status === 400 ? 'application/json' : 'text/plain' })
          .end(status === 400 ? JSON.stringify({ received: body }) : `received ${body}`);
      });
    });
    servers.push(echo);
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    for (const prefix of ['/bad', '/down', '/html']) {
      const { c } = client(origin + prefix, { retry: { maxAttempts: 1 } });
      const error = (await c.authenticate().catch((e: unknown) => e)) as AuthError | ServiceError;
      expect(error).toBeInstanceOf(prefix === '/bad' ? AuthError : ServiceError);
      const shown = JSON.stringify({ message: error.message, hint: error.hint, json: error.toJSON() });
      expect(shown).toContain('client_id=client-1');
      expect(shown).not.toContain(SECRET);
    }
  });

  it('says what to do when there are no credentials, without sending anything', async () => {
    const svc = await service((_req, res) => json(res, 200, SYSTEMS));
    const { c } = client(svc.baseUrl, { clientId: undefined, clientSecret: undefined });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.hint).toMatch(/LEADCTL_CLIENT_ID/);
    expect(svc.seen).toHaveLength(0);
  });

  it('uses and fills a token cache', async () => {
    const svc = await service((_req, res) => json(res, 200, SYSTEMS));
    const saved: CachedToken[] = [];
    const cache: TokenCache = {
      load: () => ({ accessToken: 'from-cache', obtainedAt: Date.now(), expiresAt: Date.now() + 3_600_000 }),
      save: (t) => saved.push(t),
      clear: () => {},
    };
    const { c } = client(svc.baseUrl, { tokenCache: cache });
    await c.managementSystems();
    expect(svc.api()[0]!.headers.authorization).toBe('Bearer from-cache');
    expect(svc.tokenCount()).toBe(0);
    const fresh = await c.authenticate();
    expect(fresh.accessToken).toBe('tok1');
    expect(saved.map((t) => t.accessToken)).toEqual(['tok1']);
    expect(fresh.expiresAt - fresh.obtainedAt).toBe(3_600_000);
  });
});

describe('ApiClient: retries', () => {
  it('retries 503 and 502 on a safe request, then succeeds', async () => {
    const svc = await service((_req, res, n) =>
      n === 1
        ? json(res, 503, { message: 'Service Unavailable' })
        : n === 2
          ? json(res, 502, {})
          : json(res, 200, SYSTEMS),
    );
    const { c, events } = client(svc.baseUrl);
    expect(await c.managementSystems()).toHaveLength(1);
    expect(svc.api()).toHaveLength(3);
    expect(events.filter((e) => e.type === 'retry').map((e) => (e as { reason: string }).reason)).toEqual([
      'HTTP 503',
      'HTTP 502',
    ]);
  });

  it('honours Retry-After on 429', async () => {
    const svc = await service((_req, res, n) =>
      n === 1 ? json(res, 429, { message: 'Too Many Attempts.' }, { 'retry-after': '1' }) : json(res, 200, SYSTEMS),
    );
    const { c, events } = client(svc.baseUrl);
    await c.managementSystems();
    const retry = events.find((e) => e.type === 'retry') as { delayMs: number };
    expect(retry.delayMs).toBeGreaterThanOrEqual(1000);
  });

  it('stops at the attempt limit with a ServiceError (exit 5) that says it retried', async () => {
    const svc = await service((_req, res) => json(res, 503, { message: 'Service Unavailable' }));
    const { c } = client(svc.baseUrl, {
      retry: { baseDelayMs: 1, maxDelayMs: 2, maxTotalWaitMs: 1000, maxAttempts: 3 },
    });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as ServiceError;
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.exitCode).toBe(ExitCode.SERVICE);
    expect(error.message).toMatch(/HTTP 503.*after 3 attempts/);
    expect(svc.api()).toHaveLength(3);
  });

  it('gives up on 429 when Retry-After exceeds the wait budget', async () => {
    const svc = await service((_req, res) =>
      json(res, 429, { message: 'Too Many Attempts.' }, { 'retry-after': '3600' }),
    );
    const { c } = client(svc.baseUrl);
    const error = (await c.managementSystems().catch((e: unknown) => e)) as RateLimitedError;
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error.exitCode).toBe(ExitCode.SERVICE);
    expect(error.message).toMatch(/asked to wait/);
    expect(svc.api()).toHaveLength(1);
  });

  it('retries a 500 on a safe request, then reports the service as unavailable (exit 5)', async () => {
    const svc = await service((_req, res) => json(res, 500, { message: 'Server Error' }));
    const { c } = client(svc.baseUrl, {
      retry: { baseDelayMs: 1, maxDelayMs: 2, maxTotalWaitMs: 1000, maxAttempts: 3 },
    });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as ServiceError;
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.exitCode).toBe(ExitCode.SERVICE);
    expect(svc.api()).toHaveLength(3);
  });

  it.each([
    [405, RequestProblemError, ExitCode.USAGE],
    [414, RequestProblemError, ExitCode.USAGE],
    [418, RequestProblemError, ExitCode.USAGE],
    [409, ConflictError, ExitCode.USAGE],
    [410, NotFoundError, ExitCode.USAGE],
    [404, NotFoundError, ExitCode.USAGE],
    [422, ValidationError, ExitCode.USAGE],
    [403, AuthError, ExitCode.AUTH],
  ])('does not retry HTTP %i: it is an answer about the request (%o, exit %i)', async (status, type, exit) => {
    const svc = await service((_req, res) => json(res, status, { message: 'No.' }));
    const { c } = client(svc.baseUrl);
    const error = (await c.managementSystems().catch((e: unknown) => e)) as Error & { exitCode: number };
    expect(error).toBeInstanceOf(type);
    expect(error.exitCode).toBe(exit);
    expect(error.message).not.toMatch(/unavailable/);
    expect(svc.api()).toHaveLength(1);
  });

  it('names the object of a 404 when the request names one, and the missing route otherwise', async () => {
    const svc = await service((_req, res) => json(res, 404, { message: 'Not Found' }));
    const { c } = client(svc.baseUrl);
    const named = (await c.lead(42).catch((e: unknown) => e)) as NotFoundError;
    expect(named.message).toMatch(/^lead 42 was not found/);
    const route = (await c.managementSystems().catch((e: unknown) => e)) as NotFoundError;
    expect(route.message).toMatch(/has no GET \/api\/v1\/resources\/management-systems/);
    expect(route.hint).toMatch(/base URL/);
  });

  it('retries a dropped connection on a safe request', async () => {
    const svc = await service((req, res, n) => (n === 1 ? req && res.socket?.destroy() : json(res, 200, SYSTEMS)));
    const { c } = client(svc.baseUrl);
    expect(await c.managementSystems()).toHaveLength(1);
    expect(svc.api()).toHaveLength(2);
  });

  it('reports a service that is not there as a NetworkError (exit 5) after the retries', async () => {
    const probe = await service(() => {});
    const baseUrl = probe.baseUrl;
    await new Promise((r) => servers.pop()!.close(r));
    const { c, events } = client(baseUrl, {
      retry: { baseDelayMs: 1, maxDelayMs: 2, maxTotalWaitMs: 1000, maxAttempts: 3 },
    });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.exitCode).toBe(ExitCode.SERVICE);
    expect(error.message).toMatch(/connection refused.*after 3 attempts/);
    expect(error.hint).toContain(baseUrl);
    expect(events.filter((e) => e.type === 'network-error')).toHaveLength(3);
  });

  it('times out a silent service per attempt (--timeout) and retries a safe request', async () => {
    const svc = await service((_req, res, n) => (n === 1 ? undefined : json(res, 200, SYSTEMS)));
    const { c, events } = client(svc.baseUrl, { timeoutMs: 200 });
    expect(await c.managementSystems()).toHaveLength(1);
    expect(events.find((e) => e.type === 'network-error')).toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
  });

  it('reports a timeout in words when the retries run out', async () => {
    const svc = await service(() => undefined);
    const { c } = client(svc.baseUrl, {
      timeoutMs: 100,
      retry: { baseDelayMs: 1, maxDelayMs: 1, maxTotalWaitMs: 100, maxAttempts: 2 },
    });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(/timed out waiting for the answer/);
    expect(error.hint).toMatch(/--timeout/);
  });

  it("passes on the body source's own failure, not as a network error, and does not retry it", async () => {
    const svc = await service((_req, res) => json(res, 200, {}));
    const { c } = client(svc.baseUrl);
    let produced = 0;
    const body = async function* () {
      produced++;
      yield '{"list":[';
      throw new InputError('bad line', { file: 'ssns.csv', row: 3 });
    };
    const error = await c.createList(body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toBe('ssns.csv, row 3: bad line');
    expect(produced).toBe(1);
  });

  it('re-creates a streamed body for each attempt', async () => {
    const svc = await service((_req, res, n) =>
      n === 1
        ? json(res, 503, {})
        : json(res, 201, {
            data: { id: 7, name: 'x', type: 'ZIP Codes', deleted_at: null, created_at: 'a', updated_at: 'b' },
          }),
    );
    const { c } = client(svc.baseUrl);
    let produced = 0;
    const body = async function* () {
      produced++;
      yield '{"name":"x","type":"ZIP Codes","list":[';
      for (let i = 0; i < 1000; i++) yield (i ? ',' : '') + JSON.stringify(String(10000 + i));
      yield ']}';
    };
    const list = await c.createList(body);
    expect(list.id).toBe(7);
    expect(produced).toBe(2);
    const sent = svc.api().map((s) => JSON.parse(s.body) as { list: string[] });
    expect(sent).toHaveLength(2);
    expect(sent[1]!.list).toHaveLength(1000);
    expect(svc.api()[1]!.headers['content-type']).toBe('application/json');
  });
});

describe('ApiClient: legacy post is never repeated once sent', () => {
  const accepted = { status: 'OK', result: 'A', redirect_url: 'https://example.invalid/r', errors: null };

  it('does not repeat a 503', async () => {
    const svc = await service((_req, res) => json(res, 503, { message: 'Service Unavailable' }));
    const { c } = client(svc.baseUrl);
    await expect(c.legacyPost({ api_key: 'k' })).rejects.toBeInstanceOf(ServiceError);
    expect(svc.api()).toHaveLength(1);
  });

  it('does not repeat after the connection dropped mid-request, and says why', async () => {
    const svc = await service((_req, res) => res.socket?.destroy());
    const { c } = client(svc.baseUrl);
    const error = (await c.legacyPost({ api_key: 'k' }).catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.hint).toMatch(/not repeated automatically/);
    expect(svc.api()).toHaveLength(1);
  });

  it('repeats when the connection was refused before sending', async () => {
    const probe = await service(() => {});
    const port = Number(new URL(probe.baseUrl).port);
    await new Promise((r) => servers.pop()!.close(r));
    let started: Promise<unknown> | undefined;
    const { c } = client(probe.baseUrl, {
      retry: { baseDelayMs: 50, maxDelayMs: 50, maxTotalWaitMs: 5000, maxAttempts: 5 },
      onEvent: (e) => {
        if (e.type === 'network-error' && !started)
          started = service((_req, res) => json(res, 200, accepted), { port });
      },
    });
    const result = await c.legacyPost({ api_key: 'k' });
    expect(result).toMatchObject({ status: 'OK', result: 'A', httpStatus: 200 });
    const svc = (await started) as Awaited<ReturnType<typeof service>>;
    expect(svc.api()).toHaveLength(1);
    expect(svc.api()[0]!.headers.authorization).toBeUndefined();
  });

  it('returns the ERROR envelope whatever the HTTP status', async () => {
    const svc = await service((_req, res) =>
      json(res, 422, { status: 'ERROR', result: null, redirect_url: null, errors: ['Invalid price reject offer.'] }),
    );
    const { c } = client(svc.baseUrl);
    const result = await c.priceRejectAccept({ api_key: 'k', price_reject_offer_id: 9 });
    expect(result).toMatchObject({ status: 'ERROR', errors: ['Invalid price reject offer.'], httpStatus: 422 });
    expect(JSON.parse(svc.api()[0]!.body)).toEqual({ api_key: 'k', price_reject_offer_id: 9 });
  });
});

describe('ApiClient: requests and answers', () => {
  it('sends map_ids[] repeated and the lead-ids query', async () => {
    const svc = await service((req, res) =>
      req.url.startsWith('/api/v1/lead-data/leads/')
        ? json(res, 200, { data: { m1: 5, m2: 10000 } })
        : json(res, 200, {
            data: [1, 2],
            links: { first: null, last: null, prev: null, next: null },
            meta: { path: 'p', per_page: 2, next_cursor: null, prev_cursor: null },
          }),
    );
    const { c } = client(svc.baseUrl);
    expect(await c.lead(5, ['m1', 'm2'])).toEqual({ m1: 5, m2: 10000 });
    expect(svc.api()[0]!.url).toBe('/api/v1/lead-data/leads/5?map_ids[]=m1&map_ids[]=m2');
    const page = await c.leadIds({ date: '2024-01-05', per_page: 2, cursor: 'a b' });
    expect(page.data).toEqual([1, 2]);
    expect(svc.api()[1]!.url).toBe('/api/v1/lead-data/lead-ids?date=2024-01-05&per_page=2&cursor=a%20b');
  });

  it('follows lead-id cursors to the end', async () => {
    const svc = await service((req, res) => {
      const cursor = new URL(req.url, 'http://x').searchParams.get('cursor');
      const page =
        cursor === null
          ? { data: [1, 2], next: 'c2' }
          : cursor === 'c2'
            ? { data: [3], next: null }
            : { data: [], next: null };
      json(res, 200, {
        data: page.data,
        links: { first: null, last: null, prev: null, next: null },
        meta: { path: 'p', per_page: 2, next_cursor: page.next, prev_cursor: null },
      });
    });
    const { c } = client(svc.baseUrl);
    const ids: number[] = [];
    for await (const page of streamLeadIds(c, { perPage: 2, all: true }, { pages: 0, ids: 0 })) ids.push(...page);
    expect(ids).toEqual([1, 2, 3]);
  });

  it('pages through lists', async () => {
    const list = (id: number) => ({
      id,
      name: `l${id}`,
      type: 'ZIP Codes',
      deleted_at: null,
      created_at: 'c',
      updated_at: 'u',
    });
    const svc = await service((req, res) => {
      const page = Number(new URL(req.url, 'http://x').searchParams.get('page'));
      json(res, 200, {
        current_page: page,
        data: page === 1 ? [list(1), list(2)] : [list(3)],
        first_page_url: 'f',
        from: 1,
        last_page: 2,
        last_page_url: 'l',
        links: [],
        next_page_url: page === 1 ? 'n' : null,
        path: 'p',
        per_page: 2,
        prev_page_url: null,
        to: 2,
        total: 3,
      });
    });
    const { c } = client(svc.baseUrl);
    const ids: number[] = [];
    for await (const l of c.allLists()) ids.push(l.id);
    expect(ids).toEqual([1, 2, 3]);
    expect(svc.api().map((s) => s.url)).toEqual([
      '/api/v1/lead-management/lists?page=1',
      '/api/v1/lead-management/lists?page=2',
    ]);
  });

  it('maps 422 to a ValidationError carrying the field errors', async () => {
    const svc = await service((_req, res) =>
      json(res, 422, {
        message: 'The given data was invalid.',
        errors: { 'list.3': ['row 4: invalid SSN'], name: ['too long'] },
      }),
    );
    const { c } = client(svc.baseUrl);
    const error = (await c
      .createList({ name: 'n', type: 'Social Security Numbers', list: ['1'] })
      .catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.exitCode).toBe(ExitCode.USAGE);
    expect(error.fieldErrors).toEqual({ 'list.3': ['row 4: invalid SSN'], name: ['too long'] });
    expect(error.message).toMatch(/2 field errors; first: list\.3: row 4: invalid SSN/);
    expect(svc.api()).toHaveLength(1);
  });

  it('maps 404 to NotFoundError and 403 to AuthError', async () => {
    const svc = await service((req, res) =>
      req.url.endsWith('/99')
        ? json(res, 404, { message: 'Not Found' })
        : json(res, 403, { message: 'This action is unauthorized.' }),
    );
    const { c } = client(svc.baseUrl);
    await expect(c.getList(99)).rejects.toBeInstanceOf(NotFoundError);
    const forbidden = (await c.dictionary().catch((e: unknown) => e)) as AuthError;
    expect(forbidden).toBeInstanceOf(AuthError);
    expect(forbidden.message).toMatch(/403/);
  });

  it('maps 413 to a ValidationError (exit 2) that says to send less, without retrying', async () => {
    const svc = await service((_req, res) =>
      json(res, 413, { message: 'The request body is larger than the 50 MB limit.' }),
    );
    const { c } = client(svc.baseUrl);
    const error = (await c.upsertCustomerBatch({ customers: [] } as never).catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.exitCode).toBe(ExitCode.USAGE);
    expect(error.message).toMatch(/too large \(HTTP 413: The request body is larger/);
    expect(error.hint).toMatch(/fewer records per request/);
    expect(svc.api()).toHaveLength(1);
  });

  it('shows an unknown error body as it is', async () => {
    const svc = await service((_req, res) => res.writeHead(418, { 'content-type': 'text/plain' }).end('I am a teapot'));
    const { c } = client(svc.baseUrl);
    await expect(c.managementSystems()).rejects.toThrow(/HTTP 418: I am a teapot/);
  });

  it('accepts upsert answers of any 2xx shape, and tells created from updated', async () => {
    const svc = await service((_req, res, n) =>
      n === 1 ? json(res, 201, { data: { customer_id: 'c1' } }) : res.writeHead(204).end(),
    );
    const { c } = client(svc.baseUrl);
    const created = await c.upsertLoan('c 1/x', {
      loan_id: 'l1',
      lead_id: 1,
      loan_amount: 100,
      applied_at: '2024-01-01T00:00:00Z',
    } as never);
    expect(created).toMatchObject({ status: 201, created: true, data: { customer_id: 'c1' } });
    expect(svc.api()[0]!.url).toBe('/api/v1/loan-performance/customers/c%201%2Fx/loans');
    const updated = await c.upsertPayment('c1', { loan_id: 'l1', lead_id: 1, payment_id: 'p1' } as never);
    expect(updated).toMatchObject({ status: 204, created: false, data: undefined });
  });

  it('refuses a 2xx answer that lacks what the caller needs, after retrying it like a 5xx', async () => {
    const svc = await service((_req, res) => json(res, 200, { items: [] }));
    const { c } = client(svc.baseUrl);
    const error = (await c.managementSystems().catch((e: unknown) => e)) as ServiceError;
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.message).toMatch(/JSON of another shape \(data: .*expected array/);
    expect(svc.api()).toHaveLength(5);
  });

  it('keeps the base URL path prefix', async () => {
    const svc = await service((_req, res) => json(res, 200, { data: { pass: true } }));
    const { c } = client(svc.baseUrl + '/prefix/', {});
    // the token endpoint lives under the prefix too; our scripted service only knows /oauth/token
    await c.dryRun({ email: 'a@b.co' } as never).catch(() => undefined);
    expect(svc.seen[0]!.url).toBe('/prefix/oauth/token');
  });

  it('never mentions the secret or a token in its events', async () => {
    const svc = await service((_req, res, n) => (n === 1 ? json(res, 401, {}) : json(res, 200, SYSTEMS)));
    const { c, events } = client(svc.baseUrl);
    await c.managementSystems();
    const text = events.map(formatApiEvent).join('\n');
    expect(text).toContain('POST /oauth/token → 200');
    expect(text).toContain('GET /api/v1/resources/management-systems → 401');
    expect(text).not.toContain(SECRET);
    expect(text).not.toMatch(/tok\d/);
  });
});

describe('encodeQuery', () => {
  it('encodes values and keeps [] in keys', () => {
    expect(
      encodeQuery([
        ['map_ids[]', 'm 1'],
        ['a&b', 'c=d'],
      ]),
    ).toBe('?map_ids[]=m%201&a%26b=c%3Dd');
    expect(encodeQuery([])).toBe('');
  });
});

describe('ApiClient: what each request carries', () => {
  const LIST = { id: 7, name: 'x', type: 'ZIP Codes', deleted_at: null, created_at: 'a', updated_at: 'b' };
  const page = (data: unknown[], extra: Record<string, unknown> = {}) => ({
    current_page: 1,
    data,
    first_page_url: 'f',
    from: 1,
    last_page: 1,
    last_page_url: 'l',
    links: [],
    next_page_url: null,
    path: 'p',
    per_page: 2,
    prev_page_url: null,
    to: 1,
    total: 1,
    ...extra,
  });

  it('accept JSON always; the user agent when given; a content type only with a body; a bearer only where due', async () => {
    const svc = await service((req, res) =>
      req.url === '/api/legacy'
        ? json(res, 200, { status: 'OK', result: 'A', redirect_url: null, errors: null })
        : json(res, 200, SYSTEMS),
    );
    const { c } = client(svc.baseUrl, { userAgent: 'leadctl/9.9 (test)' });
    await c.managementSystems();
    await c.legacyPost({ api_key: 'campaign-key-123' });
    const [token, get, legacy] = svc.seen;
    for (const s of [token!, get!, legacy!]) {
      expect(s.headers.accept).toBe('application/json');
      expect(s.headers['user-agent']).toBe('leadctl/9.9 (test)');
    }
    expect(token!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(token!.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'client-1',
      client_secret: SECRET,
    });
    expect(token!.headers.authorization).toBeUndefined();
    expect(get!.headers['content-type']).toBeUndefined();
    expect(get!.headers.authorization).toBe('Bearer tok1');
    expect(legacy!.headers['content-type']).toBe('application/json');
    expect(legacy!.headers.authorization).toBeUndefined();

    const plain = await service((_req, res) => json(res, 200, SYSTEMS));
    await client(plain.baseUrl).c.managementSystems();
    expect(plain.seen[1]!.headers['user-agent']).not.toBe('leadctl/9.9 (test)');
  });

  it('a base URL with a path and trailing slashes: every request below that path', async () => {
    const svc = await service((_req, res) => json(res, 200, SYSTEMS));
    const { c } = client(`${svc.baseUrl}/tenant//`);
    await c.managementSystems().catch(() => undefined);
    // The scripted service knows only /oauth/token: the token request under the prefix fails (and is retried).
    expect(new Set(svc.seen.map((s) => s.url))).toEqual(new Set(['/tenant/oauth/token']));
    expect(c.baseUrl).toBe(`${svc.baseUrl}/tenant`);
  });

  it('lead ids: each filter only when given, in order', async () => {
    const svc = await service((_req, res) =>
      json(res, 200, {
        data: [],
        links: { first: null, last: null, prev: null, next: null },
        meta: { path: 'p', per_page: 2, next_cursor: null, prev_cursor: null },
      }),
    );
    const { c } = client(svc.baseUrl);
    await c.leadIds();
    await c.leadIds({ datetime: '2024-01-05T10:00:00Z' });
    await c.leadIds({ date: '2024-01-05', datetime: 'd', per_page: 0, cursor: '' });
    expect(svc.api().map((s) => s.url)).toEqual([
      '/api/v1/lead-data/lead-ids',
      '/api/v1/lead-data/lead-ids?datetime=2024-01-05T10%3A00%3A00Z',
      '/api/v1/lead-data/lead-ids?date=2024-01-05&datetime=d&per_page=0&cursor=',
    ]);
  });

  it('updates a list with PUT under its id, and names it when the service does not know it', async () => {
    const svc = await service((req, res) =>
      req.url.startsWith('/api/v1/lead-management/lists/404')
        ? json(res, 404, { message: 'Not Found' })
        : req.url.startsWith('/api/v1/lead-management/lists?')
          ? json(res, 200, page([]))
          : json(res, 200, { data: LIST }),
    );
    const { c } = client(svc.baseUrl);
    expect(await c.updateList(7, { name: 'x', type: 'ZIP Codes', list: ['1'] })).toEqual(LIST);
    expect(svc.api()[0]).toMatchObject({ method: 'PUT', url: '/api/v1/lead-management/lists/7' });
    const error = (await c
      .updateList(404, { name: 'x', type: 'ZIP Codes', list: [] })
      .catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toMatch(/^list 404 was not found/);
  });

  it('every list, page by page, telling each page; it stops at the last page, an empty page or no next page', async () => {
    let script: Array<Record<string, unknown>> = [];
    const svc = await service((req, res) => {
      const n = Number(new URL(req.url, 'http://x').searchParams.get('page'));
      json(res, 200, script[n - 1] ?? page([]));
    });
    const { c } = client(svc.baseUrl);
    const collect = async () => {
      const seen: Array<[number, number]> = [];
      const ids: number[] = [];
      for await (const l of c.allLists({ onPage: (p, last) => seen.push([p, last]) })) ids.push(l.id);
      return { ids, seen };
    };
    const item = (id: number) => ({ ...LIST, id });
    script = [
      page([item(1)], { last_page: 3, next_page_url: 'n' }),
      page([item(2)], { last_page: 3, next_page_url: 'n' }),
      page([item(3)], { last_page: 3, next_page_url: 'n' }),
      page([item(4)], { last_page: 3, next_page_url: 'n' }),
    ];
    expect(await collect()).toEqual({
      ids: [1, 2, 3],
      seen: [
        [1, 3],
        [2, 3],
        [3, 3],
      ],
    });
    script = [page([item(1)], { last_page: 5, next_page_url: 'n' }), page([], { last_page: 5, next_page_url: 'n' })];
    expect((await collect()).seen).toEqual([
      [1, 5],
      [2, 5],
    ]);
    script = [page([item(1)], { last_page: 5, next_page_url: null }), page([item(2)], { last_page: 5 })];
    expect((await collect()).ids).toEqual([1]);
  });

  it('an upsert answered with a body of another shape keeps it raw, without data', async () => {
    const svc = await service((_req, res) => json(res, 200, { data: 'not an object' }));
    const { c } = client(svc.baseUrl);
    expect(await c.upsertCustomer({ customer_id: 'c1' } as never)).toEqual({
      status: 200,
      created: false,
      data: undefined,
      raw: { data: 'not an object' },
    });
  });

  it('the body of an error answer: JSON when it says or looks so, else its text, else nothing', async () => {
    const answers: Array<[string | undefined, string]> = [
      [undefined, '{"message":"looks like JSON"}'],
      ['application/json', '{"message":'],
      ['text/plain', '  [ "bracketed" ]'],
      ['text/plain', 'just text'],
      ['application/json', ''],
    ];
    const svc = await service((_req, res, n) => {
      const [type, body] = answers[n - 1]!;
      res.writeHead(418, type ? { 'content-type': type } : {}).end(body);
    });
    const { c } = client(svc.baseUrl);
    const messages: string[] = [];
    for (let i = 0; i < answers.length; i++)
      messages.push(((await c.dictionary().catch((e: unknown) => e)) as Error).message);
    expect(messages.map((m) => /HTTP 418(.*): the request does not fit/.exec(m)?.[1])).toEqual([
      ': looks like JSON',
      ': {"message":',
      ': ["bracketed"]',
      ': just text',
      '',
    ]);
  });

  it('a 401 renewal is not an attempt; a second 401 stops, counting one attempt', async () => {
    const svc = await service((_req, res, n) => (n === 1 ? json(res, 401, {}) : json(res, 200, SYSTEMS)));
    const { c } = client(svc.baseUrl);
    const res = await c.send({
      method: 'GET',
      path: '/api/v1/resources/management-systems',
      auth: 'bearer',
      repeat: 'safe',
    });
    expect(res.attempts).toBe(1);
    expect(svc.api().map((s) => s.headers.authorization)).toEqual(['Bearer tok1', 'Bearer tok2']);
    const refusing = await service((_req, res) => json(res, 401, { message: 'Unauthenticated.' }));
    const error = (await client(refusing.baseUrl)
      .c.managementSystems()
      .catch((e: unknown) => e)) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.http).toMatchObject({ status: 401, attempts: 1 });
    expect(refusing.api()).toHaveLength(2);
  });

  it('a 401 without a bearer (the legacy post) is not retried with a token', async () => {
    const svc = await service((_req, res) => json(res, 401, { message: 'Bad key.' }));
    const { c } = client(svc.baseUrl);
    const error = (await c.legacyPost({ api_key: 'campaign-key-123' }).catch((e: unknown) => e)) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toMatch(/refused the credentials of POST \/api\/legacy/);
    expect(svc.tokenCount()).toBe(0);
    expect(svc.api()).toHaveLength(1);
  });

  it('Retry-After is heeded for 429 and 503 only', async () => {
    const delays = async (status: number) => {
      const svc = await service((_req, res, n) =>
        n === 1 ? json(res, status, {}, { 'retry-after': '1' }) : json(res, 200, SYSTEMS),
      );
      const { c, events } = client(svc.baseUrl);
      await c.managementSystems();
      return events.filter((e) => e.type === 'retry').map((e) => (e as { delayMs: number }).delayMs);
    };
    expect((await delays(503))[0]).toBeGreaterThanOrEqual(1000);
    const [after500] = await delays(500);
    expect(after500).toBeLessThan(1000);
  });

  it('a malformed 2xx is retried with its problem in the retry line, and given up with the reason', async () => {
    const svc = await service((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>'));
    const { c, events } = client(svc.baseUrl, {
      retry: { baseDelayMs: 1, maxDelayMs: 1, maxTotalWaitMs: 100, maxAttempts: 2 },
    });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as ServiceError;
    expect(error).toBeInstanceOf(ServiceError);
    expect(events.filter((e) => e.type === 'retry')).toMatchObject([{ reason: 'HTTP 200, not JSON', attempt: 1 }]);
    const giveUp = events.find((e) => e.type === 'give-up') as { attempts: number; reason: string; path: string };
    expect(giveUp).toMatchObject({ attempts: 2, path: '/api/v1/resources/management-systems' });
    expect(giveUp.reason).not.toBe('');
    expect(giveUp.reason).toMatch(/2 attempts/);
    expect(error.message).toContain('after 2 attempts');
  });

  it('tells each attempt: method, path with query, status, attempt number and bytes sent', async () => {
    const svc = await service((_req, res, n) =>
      n === 1 ? json(res, 503, {}) : json(res, 200, { data: { pass: true } }),
    );
    const { c, events } = client(svc.baseUrl);
    await c.send({
      method: 'POST',
      path: '/api/v1/lead-processing/dry-run',
      query: [['x', 1]],
      body: { a: 'é' },
      auth: 'bearer',
      repeat: 'safe',
    });
    const responses = events.filter((e) => e.type === 'response' && e.path !== '/oauth/token');
    expect(responses).toMatchObject([
      { method: 'POST', path: '/api/v1/lead-processing/dry-run?x=1', status: 503, attempt: 1, bytes: 10 },
      { method: 'POST', path: '/api/v1/lead-processing/dry-run?x=1', status: 200, attempt: 2, bytes: 10 },
    ]);
  });

  it('a network failure is told with its code and attempt, and a failure that is not retried is thrown at once', async () => {
    const svc = await service((_req, res) => res.socket?.destroy());
    const { c, events } = client(svc.baseUrl, { retryConnectionFailures: false });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.http).toMatchObject({ attempts: 1 });
    expect(events.filter((e) => e.type === 'network-error')).toMatchObject([
      { method: 'GET', path: '/api/v1/resources/management-systems', attempt: 1 },
    ]);
    expect(svc.api()).toHaveLength(1);
  });

  it('a dispatcher of the caller is used and left open', async () => {
    const { Agent } = await import('undici');
    const agent = new Agent();
    const svc = await service((_req, res) => json(res, 200, SYSTEMS));
    const { c } = client(svc.baseUrl, { dispatcher: agent });
    await c.managementSystems();
    await c.close();
    expect(agent.closed).toBe(false);
    await agent.close();
  });

  it('no client id or no secret: an AuthError before anything is sent', async () => {
    const svc = await service((_req, res) => json(res, 200, SYSTEMS));
    const noSecret = (await client(svc.baseUrl, { clientSecret: undefined })
      .c.managementSystems()
      .catch((e: unknown) => e)) as AuthError;
    expect(noSecret).toBeInstanceOf(AuthError);
    expect(noSecret.message).toBe(
      'no client secret is available for client client-1, and there is no valid cached token',
    );
    expect(noSecret.hint).toMatch(/--no-save-secret/);
    const noId = (await client(svc.baseUrl, { clientId: undefined })
      .c.authenticate()
      .catch((e: unknown) => e)) as AuthError;
    expect(noId).toBeInstanceOf(AuthError);
    expect(noId.message).toBe(`no client id for ${svc.baseUrl}`);
    expect(svc.seen).toHaveLength(0);
  });

  it("the token's life is counted from when it was asked for", async () => {
    let now = 5_000_000;
    const svc = await service((_req, res) => json(res, 200, SYSTEMS), { tokenTtl: 120 });
    const { c } = client(svc.baseUrl, {
      now: () => {
        const at = now;
        now += 1000;
        return at;
      },
    });
    const token = await c.authenticate();
    expect(token.obtainedAt).toBe(5_000_000);
    expect(token.expiresAt).toBe(5_000_000 + 120_000);
  });
});

describe('ApiClient: where lists are served', () => {
  const LIST = { id: 7, name: 'x', type: 'ZIP Codes', deleted_at: null, created_at: 'a', updated_at: 'b' };
  const EMPTY_PAGE = {
    current_page: 1,
    data: [],
    first_page_url: 'f',
    from: null,
    last_page: 1,
    last_page_url: 'l',
    links: [],
    next_page_url: null,
    path: 'p',
    per_page: 2,
    prev_page_url: null,
    to: null,
    total: 0,
  };
  /** A service with lists only under `prefix`; list 404 is unknown there. */
  const listsUnder = (prefix: string) =>
    service((req, res) => {
      const path = new URL(req.url, 'http://x').pathname;
      if (!path.startsWith(prefix)) return json(res, 404, { message: 'Not Found' });
      if (path === `${prefix}/404`) return json(res, 404, { message: 'No query results.' });
      if (path === prefix && req.method === 'GET') return json(res, 200, EMPTY_PAGE);
      json(res, 200, { data: LIST });
    });
  const memory = (initial?: string) => {
    const set: string[] = [];
    let current = initial;
    return {
      set,
      get: () => current,
      setter: (path: string) => {
        current = path;
        set.push(path);
      },
    };
  };

  it('falls back to list-manager when lead-management has no such route, tells it, and remembers it', async () => {
    const svc = await listsUnder('/api/v1/list-manager/lists');
    const mem = memory();
    const { c, events } = client(svc.baseUrl, { listsMemory: { get: mem.get, set: mem.setter } });
    expect(c.listsPath()).toBeUndefined();
    expect(await c.getList(7)).toEqual(LIST);
    expect(svc.api().map((s) => s.url)).toEqual([
      '/api/v1/lead-management/lists/7',
      '/api/v1/lead-management/lists?page=1',
      '/api/v1/list-manager/lists/7',
    ]);
    expect(events.filter((e) => e.type === 'lists-path')).toEqual([
      { type: 'lists-path', path: '/api/v1/lead-management/lists', reason: 'route missing (HTTP 404)' },
    ]);
    expect(mem.set).toEqual(['/api/v1/list-manager/lists']);
    expect(c.listsPath()).toBe('/api/v1/list-manager/lists');
    // The next request goes straight there; nothing is remembered again.
    await c.getList(8);
    expect(svc.api().at(-1)!.url).toBe('/api/v1/list-manager/lists/8');
    expect(mem.set).toHaveLength(1);
  });

  it('starts with the remembered path, and does not remember it again', async () => {
    const svc = await listsUnder('/api/v1/list-manager/lists');
    const mem = memory('/api/v1/list-manager/lists');
    const { c } = client(svc.baseUrl, { listsMemory: { get: mem.get, set: mem.setter } });
    expect(c.listsPath()).toBe('/api/v1/list-manager/lists');
    await c.createList({ name: 'x', type: 'ZIP Codes', list: ['1'] });
    expect(svc.api().map((s) => `${s.method} ${s.url}`)).toEqual(['POST /api/v1/list-manager/lists']);
    expect(mem.set).toEqual([]);
  });

  it('an unknown list under a route that exists is that list unknown: no fallback', async () => {
    const svc = await listsUnder('/api/v1/lead-management/lists');
    const { c, events } = client(svc.baseUrl);
    const error = (await c.getList(404).catch((e: unknown) => e)) as NotFoundError;
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toMatch(/^list 404 was not found/);
    expect(svc.api().map((s) => s.url)).toEqual([
      '/api/v1/lead-management/lists/404',
      '/api/v1/lead-management/lists?page=1',
    ]);
    expect(events.some((e) => e.type === 'lists-path')).toBe(false);
  });

  it('a probe that fails otherwise leaves the first answer standing', async () => {
    const svc = await service((req, res) =>
      req.url.includes('?page=') ? json(res, 403, { message: 'Forbidden' }) : json(res, 404, { message: 'Not Found' }),
    );
    const { c } = client(svc.baseUrl);
    const error = (await c.getList(5).catch((e: unknown) => e)) as NotFoundError;
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.message).toMatch(/^list 5 was not found/);
    expect(svc.api()).toHaveLength(2);
  });

  it('lists under neither prefix: says which were tried (exit 2) and points at --lists-path', async () => {
    const svc = await listsUnder('/somewhere/else');
    const { c } = client(svc.baseUrl);
    const error = (await c.listPage(1).catch((e: unknown) => e)) as NotFoundError;
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.exitCode).toBe(ExitCode.USAGE);
    expect(error.message).toBe(
      `the service at ${svc.baseUrl} serves no lists under /api/v1/lead-management/lists or /api/v1/list-manager/lists (HTTP 404: no such route)`,
    );
    expect(error.hint).toMatch(/--lists-path/);
    expect(error.details).toEqual({ tried: ['/api/v1/lead-management/lists', '/api/v1/list-manager/lists'] });
    // A 404 of the collection itself needs no probe.
    expect(svc.api()).toHaveLength(2);
  });

  it('--lists-path: there and nowhere else, never remembered', async () => {
    const svc = await listsUnder('/custom/lists');
    const mem = memory('/api/v1/list-manager/lists');
    const { c } = client(svc.baseUrl, { listsPath: '/custom/lists', listsMemory: { get: mem.get, set: mem.setter } });
    expect(c.listsPath()).toBe('/custom/lists');
    expect(await c.getList(7)).toEqual(LIST);
    const error = await c.getList(404).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(svc.api().map((s) => s.url)).toEqual(['/custom/lists/7', '/custom/lists/404']);
    expect(mem.set).toEqual([]);
  });
});

describe('ApiClient: a deadline for every request of a quick check', () => {
  it('gives up a retry that could not finish in time, saying so', async () => {
    const svc = await service((_req, res) => json(res, 503, {}));
    const { c, events } = client(svc.baseUrl, {
      deadlineMs: 400,
      retry: { baseDelayMs: 1000, maxDelayMs: 1000, maxTotalWaitMs: 60_000, maxAttempts: 5 },
    });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as ServiceError;
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.message).toContain('no time left for another attempt within 400 ms');
    expect(events.find((e) => e.type === 'give-up')).toMatchObject({
      reason: 'no time left for another attempt within 400 ms',
    });
    expect(svc.api()).toHaveLength(1);
  });
});
