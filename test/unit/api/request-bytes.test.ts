import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient, type ApiEvent } from '../../../src/api/client.js';

/** The `bytes` of each answer event (the metrics file's leadctl_run_bytes_sent adds them up). */

const servers: Server[] = [];
const clients: ApiClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server on 127.0.0.1 that counts the body bytes of each request; the first `fail` answers are 503. */
async function counting(fail = 0): Promise<{ url: string; received: number[] }> {
  const received: number[] = [];
  const server = createServer((req, res) => {
    let n = 0;
    req.on('data', (c: Buffer) => (n += c.length));
    req.on('end', () => {
      received.push(n);
      if (req.url === '/oauth/token') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ access_token: 'tok', token_type: 'Bearer', expires_in: 3600 }));
        return;
      }
      res.statusCode = received.length <= fail + 1 ? 503 : 200;
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

describe('bytes sent, per answer', () => {
  it('are the body bytes the server received: form, JSON and streamed bodies, every attempt', async () => {
    const { url, received } = await counting(1);
    const events: ApiEvent[] = [];
    const client = createApiClient({
      baseUrl: url,
      clientId: 'id',
      clientSecret: 'a-secret-of-some-length',
      retry: { baseDelayMs: 1, maxDelayMs: 2 },
      onEvent: (e) => events.push(e),
    });
    clients.push(client);
    const unicode = 'é€𝄞'.repeat(1000);
    // Streamed in parts (UTF-8 of multi-byte characters), answered 503 once: sent twice.
    await client.send({
      method: 'POST',
      path: '/stream',
      body: () =>
        (async function* () {
          yield '{"a":"';
          yield unicode;
          yield Buffer.from('"}');
        })(),
      auth: 'bearer',
      repeat: 'safe',
    });
    await client.send({ method: 'POST', path: '/json', body: { name: unicode }, auth: 'bearer', repeat: 'safe' });
    await client.send({ method: 'GET', path: '/nothing', auth: 'bearer', repeat: 'safe' });
    const answers = events.filter((e) => e.type === 'response');
    expect(answers.map((e) => e.bytes)).toEqual(received);
    expect(answers.map((e) => e.status)).toEqual([200, 503, 200, 200, 200]);
    expect(received[1]).toBe(Buffer.byteLength(`{"a":"${unicode}"}`));
    expect(received[4]).toBe(0);
  });
});
