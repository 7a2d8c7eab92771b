import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, startSandboxInProcess } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { apiClient, getToken, http, validLead } from './support.js';

const PREFIXES = ['/api/v1/lead-management/lists', '/api/v1/list-manager/lists'];

describe('lists', () => {
  let sb: TestSandbox;
  let api: ReturnType<typeof apiClient>;
  beforeAll(async () => {
    sb = await startSandboxInProcess();
    api = apiClient(sb.baseUrl, await getToken(sb));
  });
  afterAll(() => sb.stop());

  it('requires a bearer token', async () => {
    expect((await http(sb.baseUrl, 'GET', PREFIXES[0]!)).status).toBe(401);
  });

  for (const prefix of PREFIXES) {
    it(`creates (201), gets, and updates a list on ${prefix}; items are never returned`, async () => {
      const created = await api.post(prefix, {
        name: 'Bad SSNs',
        type: 'Social Security Numbers',
        list: ['123456789', '234567890'],
      });
      expect(created.status).toBe(201);
      const list = created.body.data;
      expect(list).toEqual({
        id: expect.any(Number),
        name: 'Bad SSNs',
        type: 'Social Security Numbers',
        deleted_at: null,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        updated_at: expect.any(String),
      });
      expect(created.text).not.toContain('123456789');

      const fetched = await api.get(`${prefix}/${list.id}`);
      expect(fetched.status).toBe(200);
      expect(fetched.body).toEqual({ data: list });

      const updated = await api.put(`${prefix}/${list.id}`, { name: 'Bad ZIPs', type: 'ZIP Codes', list: ['78701'] });
      expect(updated.status).toBe(200);
      expect(updated.body.data).toMatchObject({ id: list.id, name: 'Bad ZIPs', type: 'ZIP Codes' });
      expect(updated.text).not.toContain('78701');
    });
  }

  it('update replaces the items (old items no longer match a lead)', async () => {
    const campaign = sb.campaigns.find((c) => !c.price_reject)!;
    const created = await api.post(PREFIXES[0]!, {
      name: 'emails',
      type: 'Email Addresses',
      list: ['Replace.Me@Example.com'],
    });
    const items = () => sb.stats().then((s) => s.list_items);
    const before = await items();
    const rejected = await http(sb.baseUrl, 'POST', '/api/legacy', {
      body: validLead(campaign.api_key, {
        email: 'replace.me@example.com',
        social_security_number: '345678901',
        zip: '10001',
      }),
    });
    expect(rejected.body.result).toBe('R');
    await api.put(`${PREFIXES[0]}/${created.body.data.id}`, {
      name: 'emails',
      type: 'Email Addresses',
      list: ['other@example.com', 'third@example.com'],
    });
    expect(await items()).toBe(before + 1);
    const accepted = await http(sb.baseUrl, 'POST', '/api/legacy', {
      body: validLead(campaign.api_key, {
        email: 'replace.me@example.com',
        social_security_number: '345678902',
        zip: '10001',
      }),
    });
    expect(accepted.body.result).toBe('A');
  });

  it('an archived list (admin endpoint) shows deleted_at and no longer suppresses leads', async () => {
    const campaign = sb.campaigns.find((c) => !c.price_reject)!;
    const lead = validLead(campaign.api_key, {
      affiliate_id: 'ARCHIVE-ME',
      social_security_number: '456789012',
      zip: '10002',
      email: 'archive@example.com',
    });
    const created = await api.post(PREFIXES[0]!, { name: 'affiliates', type: 'Affiliates', list: ['archive-me'] });
    expect((await http(sb.baseUrl, 'POST', '/api/legacy', { body: lead })).body.result).toBe('R');
    const archived = await http(sb.baseUrl, 'POST', `/_sandbox/lists/${created.body.data.id}/archive`, {
      headers: adminHeaders(sb),
    });
    expect(archived.status).toBe(200);
    const fetched = await api.get(`${PREFIXES[0]}/${created.body.data.id}`);
    expect(fetched.body.data.deleted_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(
      (await http(sb.baseUrl, 'POST', '/api/legacy', { body: { ...lead, social_security_number: '456789013' } })).body
        .result,
    ).toBe('A');
  });

  it('answers 422 with one message per bad row naming the 1-based row and the reason', async () => {
    const res = await api.post(PREFIXES[0]!, {
      name: 'x',
      type: 'Social Security Numbers',
      list: ['123456789', '12345678', '666123456', '123006789', '123450000', '912345678'],
    });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('The given data was invalid.');
    expect(res.body.errors.list).toEqual([
      expect.stringMatching(/^Row 2: .*9 digits/),
      'Row 3: SSN area number 666 is never issued',
      expect.stringMatching(/^Row 4: .*group/),
      expect.stringMatching(/^Row 5: .*serial/),
      expect.stringMatching(/^Row 6: .*area number 912/),
    ]);
  });

  it.each([
    ['Last Four of Social Security Numbers', ['1234', '0000', '123'], [2, 3]],
    ['ZIP Codes', ['78701', '7870', '78701-1234'], [2, 3]],
    ['Telephone Numbers', ['5125550100', '1125550100', '5121550100', '512555010'], [2, 3, 4]],
    ['Bank Routing Numbers', ['011000015', '011000016', '01100001'], [2, 3]],
    ['Email Addresses', ['a@example.com', 'not-an-email', 'b@example'], [2, 3]],
    ['Employer Names', ['Acme', '   ', 'x'.repeat(256)], [2, 3]],
    ['Affiliates', ['AFF-1', ''], [2]],
  ])('validates %s items per row', async (type, list, badRows) => {
    const res = await api.post(PREFIXES[1]!, { name: 'x', type, list });
    expect(res.status).toBe(422);
    expect((res.body.errors.list as string[]).map((m) => Number(/^Row (\d+): \S/.exec(m)?.[1]))).toEqual(badRows);
  });

  it('answers 422 for a missing or too long name, an unknown type, and a missing list', async () => {
    const res = await api.post(PREFIXES[0]!, { name: 'n'.repeat(256), type: 'Phones' });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual(['list', 'name', 'type']);
    const update = await api.put(`${PREFIXES[0]}/1`, { type: 'ZIP Codes', list: ['78701'] });
    expect(update.status).toBe(422);
    expect(Object.keys(update.body.errors)).toEqual(['name']);
  });

  it('answers 404 for an unknown list on get and update', async () => {
    for (const id of ['999999', 'abc']) {
      const get = await api.get(`${PREFIXES[0]}/${id}`);
      expect(get.status).toBe(404);
      expect(get.body).toEqual({ message: 'Not Found' });
      expect((await api.put(`${PREFIXES[1]}/${id}`, { name: 'x', type: 'ZIP Codes', list: ['78701'] })).status).toBe(
        404,
      );
    }
  });
});

describe('lists: the paginated list of lists', () => {
  let sb: TestSandbox;
  let api: ReturnType<typeof apiClient>;
  beforeAll(async () => {
    sb = await startSandboxInProcess();
    api = apiClient(sb.baseUrl, await getToken(sb));
    for (let i = 1; i <= 260; i++) {
      const res = await api.post(PREFIXES[0]!, { name: `List ${i}`, type: 'Affiliates', list: [`AFF-${i}`] });
      if (res.status !== 201) throw new Error(`setup failed: ${res.text}`);
    }
  });
  afterAll(() => sb.stop());

  it('returns 250 per page with every Laravel page field and page links', async () => {
    const path = `${sb.baseUrl}${PREFIXES[0]}`;
    const first = await api.get(PREFIXES[0]!);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      current_page: 1,
      first_page_url: `${path}?page=1`,
      from: 1,
      last_page: 2,
      last_page_url: `${path}?page=2`,
      next_page_url: `${path}?page=2`,
      path,
      per_page: 250,
      prev_page_url: null,
      to: 250,
      total: 260,
    });
    expect(first.body.data).toHaveLength(250);
    expect(first.body.data[0]).toMatchObject({ name: 'List 1', type: 'Affiliates', deleted_at: null });
    expect(first.body.links).toEqual([
      { url: null, label: '&laquo; Previous', active: false },
      { url: `${path}?page=1`, label: '1', active: true },
      { url: `${path}?page=2`, label: '2', active: false },
      { url: `${path}?page=2`, label: 'Next &raquo;', active: false },
    ]);

    const second = await api.get(`${PREFIXES[0]}?page=2`);
    expect(second.body).toMatchObject({
      current_page: 2,
      from: 251,
      to: 260,
      next_page_url: null,
      prev_page_url: `${path}?page=1`,
    });
    expect(second.body.data.map((l: { name: string }) => l.name)).toEqual(
      Array.from({ length: 10 }, (_, i) => `List ${251 + i}`),
    );
    expect(second.body.links.at(-1)).toEqual({ url: null, label: 'Next &raquo;', active: false });
    expect(second.body.links[2]).toEqual({ url: `${path}?page=2`, label: '2', active: true });

    const beyond = await api.get(`${PREFIXES[0]}?page=9`);
    expect(beyond.body).toMatchObject({ current_page: 9, data: [], from: null, to: null, total: 260, last_page: 2 });
  });

  it('serves the same page on the list-manager path, with its own URLs', async () => {
    const res = await api.get(`${PREFIXES[1]}?page=2`);
    expect(res.body.path).toBe(`${sb.baseUrl}${PREFIXES[1]}`);
    expect(res.body.total).toBe(260);
  });
});
