import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type ApiClientOptions } from '../../../src/api/client.js';
import { readAnswerBody } from '../../../src/api/read-answer.js';
import { MAX_ANSWER_BYTES } from '../../../src/api/status.js';
import { ExitCode, NetworkError, ServiceError } from '../../../src/errors.js';
import {
  HOSTILE_CLIENT_ID,
  HOSTILE_CLIENT_SECRET,
  startHostileServer,
  type HostileServer,
  type HostileServerOptions,
} from '../../helpers/hostile-server.js';

/**
 * How the client reads an answer (src/api/read-answer.ts, and the checks of src/api/status.ts):
 * a 2xx that is not a well-formed answer, an answer that never ends, one too large to read.
 */

const servers: HostileServer[] = [];
const plain: Server[] = [];
const clients: ApiClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(plain.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function hostile(options: HostileServerOptions) {
  const s = await startHostileServer(options);
  servers.push(s);
  return s;
}

function client(baseUrl: string, options: Partial<ApiClientOptions> = {}) {
  const c = createApiClient({
    baseUrl,
    clientId: HOSTILE_CLIENT_ID,
    clientSecret: HOSTILE_CLIENT_SECRET,
    retry: { baseDelayMs: 5, maxDelayMs: 20, maxTotalWaitMs: 2000, maxAttempts: 3 },
    random: () => 0.5,
    ...options,
  });
  clients.push(c);
  return c;
}

const batch = { customers: [{ customer_id: 'C1', loans: [] }] } as never;

describe('the client and a 2xx that is not an answer', () => {
  it.each(['html-200', 'empty-200', 'truncated-json-200', 'wrong-shape-200', 'text-plain-200'] as const)(
    '%s to a batch: retried like a 5xx, then a ServiceError (exit 5) naming what came back',
    async (mode) => {
      const s = await hostile({ mode });
      const error = (await client(s.baseUrl)
        .upsertCustomerBatch(batch)
        .catch((e: unknown) => e)) as ServiceError;
      expect(error).toBeInstanceOf(ServiceError);
      expect(error.exitCode).toBe(ExitCode.SERVICE);
      expect(s.faulted()).toHaveLength(3);
      expect(error.message).toMatch(/POST \/api\/v1\/loan-performance\/batches\/customers/);
      expect(error.message).toMatch(/not a well-formed answer of the service \(HTTP 200, /);
      expect(error.message).toMatch(/after 3 attempts/);
      expect(error.hint).toMatch(/captive portal/);
      expect(error.details).toMatchObject({ status: 200, attempts: 3 });
      expect(error.http).toMatchObject({ method: 'POST', status: 200, attempts: 3 });
    },
  );

  it('quotes the start of a portal page, escaped and cut, with its content type and size', async () => {
    const s = await hostile({ mode: 'html-200' });
    const error = (await client(s.baseUrl)
      .upsertCustomerBatch(batch)
      .catch((e: unknown) => e)) as ServiceError;
    expect(error.message).toContain('content type text/html; charset=utf-8');
    expect(error.message).toMatch(/\d+ bytes\): not JSON, starting "<!DOCTYPE html>\\r\\n<html><head>.*…"/);
    expect(error.message).not.toMatch(/[\r\n]/);
    expect(error.message).not.toContain('</html>');
  });

  it('says what the problem is for each kind', async () => {
    const words: Record<string, RegExp> = {
      'empty-200': /no content type, 0 bytes\): an empty body/,
      'truncated-json-200': /JSON that does not parse \(cut short\?\)/,
      'wrong-shape-200': /JSON of another shape \(\(root\): .*\), starting "\[\\"ok\\"\]"/,
      'text-plain-200': /content type text\/plain, 11 bytes\): not JSON, starting "\{\\"data\\":\{\}\}"/,
    };
    for (const [mode, pattern] of Object.entries(words)) {
      const s = await hostile({ mode: mode as never });
      const error = (await client(s.baseUrl, { retry: { maxAttempts: 1 } })
        .upsertCustomerBatch(batch)
        .catch((e: unknown) => e)) as ServiceError;
      expect(error.message, mode).toMatch(pattern);
    }
  });

  it('applies the rule to every command: upserts, lists, lead data, dry run, systems, the token', async () => {
    const s = await hostile({ mode: 'html-200' });
    const c = client(s.baseUrl, { retry: { maxAttempts: 1 } });
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['upsert', () => c.upsertCustomer({ customer_id: 'C1' } as never)],
      ['list create', () => c.createList({ name: 'n', type: 'ssn', list: [] } as never)],
      ['list page', () => c.listPage(1)],
      ['lead ids', () => c.leadIds({ date: '2026-01-01' })],
      ['lead', () => c.lead(5)],
      ['dictionary', () => c.dictionary()],
      ['dry run', () => c.dryRun({ email: 'a@b.co' } as never)],
      ['systems', () => c.managementSystems()],
    ];
    for (const [name, call] of calls) {
      const error = await call().catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(ServiceError);
      expect((error as ServiceError).message, name).toMatch(/not a well-formed answer/);
    }
    const tokenSide = await hostile({ mode: 'html-200', faultToken: true });
    const error = (await client(tokenSide.baseUrl)
      .authenticate()
      .catch((e: unknown) => e)) as ServiceError;
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.message).toMatch(/POST \/oauth\/token is not a well-formed answer.*after 3 attempts/);
    expect(JSON.stringify(error.toJSON())).not.toContain(HOSTILE_CLIENT_SECRET);
  });

  it('never repeats the legacy post on a malformed 2xx, and says it may have taken effect', async () => {
    const s = await hostile({ mode: 'html-200' });
    const error = (await client(s.baseUrl)
      .legacyPost({ api_key: 'k' })
      .catch((e: unknown) => e)) as ServiceError;
    expect(error).toBeInstanceOf(ServiceError);
    expect(s.faulted()).toHaveLength(1);
    expect(error.hint).toMatch(/may or may not have reached the service/);
  });

  it('still takes the answers the contract allows: {} and 204 for a batch, no body for an upsert', async () => {
    const bodies = [
      [200, '{}'],
      [204, ''],
      [201, ''],
    ] as const;
    let n = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/oauth/token') {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ token_type: 'Bearer', expires_in: 3600, access_token: 't' }));
          return;
        }
        const [status, body] = bodies[n++]!;
        res.writeHead(status, body ? { 'content-type': 'application/json' } : {}).end(body);
      });
    });
    plain.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const c = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    expect(await c.upsertCustomerBatch(batch)).toMatchObject({ status: 200, summary: undefined, raw: {} });
    expect(await c.upsertCustomerBatch(batch)).toMatchObject({ status: 204, summary: undefined });
    expect(await c.upsertCustomer({ customer_id: 'C1' } as never)).toMatchObject({ status: 201, created: true });
  });

  it('never quotes the bearer token of a page that echoes the request', async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/oauth/token') {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ token_type: 'Bearer', expires_in: 3600, access_token: 'tok-abcdef' }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<p>${req.headers.authorization}</p>`);
      });
    });
    plain.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const c = client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { retry: { maxAttempts: 1 } });
    const error = (await c.managementSystems().catch((e: unknown) => e)) as ServiceError;
    expect(error.message).toMatch(/starting "<p>Bearer \[REDACTED\]<\/p>"/);
    expect(JSON.stringify(error.toJSON())).not.toContain('tok-abcdef');
  });
});

