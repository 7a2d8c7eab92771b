import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxInProcess } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { apiClient, getToken, http, validLead } from './support.js';

const DAY = 86_400_000;

describe('dry run', () => {
  let sb: TestSandbox;
  let api: ReturnType<typeof apiClient>;
  let now = new Date('2024-06-01T12:00:00Z');
  const dryRun = (body: unknown) => api.post('/api/v1/lead-processing/dry-run', body);

  beforeAll(async () => {
    sb = await startSandboxInProcess({ now: () => now });
    const direct = sb.campaigns.find((c) => !c.price_reject)!.api_key;
    const priceReject = sb.campaigns.find((c) => c.price_reject)!.api_key;
    // Accepted 40 days ago: bought; pending 2 days ago: decisioned but not bought.
    now = new Date(Date.parse('2024-06-01T12:00:00Z') - 40 * DAY);
    await http(sb.baseUrl, 'POST', '/api/legacy', {
      body: validLead(direct, { social_security_number: '111223333', email: 'bought@example.com' }),
    });
    now = new Date(Date.parse('2024-06-01T12:00:00Z') - 2 * DAY);
    const pending = await http(sb.baseUrl, 'POST', '/api/legacy', {
      body: validLead(priceReject, { social_security_number: '222334444', email: 'pending@example.com' }),
    });
    if (pending.body.result !== 'P') throw new Error(pending.text);
    now = new Date('2024-06-01T12:00:00Z');
    api = apiClient(sb.baseUrl, await getToken(sb));
  });
  afterAll(() => sb.stop());

  it('fails previously purchased leads by SSN or by email (default lookback: all time)', async () => {
    expect((await dryRun({ social_security_number: '111223333' })).body).toEqual({
      data: { pass: false, reason: 'previously_purchased' },
    });
    expect((await dryRun({ email: 'BOUGHT@example.com' })).body).toEqual({
      data: { pass: false, reason: 'previously_purchased' },
    });
    expect((await dryRun({ social_security_number: '999887777', email: 'bought@example.com' })).body.data.reason).toBe(
      'previously_purchased',
    );
  });

  it('honours the previously purchased window and false', async () => {
    expect(
      (await dryRun({ social_security_number: '111223333', previously_purchased_lookback_window: 30 })).body,
    ).toEqual({ data: { pass: true } });
    expect(
      (await dryRun({ social_security_number: '111223333', previously_purchased_lookback_window: 41 })).body.data
        .reason,
    ).toBe('previously_purchased');
    expect(
      (await dryRun({ social_security_number: '111223333', previously_purchased_lookback_window: false })).body,
    ).toEqual({ data: { pass: true } });
  });

  it('fails leads decisioned within the underwriting window (default 3 days)', async () => {
    expect((await dryRun({ social_security_number: '222334444' })).body).toEqual({
      data: { pass: false, reason: 'underwriting_cost' },
    });
    expect((await dryRun({ email: 'pending@example.com', underwriting_cost_lookback_window: 1 })).body).toEqual({
      data: { pass: true },
    });
    expect((await dryRun({ email: 'pending@example.com', underwriting_cost_lookback_window: false })).body).toEqual({
      data: { pass: true },
    });
    // The bought lead is outside 3 days but inside 50.
    expect(
      (
        await dryRun({
          social_security_number: '111223333',
          previously_purchased_lookback_window: false,
          underwriting_cost_lookback_window: 50,
        })
      ).body.data.reason,
    ).toBe('underwriting_cost');
  });

  it('passes an unknown lead and omits reason', async () => {
    const res = await dryRun({
      social_security_number: '555667777',
      email: 'new@example.com',
      previously_purchased_lookback_window: 30,
      underwriting_cost_lookback_window: 3,
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { pass: true } });
  });

  it('answers 422 without SSN and email, and for bad values', async () => {
    const none = await dryRun({});
    expect(none.status).toBe(422);
    expect(Object.keys(none.body.errors).sort()).toEqual(['email', 'social_security_number']);
    const bad = await dryRun({ social_security_number: '123-45-6789', previously_purchased_lookback_window: true });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual([
      'previously_purchased_lookback_window',
      'social_security_number',
    ]);
  });

  it('requires a bearer token', async () => {
    expect(
      (await http(sb.baseUrl, 'POST', '/api/v1/lead-processing/dry-run', { body: { email: 'a@example.com' } })).status,
    ).toBe(401);
  });
});
