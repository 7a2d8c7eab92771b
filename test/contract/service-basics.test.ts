import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxInProcess } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { apiClient, getToken, http } from './support.js';

/**
 * A raw POST whose body may exceed what fetch would buffer comfortably: with a Content-Length, or
 * chunked in writes of 7 bytes (cutting multi-byte characters).
 */
function rawPost(
  url: string,
  body: Buffer,
  headers: Record<string, string | number>,
  chunked = false,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const framing = chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': body.length };
    const req = httpRequest(url, { method: 'POST', headers: { ...headers, ...framing } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    if (!chunked) req.end(body);
    else {
      for (let at = 0; at < body.length; at += 7) req.write(body.subarray(at, at + 7));
      req.end();
    }
  });
}

describe('management systems', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startSandboxInProcess();
  });
  afterAll(() => sb.stop());

  it('lists the three seeded systems', async () => {
    const api = apiClient(sb.baseUrl, await getToken(sb));
    const res = await api.get('/api/v1/resources/management-systems');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(3);
    for (const system of res.body.data) expect(system).toEqual({ id: expect.any(Number), name: expect.any(String) });
  });

  it('requires a bearer token', async () => {
    const res = await http(sb.baseUrl, 'GET', '/api/v1/resources/management-systems');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });
});

describe('GET /_sandbox/stats', () => {
  it('reports store counts and requests by route and status', async () => {
    const sb = await startSandboxInProcess();
    try {
      const api = apiClient(sb.baseUrl, await getToken(sb));
      await api.get('/api/v1/resources/management-systems');
      await api.get('/api/v1/lead-management/lists/42');
      const stats = await sb.stats();
      expect(stats).toMatchObject({
        customers: 0,
        loans: 0,
        payments: 0,
        lists: 0,
        list_items: 0,
        leads: 0,
        offers: 0,
        tokens: 1,
      });
      expect(stats.requests.by_route).toMatchObject({
        'POST /oauth/token': 1,
        'GET /api/v1/resources/management-systems': 1,
        'GET /api/v1/lead-management/lists/:listId': 1,
      });
      expect(stats.requests.by_status).toMatchObject({ '200': 2, '404': 1 });
    } finally {
      await sb.stop();
    }
  });
});

describe('errors and limits of the HTTP layer', () => {
  let sb: TestSandbox;
  let token: string;
  beforeAll(async () => {
    sb = await startSandboxInProcess();
    token = await getToken(sb);
  });
  afterAll(() => sb.stop());

  it('answers 404 Not Found as JSON for unknown paths', async () => {
    const res = await http(sb.baseUrl, 'GET', '/api/v1/no-such-thing', { token });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Not Found' });
  });

  it('answers 405 with Allow for a known path and the wrong method', async () => {
    const res = await http(sb.baseUrl, 'DELETE', '/api/v1/lead-management/lists/1', { token });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, PUT');
    expect(res.body.message).toContain('DELETE');
  });

  it('answers 400 with a message for malformed or empty JSON, and keeps serving', async () => {
    for (const body of ['{"customer_id": "A",', '']) {
      const res = await fetch(`${sb.baseUrl}/api/v1/loan-performance/customers`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { message: string }).message).toMatch(/JSON/);
    }
    expect((await http(sb.baseUrl, 'GET', '/api/v1/resources/management-systems', { token })).status).toBe(200);
  });

  it('answers 415 for a body that is not JSON', async () => {
    const res = await http(sb.baseUrl, 'POST', '/api/v1/lead-processing/dry-run', {
      token,
      body: 'email=a@example.com',
      headers: { 'Content-Type': 'text/csv' },
    });
    expect(res.status).toBe(415);
    expect(res.body.message).toContain('text/csv');
  });

  it('answers 413 as JSON for a body over 50 MB, and accepts one just under', async () => {
    const over = await rawPost(
      `${sb.baseUrl}/api/v1/loan-performance/batches/customers`,
      Buffer.alloc(50 * 1024 * 1024 + 1, 0x20),
      {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
      },
    );
    expect(over.status).toBe(413);
    expect(over.body.message).toContain('50 MB');
    const padding = ' '.repeat(50 * 1024 * 1024 - 100);
    const under = await rawPost(
      `${sb.baseUrl}/api/v1/lead-processing/dry-run`,
      Buffer.from(`{"email": "a@example.com"${padding}}`),
      {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
      },
    );
    expect(under.status).toBe(200);
  });

  // JSON bodies, however they come.
  const upsert = (body: Buffer, chunked = false) =>
    rawPost(
      `${sb.baseUrl}/api/v1/loan-performance/customers`,
      body,
      { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      chunked,
    );
  const customer = (id: string, padding = 0) =>
    Buffer.from(
      `{"customer_id": ${JSON.stringify(id)}, "lead_loan": {"loan_id": "L1", "lead_id": 7, "loan_amount": 50000, "applied_at": "2024-01-05T10:00:00Z"}${' '.repeat(padding)}}`,
    );

  it('long then short bodies, ASCII or not, declared or chunked: each read as sent', async () => {
    const ids = ['A-LONG-ONE', 'b', 'Zoë-€-😀', 'c', 'Müller'];
    for (const [i, id] of ids.entries()) {
      const res = await upsert(customer(id, i === 0 ? 5 * 1024 * 1024 : i === 2 ? 3000 : 0), i === 3);
      expect(res.status).toBe(201);
      expect(res.body.data.customer_id).toBe(id);
    }
    const chunked = await upsert(customer('Zoë-chunked-€'), true);
    expect(chunked.body.data.customer_id).toBe('Zoë-chunked-€');
  });

  it('refuses keys that would poison prototypes, as fastify does (400), and keeps serving', async () => {
    for (const body of [
      '{"customer_id": "P", "lead_loan": {"loan_id": "L1", "lead_id": 7, "loan_amount": 50000, "applied_at": "2024-01-05T10:00:00Z"}, "__proto__": {"x": 1}}',
      '{"customer_id": "P", "lead_loan": {"loan_id": "L1", "lead_id": 7, "loan_amount": 50000, "applied_at": "2024-01-05T10:00:00Z"}, "constructor": {"prototype": {"x": 1}}}',
    ]) {
      const res = await upsert(Buffer.from(body));
      expect(res.status).toBe(400);
    }
    expect((await upsert(customer('after'))).status).toBe(201);
  });
});