describe('the client and an answer that does not end', () => {
  it('a trickling body: the deadline covers the whole answer, retried like a network error', async () => {
    const s = await hostile({ mode: 'trickle', trickleIntervalMs: 50 });
    const started = performance.now();
    const error = (await client(s.baseUrl, { timeoutMs: 400, retry: { maxAttempts: 2 } })
      .upsertCustomerBatch(batch)
      .catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.exitCode).toBe(ExitCode.SERVICE);
    expect(error.message).toMatch(/timed out reading the answer \(UND_ERR_BODY_TIMEOUT\) after 2 attempts/);
    expect(error.hint).toMatch(/--timeout/);
    expect(s.faulted()).toHaveLength(2);
    // Bytes kept coming every 50 ms: undici's gap timer alone would never have fired.
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it('headers that never come: the same deadline', async () => {
    const s = await hostile({ mode: 'slow-headers' });
    const error = (await client(s.baseUrl, { timeoutMs: 300, retry: { maxAttempts: 2 } })
      .managementSystems()
      .catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toMatch(/timed out waiting for the answer \(UND_ERR_HEADERS_TIMEOUT\) after 2 attempts/);
  });

  it("the caller's signal ends a hung answer at once, without retrying", async () => {
    const s = await hostile({ mode: 'trickle', trickleIntervalMs: 50 });
    const abort = new AbortController();
    const reason = new Error('stopped by SIGTERM');
    setTimeout(() => abort.abort(reason), 200);
    const started = performance.now();
    const error = await client(s.baseUrl)
      .upsertCustomerBatch(batch, { signal: abort.signal })
      .catch((e: unknown) => e);
    expect(error).toBe(reason);
    expect(s.faulted()).toHaveLength(1);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('the client and an answer too large to read', () => {
  it(`refuses a Content-Length above ${MAX_ANSWER_BYTES / 1024 ** 2} MiB before reading, once, exit 5`, async () => {
    const s = await hostile({ mode: 'huge', hugeDeclared: true });
    const error = (await client(s.baseUrl)
      .managementSystems()
      .catch((e: unknown) => e)) as ServiceError;
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.exitCode).toBe(ExitCode.SERVICE);
    expect(error.message).toMatch(
      /GET \/api\/v1\/resources\/management-systems \(HTTP 200\) is larger than leadctl reads: it announced 2,147,483,648 bytes \(Content-Length\), and the limit is 64 MiB per answer; not read, not retried/,
    );
    expect(s.faulted()).toHaveLength(1);
  });

  it('counts the bytes of an answer without a length, and stops at the limit', async () => {
    const s = await hostile({ mode: 'huge', hugeBytes: 8 * 1024 * 1024 });
    const error = (await client(s.baseUrl, { maxAnswerBytes: 1024 * 1024 })
      .upsertCustomerBatch(batch)
      .catch((e: unknown) => e)) as ServiceError;
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.message).toMatch(/it went on past 1,048,576 bytes, and the limit is 1 MiB per answer/);
    expect(error.details).toMatchObject({ limit_bytes: 1024 * 1024 });
    expect(error.http).toMatchObject({ status: 200, attempts: 1 });
    expect(s.faulted()).toHaveLength(1);
  });
});

describe('readAnswerBody', () => {
  const answer = (chunks: string[], headers: Record<string, string | string[]> = {}) => {
    const body = Readable.from(chunks.map((c) => Buffer.from(c)));
    return { res: { headers, body } as unknown as Dispatcher.ResponseData, body };
  };

  it('reads a body up to the limit itself, with or without a length', async () => {
    expect(await readAnswerBody(answer(['abc', 'de'], { 'content-length': '5' }).res, 5)).toEqual({
      kind: 'read',
      text: 'abcde',
      bytes: 5,
    });
    expect(await readAnswerBody(answer(['abc', 'de']).res, 5)).toEqual({ kind: 'read', text: 'abcde', bytes: 5 });
    expect(await readAnswerBody(answer(['é']).res, 5)).toEqual({ kind: 'read', text: 'é', bytes: 2 });
  });

  it('refuses a declared length over the limit unread, and a body that grows past it, destroying the stream', async () => {
    const declared = answer(['abcdef'], { 'content-length': ' 6 ' });
    expect(await readAnswerBody(declared.res, 5)).toEqual({ kind: 'too-large', limit: 5, declared: 6 });
    expect(declared.body.destroyed).toBe(true);
    const grown = answer(['abc', 'def', 'ghi']);
    expect(await readAnswerBody(grown.res, 5)).toEqual({ kind: 'too-large', limit: 5 });
    expect(grown.body.destroyed).toBe(true);
    const first = answer(['abcdef'], { 'content-length': ['6', '6'] });
    expect(await readAnswerBody(first.res, 5)).toEqual({ kind: 'too-large', limit: 5, declared: 6 });
  });

  it('a length that is not a number is no length: the bytes are counted', async () => {
    for (const length of ['abc', '6x', 'x6', '1 2', '-6', '6.5'])
      expect(await readAnswerBody(answer(['abc'], { 'content-length': length }).res, 5), length).toEqual({
        kind: 'read',
        text: 'abc',
        bytes: 3,
      });
  });
});
