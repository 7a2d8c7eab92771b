import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxInProcess, type TestSandbox } from '../helpers/sandbox.js';
import { apiClient } from './support.js';

/** Inputs that once made the sandbox answer 500 (or break until restart): each now has a 4xx or a sane answer. */
let sb: TestSandbox;
const errors: string[] = [];
let token = '';
beforeAll(async () => {
  sb = await startSandboxInProcess({ onError: (m) => errors.push(m) });
  token = await newToken();
});
afterAll(async () => sb?.stop());

async function newToken(): Promise<string> {
  const res = await fetch(`${sb.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: sb.clientId,
      client_secret: sb.clientSecret,
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

describe('sandbox input ranges', () => {
  it('a clock moved by 1e308 seconds is refused (422) and token issuing keeps working', async () => {
    const res = await fetch(`${sb.baseUrl}/_sandbox/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advance_seconds: 1e308 }),
    });
    expect(res.status).toBe(422);
    await newToken();
  });

  it('a dry-run lookback of 100,020,782 days covers all time instead of failing', async () => {
    const api = apiClient(sb.baseUrl, token);
    const res = await api.post('/api/v1/lead-processing/dry-run', {
      email: 'far@example.com',
      previously_purchased_lookback_window: 100_020_782,
      underwriting_cost_lookback_window: 100_020_782,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { pass: true } });
  });

  it('a text/plain body is 415, not a validation error', async () => {
    const res = await fetch(`${sb.baseUrl}/api/v1/loan-performance/batches/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(res.status).toBe(415);
  });

  it('a form field sent as an object (client_secret[a]=b) is an OAuth error, not a 500', async () => {
    const res = await fetch(`${sb.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${sb.clientId}&client_secret[a]=b`,
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });

  it('a 150-character customer id stored by a batch is reachable by its own URL (no 414)', async () => {
    const id = 'C'.repeat(150);
    const api = apiClient(sb.baseUrl, token);
    const batch = await api.post('/api/v1/loan-performance/batches/customers', {
      customers: [
        {
          customer_id: id,
          loans: [
            {
              loan_id: 'L1',
              lead_id: 7,
              is_lead_loan: true,
              loan_amount: 50_000,
              applied_at: '2024-01-05T10:00:00Z',
              payments: [],
            },
          ],
        },
      ],
    });
    expect(batch.status).toBe(200);
    const loan = await api.post(`/api/v1/loan-performance/customers/${id}/loans`, {
      loan_id: 'L2',
      lead_id: 7,
      loan_amount: 100,
      applied_at: '2024-01-05T10:00:00Z',
    });
    expect([200, 201]).toContain(loan.status);
  });

  it('a customer id longer than the router path limit is refused when stored (422 or skipped), not stored and then 414', async () => {
    const api = apiClient(sb.baseUrl, token);
    const loan = {
      loan_id: 'L1',
      lead_id: 7,
      is_lead_loan: true,
      loan_amount: 50_000,
      applied_at: '2024-01-05T10:00:00Z',
      payments: [],
    };
    const longest = 'D'.repeat(2048);
    const tooLong = 'E'.repeat(2049);
    const batch = await api.post('/api/v1/loan-performance/batches/customers', {
      customers: [
        { customer_id: tooLong, loans: [loan] },
        { customer_id: longest, loans: [loan] },
      ],
    });
    expect(batch.status).toBe(200);
    const { data } = batch.body as {
      data: { accepted: { customers: number }; skipped: { path: string; errors: string[] }[] };
    };
    expect(data.accepted.customers).toBe(1);
    expect(data.skipped).toEqual([
      { path: 'customers.0', id: tooLong, errors: ['customer_id: at most 2048 characters'] },
    ]);
    const single = await api.post('/api/v1/loan-performance/customers', {
      customer_id: tooLong,
      lead_loan: { loan_id: 'L1', lead_id: 7, loan_amount: 100, applied_at: '2024-01-05T10:00:00Z' },
    });
    expect(single.status).toBe(422);
    expect((single.body as { errors: Record<string, string[]> }).errors.customer_id).toEqual([
      'at most 2048 characters',
    ]);
    const reachable = await api.post(`/api/v1/loan-performance/customers/${longest}/loans`, {
      loan_id: 'L2',
      lead_id: 7,
      loan_amount: 100,
      applied_at: '2024-01-05T10:00:00Z',
    });
    expect(reachable.status).toBe(201);
  });

  it('logged no server error along the way', () => {
    expect(errors).toEqual([]);
  });
});
