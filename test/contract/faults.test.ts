import { afterEach, describe, expect, it } from 'vitest';
import { adminHeaders, startSandboxInProcess, startSandboxProcess } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { apiClient, getToken, http } from './support.js';

const SYSTEMS = '/api/v1/resources/management-systems';

describe('fault injection', () => {
  const running: TestSandbox[] = [];
  const start = async (options: Parameters<typeof startSandboxInProcess>[0] = {}) => {
    const sb = await startSandboxInProcess(options);
    running.push(sb);
    return sb;
  };
  afterEach(async () => {
    await Promise.all(running.splice(0).map((sb) => sb.stop()));
  });

  it('is off by default', async () => {
    const sb = await start();
    const api = apiClient(sb.baseUrl, await getToken(sb));
    const statuses = await Promise.all(Array.from({ length: 30 }, () => api.get(SYSTEMS).then((r) => r.status)));
    expect(new Set(statuses)).toEqual(new Set([200]));
    expect((await sb.stats()).faults).toEqual({});
  });

  it('X-Sandbox-Fault forces 503, 500 and 429 responses in the documented shapes', async () => {
    const sb = await start();
    const api = apiClient(sb.baseUrl, await getToken(sb));
    const unavailable = await api.get(SYSTEMS, { 'X-Sandbox-Fault': '503' });
    expect(unavailable.status).toBe(503);
    expect(unavailable.body).toEqual({ message: 'Service Unavailable' });
    const error = await api.get(SYSTEMS, { 'X-Sandbox-Fault': '500' });
    expect(error.status).toBe(500);
    expect(error.body).toEqual({ message: 'Server Error' });
    const limited = await api.get(SYSTEMS, { 'X-Sandbox-Fault': '429' });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ message: 'Too Many Attempts.' });
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await api.get(SYSTEMS)).status).toBe(200);
    expect((await sb.stats()).faults).toMatchObject({ '503': 1, '500': 1, '429': 1 });
  });

  it('X-Sandbox-Fault applies to the token endpoint too, and an unknown value is refused', async () => {
    const sb = await start();
    const res = await http(sb.baseUrl, 'POST', '/oauth/token', {
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: sb.clientId,
        client_secret: sb.clientSecret,
      }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Sandbox-Fault': '503' },
    });
    expect(res.status).toBe(503);
    const bad = await http(sb.baseUrl, 'GET', SYSTEMS, { headers: { 'X-Sandbox-Fault': 'explode' } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('X-Sandbox-Fault');
  });

  it('X-Sandbox-Fault: reset drops the connection after the request was handled', async () => {
    const sb = await start();
    const api = apiClient(sb.baseUrl, await getToken(sb));
    await expect(
      api.post(
        '/api/v1/lead-management/lists',
        { name: 'n', type: 'ZIP Codes', list: ['78701'] },
        { 'X-Sandbox-Fault': 'reset' },
      ),
    ).rejects.toThrow();
    expect((await sb.stats()).lists).toBe(1);
    expect((await api.get(SYSTEMS)).status).toBe(200);
  });

  it('X-Sandbox-Fault: latency=MS delays and then answers normally', async () => {
    const sb = await start();
    const api = apiClient(sb.baseUrl, await getToken(sb));
    expect((await api.get(SYSTEMS, { 'X-Sandbox-Fault': 'latency=20' })).status).toBe(200);
    expect((await sb.stats()).faults.latency).toBe(1);
  });

  it('--fail-rate 1 answers 503 on /api only; the token endpoint and admin endpoints are unaffected', async () => {
    const sb = await start({ failRate: 1 });
    const token = await getToken(sb);
    expect((await http(sb.baseUrl, 'GET', SYSTEMS, { token })).status).toBe(503);
    expect((await http(sb.baseUrl, 'POST', '/api/legacy', { body: {} })).status).toBe(503);
    expect((await http(sb.baseUrl, 'GET', '/_sandbox/stats', { headers: adminHeaders(sb) })).status).toBe(200);
  });

  it('--fail-rate with --random-seed is repeatable', async () => {
    const sequence = async (seed: number) => {
      const sb = await start({ failRate: 0.5, randomSeed: seed });
      const api = apiClient(sb.baseUrl, await getToken(sb));
      const out: number[] = [];
      for (let i = 0; i < 40; i++) out.push((await api.get(SYSTEMS)).status);
      return out;
    };
    const a = await sequence(42);
    const b = await sequence(42);
    expect(a).toEqual(b);
    expect(a).toContain(503);
    expect(a).toContain(200);
    expect(await sequence(7)).not.toEqual(a);
  });

  it('--rate-limit answers 429 with Retry-After and X-RateLimit headers beyond N requests per second', async () => {
    const sb = await start({ rateLimit: 2 });
    const api = apiClient(sb.baseUrl, await getToken(sb));
    const responses = await Promise.all(Array.from({ length: 20 }, () => api.get(SYSTEMS)));
    const limited = responses.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const r of limited) {
      expect(r.body).toEqual({ message: 'Too Many Attempts.' });
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.headers.get('x-ratelimit-limit')).toBe('2');
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    const ok = responses.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThan(0);
    for (const r of ok) expect(r.headers.get('x-ratelimit-limit')).toBe('2');
  });

  it('--reset-rate 1 drops every /api connection', async () => {
    const sb = await start({ resetRate: 1 });
    const token = await getToken(sb);
    await expect(http(sb.baseUrl, 'GET', SYSTEMS, { token })).rejects.toThrow();
    expect((await sb.stats()).faults.reset).toBe(1);
  });

  it('--latency delays every /api request and still answers', async () => {
    const sb = await start({ latencyMs: 10 });
    const api = apiClient(sb.baseUrl, await getToken(sb));
    expect((await api.get(SYSTEMS)).status).toBe(200);
    expect((await sb.stats()).faults.latency).toBe(1);
  });

  it('the binary takes the fault flags', async () => {
    const sb = await startSandboxProcess(['--fail-rate', '1', '--random-seed', '3']);
    try {
      const token = await getToken(sb);
      expect((await http(sb.baseUrl, 'GET', SYSTEMS, { token })).status).toBe(503);
      expect((await sb.stats()).random_seed).toBe(3);
    } finally {
      await sb.stop();
    }
  });
});
