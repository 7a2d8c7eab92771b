import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adminHeaders, startSandboxInProcess } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { apiClient, getToken, http, validLead } from './support.js';

describe('legacy lead post', () => {
  let sb: TestSandbox;
  let direct: string;
  let priceReject: string;
  const post = (body: unknown) => http(sb.baseUrl, 'POST', '/api/legacy', { body });

  beforeEach(async () => {
    sb = await startSandboxInProcess();
    direct = sb.campaigns.find((c) => !c.price_reject)!.api_key;
    priceReject = sb.campaigns.find((c) => c.price_reject)!.api_key;
  });
  afterEach(() => sb.stop());

  it('accepts a valid lead without a bearer token (A with a redirect_url) and stores it', async () => {
    const res = await post(validLead(direct));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'OK', result: 'A', errors: null, lead_id: 1 });
    expect(res.body.redirect_url).toMatch(new RegExp(`^${sb.baseUrl}/redirect/[0-9a-f]{32}$`));
    const landing = await fetch(res.body.redirect_url);
    expect(landing.status).toBe(200);
    expect((await sb.stats()).leads).toBe(1);
  });

  it('finds the campaign by campaign_code when api_key is absent', async () => {
    const { api_key: _key, ...lead } = validLead(direct);
    const res = await post({ ...lead, campaign_code: 'SBX-DIRECT' });
    expect(res.body).toMatchObject({ status: 'OK', result: 'A' });
  });

  it('answers status ERROR for an unknown api_key', async () => {
    const res = await post(validLead('no-such-key'));
    expect(res.body).toEqual({
      status: 'ERROR',
      result: null,
      redirect_url: null,
      errors: [expect.stringMatching(/^api_key: /)],
    });
    expect((await sb.stats()).leads).toBe(0);
  });

  it('answers status ERROR with errors naming each invalid field, conditional rules included', async () => {
    const lead = validLead(direct, {
      social_security_number: '123-45-6789',
      email: 'nobody',
      zip: '787',
      is_military: 2,
      income_sources: [
        { is_primary: 1, income_source: 1, pay_frequency: 2, next_pay_date: '2024-02-30', payment_type: 3 },
      ],
      bank_accounts: [
        {
          is_primary: 1,
          bank_routing_number: '0110',
          bank_account_number: '12',
          bank_account_type: 1,
          months_at_bank: 1000,
        },
      ],
      optional_3: 'x'.repeat(256),
    });
    delete lead.first_name;
    const res = await post(lead);
    expect(res.body.status).toBe('ERROR');
    expect(res.body.result).toBeNull();
    const fields = (res.body.errors as string[]).map((e) => e.split(':')[0]);
    expect(fields.sort()).toEqual(
      [
        'bank_accounts[0].bank_routing_number',
        'bank_accounts[0].months_at_bank',
        'email',
        'first_name',
        'income_sources[0].employer_name',
        'income_sources[0].last_pay_amount',
        'income_sources[0].monthly_income',
        'income_sources[0].months_at_job',
        'income_sources[0].next_pay_date',
        'income_sources[0].work_phone',
        'is_military',
        'optional_3',
        'social_security_number',
        'zip',
      ].sort(),
    );
    expect(res.body.errors).toContain('income_sources[0].employer_name: required when income_source is 1 (Employed)');
  });

  it('answers status ERROR for a body that is not an object, and 400 in the legacy envelope for malformed JSON', async () => {
    expect((await post([1, 2])).body.status).toBe('ERROR');
    const malformed = await http(sb.baseUrl, 'POST', '/api/legacy', {
      body: '{"api_key": ',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ status: 'ERROR', errors: [expect.stringContaining('JSON')] });
  });

  describe('suppression: a lead on any of the account lists is rejected (R)', () => {
    const cases: [string, string, Record<string, unknown>][] = [
      ['Social Security Numbers', '123456789', {}],
      ['Last Four of Social Security Numbers', '6789', {}],
      ['Email Addresses', 'ANN.LEE@example.com', {}],
      ['Telephone Numbers', '5125550100', {}],
      ['Telephone Numbers', '7135550123', { cell_phone: '7135550123' }],
      ['Telephone Numbers', '5125550199', {}],
      ['ZIP Codes', '78701', {}],
      [
        'Bank Routing Numbers',
        '021000021',
        {
          bank_accounts: [
            ...(validLead('x').bank_accounts as object[]),
            {
              is_primary: 0,
              bank_routing_number: '021000021',
              bank_account_number: '55',
              bank_account_type: 2,
              months_at_bank: 3,
            },
          ],
        },
      ],
      ['Employer Names', 'acme widgets', {}],
      ['Affiliates', 'AFF-100', {}],
    ];
    for (const [type, item, overrides] of cases) {
      it(`${type}: ${item}`, async () => {
        const api = apiClient(sb.baseUrl, await getToken(sb));
        const control = await post(
          validLead(direct, { ...overrides, social_security_number: '234567890', email: 'control@example.com' }),
        );
        expect(control.body.result).toBe('A');
        expect((await api.post('/api/v1/lead-management/lists', { name: 'suppress', type, list: [item] })).status).toBe(
          201,
        );
        const res = await post(validLead(direct, overrides));
        expect(res.body).toMatchObject({ status: 'OK', result: 'R', redirect_url: null, errors: null });
        expect(res.body.lead_id).toEqual(expect.any(Number));
      });
    }
  });

  describe('price reject', () => {
    it('answers P with 1 to 3 offers below the campaign price, highest first, within the expiry limits', async () => {
      for (let i = 0; i < 3; i++) {
        const res = await post(validLead(priceReject, { social_security_number: `12345678${i}` }));
        expect(res.body).toMatchObject({ status: 'OK', result: 'P', redirect_url: null, errors: null });
        expect(res.body.price_reject.api_key).toBe(priceReject);
        const offers = res.body.price_reject.offers as { id: number; price: number; expires_in: number }[];
        expect(offers.length).toBeGreaterThanOrEqual(1);
        expect(offers.length).toBeLessThanOrEqual(3);
        const prices = offers.map((o) => o.price);
        expect(prices).toEqual([...prices].sort((a, b) => b - a));
        for (const offer of offers) {
          expect(offer.price).toBeGreaterThan(0);
          expect(offer.price).toBeLessThan(40);
          expect(offer.expires_in).toBeGreaterThanOrEqual(300);
          expect(offer.expires_in).toBeLessThanOrEqual(345_600);
        }
      }
    });

    it('accepts an offer (A with redirect_url) and then refuses it as accepted and the other offers as revoked', async () => {
      const pending = await post(validLead(priceReject));
      const offers = pending.body.price_reject.offers as { id: number }[];
      expect(offers.length).toBeGreaterThan(1);
      const accept = await post({ api_key: priceReject, price_reject_offer_id: offers[0]!.id });
      expect(accept.body).toMatchObject({ status: 'OK', result: 'A', errors: null, lead_id: pending.body.lead_id });
      expect(accept.body.redirect_url).toMatch(/\/redirect\/[0-9a-f]{32}$/);
      expect((await post({ api_key: priceReject, price_reject_offer_id: offers[0]!.id })).body).toMatchObject({
        status: 'ERROR',
        errors: ['Accepted price reject offer.'],
      });
      expect((await post({ api_key: priceReject, price_reject_offer_id: offers[1]!.id })).body).toMatchObject({
        status: 'ERROR',
        errors: ['Revoked price reject offer.'],
      });
    });

    it('refuses an unknown offer and an offer of another campaign as invalid', async () => {
      expect((await post({ api_key: priceReject, price_reject_offer_id: 999 })).body).toMatchObject({
        status: 'ERROR',
        errors: ['Invalid price reject offer.'],
      });
    });

    it('refuses an expired offer', async () => {
      const pending = await post(validLead(priceReject));
      const [offer] = pending.body.price_reject.offers as { id: number; expires_in: number }[];
      await http(sb.baseUrl, 'POST', '/_sandbox/clock', {
        body: { advance_seconds: offer!.expires_in + 1 },
        headers: adminHeaders(sb),
      });
      expect((await post({ api_key: priceReject, price_reject_offer_id: offer!.id })).body).toMatchObject({
        status: 'ERROR',
        errors: ['Expired price reject offer.'],
      });
    });

    it('refuses a follow-up on a campaign without price reject', async () => {
      const pending = await post(validLead(priceReject));
      const [offer] = pending.body.price_reject.offers as { id: number }[];
      expect((await post({ api_key: direct, price_reject_offer_id: offer!.id })).body).toMatchObject({
        status: 'ERROR',
        errors: ['Price reject not enabled for this campaign.'],
      });
    });

    it('refuses a malformed follow-up with errors naming the fields', async () => {
      const res = await post({ api_key: priceReject, price_reject_offer_id: 'one', extra: 1 });
      expect(res.body.status).toBe('ERROR');
      expect((res.body.errors as string[]).map((e) => e.split(':')[0]).sort()).toEqual([
        'extra',
        'price_reject_offer_id',
      ]);
    });

    it('a suppressed lead gets R, not offers', async () => {
      const api = apiClient(sb.baseUrl, await getToken(sb));
      await api.post('/api/v1/lead-management/lists', {
        name: 's',
        type: 'Social Security Numbers',
        list: ['123456789'],
      });
      expect((await post(validLead(priceReject))).body).toMatchObject({ status: 'OK', result: 'R' });
    });

    it('uses the configured offer lifetime', async () => {
      const custom = await startSandboxInProcess({ offerTtl: 3600 });
      try {
        const key = custom.campaigns.find((c) => c.price_reject)!.api_key;
        const res = await http(custom.baseUrl, 'POST', '/api/legacy', { body: validLead(key) });
        expect(res.body.price_reject.offers.every((o: { expires_in: number }) => o.expires_in === 3600)).toBe(true);
      } finally {
        await custom.stop();
      }
    });
  });
});
