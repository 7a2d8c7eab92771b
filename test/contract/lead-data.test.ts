import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxInProcess } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { apiClient, getToken, http, validLead } from './support.js';

/** A controllable clock: leads are created at the times the test sets. */
function manualClock(start: string) {
  let now = new Date(start);
  return { now: () => now, set: (iso: string) => (now = new Date(iso)) };
}

describe('lead data', () => {
  let sb: TestSandbox;
  let api: ReturnType<typeof apiClient>;
  const clock = manualClock('2024-01-04T23:00:00Z');
  // Lead ids 1..7: 1 on Jan 4, 2-6 on Jan 5 (hourly from 08:00), 7 on Jan 6.
  const times = [
    '2024-01-04T23:00:00Z',
    '2024-01-05T08:00:00Z',
    '2024-01-05T09:00:00Z',
    '2024-01-05T10:00:00Z',
    '2024-01-05T11:00:00Z',
    '2024-01-05T12:00:00Z',
    '2024-01-06T00:00:00Z',
  ];

  beforeAll(async () => {
    sb = await startSandboxInProcess({ now: clock.now });
    const key = sb.campaigns.find((c) => !c.price_reject)!.api_key;
    for (const [i, time] of times.entries()) {
      clock.set(time);
      const res = await http(sb.baseUrl, 'POST', '/api/legacy', {
        body: validLead(key, { social_security_number: `12345670${i}`, lead_reference_id: `REF-${i + 1}` }),
      });
      if (res.body.lead_id !== i + 1) throw new Error(`setup: ${res.text}`);
    }
    clock.set('2024-01-07T00:00:00Z');
    api = apiClient(sb.baseUrl, await getToken(sb));
  });
  afterAll(() => sb.stop());

  describe('lead ids', () => {
    it('pages through every id with opaque cursors, links built from the request address', async () => {
      const first = await api.get('/api/v1/lead-data/lead-ids?per_page=3');
      expect(first.status).toBe(200);
      expect(first.body.data).toEqual([1, 2, 3]);
      expect(first.body.links.first).toBeNull();
      expect(first.body.links.last).toBeNull();
      expect(first.body.links.prev).toBeNull();
      expect(first.body.meta).toEqual({
        path: `${sb.baseUrl}/api/v1/lead-data/lead-ids`,
        per_page: 3,
        next_cursor: expect.any(String),
        prev_cursor: null,
      });
      expect(first.body.links.next).toBe(
        `${sb.baseUrl}/api/v1/lead-data/lead-ids?per_page=3&cursor=${first.body.meta.next_cursor}`,
      );

      const second = await api.get(first.body.links.next.slice(sb.baseUrl.length));
      expect(second.body.data).toEqual([4, 5, 6]);
      expect(second.body.meta.prev_cursor).toEqual(expect.any(String));
      const third = await api.get(second.body.links.next.slice(sb.baseUrl.length));
      expect(third.body.data).toEqual([7]);
      expect(third.body.links.next).toBeNull();
      expect(third.body.meta.next_cursor).toBeNull();

      const back = await api.get(third.body.links.prev.slice(sb.baseUrl.length));
      expect(back.body.data).toEqual([4, 5, 6]);
      const start = await api.get(back.body.links.prev.slice(sb.baseUrl.length));
      expect(start.body.data).toEqual([1, 2, 3]);
      expect(start.body.meta.prev_cursor).toBeNull();
    });

    it('defaults to 100 per page', async () => {
      const res = await api.get('/api/v1/lead-data/lead-ids');
      expect(res.body.meta.per_page).toBe(100);
      expect(res.body.data).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(res.body.links.next).toBeNull();
    });

    it('filters by date (that UTC day), by datetime (created at or after), and by both', async () => {
      expect((await api.get('/api/v1/lead-data/lead-ids?date=2024-01-05')).body.data).toEqual([2, 3, 4, 5, 6]);
      expect((await api.get('/api/v1/lead-data/lead-ids?datetime=2024-01-05T11:00:00Z')).body.data).toEqual([5, 6, 7]);
      expect(
        (await api.get('/api/v1/lead-data/lead-ids?date=2024-01-05&datetime=2024-01-05T11:00:00Z')).body.data,
      ).toEqual([5, 6]);
      const paged = await api.get('/api/v1/lead-data/lead-ids?date=2024-01-05&per_page=2');
      expect(paged.body.data).toEqual([2, 3]);
      expect(paged.body.links.next).toContain('date=2024-01-05');
      const next = await api.get(paged.body.links.next.slice(sb.baseUrl.length));
      expect(next.body.data).toEqual([4, 5]);
    });

    it('answers 422 for per_page over 1000 or below 1, a bad date, and a cursor it did not issue', async () => {
      for (const query of [
        'per_page=1001',
        'per_page=0',
        'date=2024-02-30',
        'datetime=2024-01-05',
        'cursor=not-a-cursor',
      ]) {
        const res = await api.get(`/api/v1/lead-data/lead-ids?${query}`);
        expect(res.status, query).toBe(422);
        expect(res.body.message).toBe('The given data was invalid.');
        expect(Object.keys(res.body.errors)).toEqual([query.split('=')[0]]);
      }
      expect((await api.get('/api/v1/lead-data/lead-ids?per_page=1000')).status).toBe(200);
    });

    it('requires a bearer token', async () => {
      expect((await http(sb.baseUrl, 'GET', '/api/v1/lead-data/lead-ids')).status).toBe(401);
    });
  });

  describe('leads/{id}', () => {
    it('returns the columns asked for with repeated map_ids[], in natural JSON types', async () => {
      const res = await api.get('/api/v1/lead-data/leads/1?map_ids[]=m1&map_ids[]=m2');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { m1: 1, m2: 10000 } });
    });

    it('reads numbered map_ids[0], map_ids[1] as PHP does: the same columns, in index order', async () => {
      const res = await api.get('/api/v1/lead-data/leads/1?map_ids%5B1%5D=m2&map_ids%5B0%5D=m1');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: { m1: 1, m2: 10000 } });
      const unknown = await api.get('/api/v1/lead-data/leads/1?map_ids%5B0%5D=m9999');
      expect(unknown.status).toBe(422);
    });

    it('returns every dictionary column when no map_ids are given', async () => {
      const dictionary = (await api.get('/api/v1/lead-data/dictionary')).body.data as {
        id: string;
        column: string;
        type: string;
      }[];
      const res = await api.get('/api/v1/lead-data/leads/3');
      expect(Object.keys(res.body.data)).toEqual(dictionary.map((a) => a.id));
      const byColumn = (column: string) => res.body.data[dictionary.find((a) => a.column === column)!.id];
      expect(byColumn('lead_id')).toBe(3);
      expect(byColumn('social_security_number')).toBe('123456702');
      expect(byColumn('lead_reference_id')).toBe('REF-3');
      expect(byColumn('loan_request_amount')).toBe(500);
      expect(byColumn('is_military')).toBe(false);
      expect(byColumn('employer_name')).toBe('Acme Widgets');
      expect(byColumn('income_source')).toBe('Employed');
      expect(byColumn('middle_name')).toBeNull();
      for (const attribute of dictionary) {
        const value = res.body.data[attribute.id];
        if (value === null) continue;
        expect(typeof value, attribute.column).toBe(
          { String: 'string', Number: 'number', Boolean: 'boolean' }[attribute.type],
        );
      }
    });

    it('answers 404 for an unknown lead and 422 for an unknown or malformed map id', async () => {
      for (const id of ['999', 'abc']) {
        const res = await api.get(`/api/v1/lead-data/leads/${id}?map_ids[]=m1`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ message: 'Not Found' });
      }
      const unknown = await api.get('/api/v1/lead-data/leads/1?map_ids[]=m1&map_ids[]=m9999');
      expect(unknown.status).toBe(422);
      expect(Object.keys(unknown.body.errors)).toEqual(['map_ids.1']);
      const malformed = await api.get('/api/v1/lead-data/leads/1?map_ids[]=lead_id');
      expect(malformed.status).toBe(422);
    });
  });

  describe('dictionary', () => {
    it('lists at least 40 attributes, m1 Lead ID and m2 Account ID first, with unique ids and columns', async () => {
      const res = await api.get('/api/v1/lead-data/dictionary');
      expect(res.status).toBe(200);
      const data = res.body.data as {
        id: string;
        category: string;
        subcategory: string;
        name: string;
        column: string;
        type: string;
      }[];
      expect(data.length).toBeGreaterThanOrEqual(40);
      expect(data[0]).toEqual({
        id: 'm1',
        category: 'Lead',
        subcategory: 'Internal Lead Data',
        name: 'Lead ID',
        column: 'lead_id',
        type: 'Number',
      });
      expect(data[1]).toMatchObject({ id: 'm2', name: 'Account ID', column: 'account_id', type: 'Number' });
      expect(new Set(data.map((a) => a.id)).size).toBe(data.length);
      expect(new Set(data.map((a) => a.column)).size).toBe(data.length);
      for (const a of data) {
        expect(a.id).toMatch(/^m\d+$/);
        expect(a.column).toMatch(/^[a-z0-9_]+$/);
        expect(['String', 'Number', 'Boolean']).toContain(a.type);
      }
      for (const column of [
        'social_security_number',
        'email',
        'home_phone',
        'zip',
        'employer_name',
        'bank_routing_number',
        'affiliate_id',
        'optional_15',
      ]) {
        expect(data.map((a) => a.column)).toContain(column);
      }
    });
  });
});
