import { describe, expect, it } from 'vitest';
import {
  DictionaryResponseSchema,
  LeadIdsPageSchema,
  LeadIdsQuerySchema,
  LeadQuerySchema,
  LeadResponseSchema,
  MAP_ID_PATTERN,
  MAX_LEAD_IDS_PER_PAGE,
} from '../../../src/schema/index.js';
import { expectIssue, expectValid } from './helpers.js';

describe('LeadIdsQuerySchema', () => {
  it('accepts every documented parameter and reads per_page from a query string', () => {
    const parsed = LeadIdsQuerySchema.parse({
      date: '2024-01-05',
      datetime: '2024-01-05T10:00:00Z',
      per_page: '3',
      cursor: 'abc',
    });
    expect(parsed.per_page).toBe(3);
    expect(LeadIdsQuerySchema.parse({}).per_page).toBeUndefined();
  });

  it('checks dates, datetimes and the per_page range', () => {
    expectIssue(LeadIdsQuerySchema, { date: '2024-02-30' }, 'date', 'not a real calendar date');
    expectIssue(LeadIdsQuerySchema, { datetime: '2024-01-05 10:00:00' }, 'datetime', 'YYYY-MM-DDTHH:mm:ssZ');
    expectValid(LeadIdsQuerySchema, { per_page: MAX_LEAD_IDS_PER_PAGE });
    expectIssue(LeadIdsQuerySchema, { per_page: String(MAX_LEAD_IDS_PER_PAGE + 1) }, 'per_page', 'from 1 to 1000');
    expectIssue(LeadIdsQuerySchema, { per_page: '0' }, 'per_page', 'from 1 to 1000');
    expectIssue(LeadIdsQuerySchema, { per_page: 'ten' }, 'per_page', 'whole number');
    expectIssue(LeadIdsQuerySchema, { page: '2' }, 'page', 'unknown field');
  });
});

describe('LeadIdsPageSchema', () => {
  const page = {
    data: [1, 2, 3],
    links: { first: null, last: null, prev: null, next: 'http://127.0.0.1/api/v1/lead-data/lead-ids?cursor=xyz' },
    meta: { path: 'http://127.0.0.1/api/v1/lead-data/lead-ids', per_page: 3, next_cursor: 'xyz', prev_cursor: null },
  };
  it('parses the cursor page', () => {
    expect(LeadIdsPageSchema.parse(page).meta.next_cursor).toBe('xyz');
  });
  it('refuses non-integer ids and missing links', () => {
    expectIssue(LeadIdsPageSchema, { ...page, data: ['1'] }, 'data[0]', 'expected number');
    expectIssue(
      LeadIdsPageSchema,
      { ...page, links: { first: null, last: null, prev: null } },
      'links.next',
      'required',
    );
  });
});

describe('map ids and leads', () => {
  it('recognises map ids', () => {
    expect(MAP_ID_PATTERN.test('m1')).toBe(true);
    expect(MAP_ID_PATTERN.test('m250')).toBe(true);
    expect(MAP_ID_PATTERN.test('M1')).toBe(false);
    expect(MAP_ID_PATTERN.test('m')).toBe(false);
    expect(MAP_ID_PATTERN.test('lead_id')).toBe(false);
  });

  it('takes one map id or many in the lead query', () => {
    expect(LeadQuerySchema.parse({ map_ids: 'm1' }).map_ids).toEqual(['m1']);
    expect(LeadQuerySchema.parse({ map_ids: ['m1', 'm2'] }).map_ids).toEqual(['m1', 'm2']);
    expectIssue(LeadQuerySchema, { map_ids: ['m1', 'x2'] }, 'map_ids[1]', 'must be a map id');
  });

  it('parses a lead with values of any JSON type', () => {
    expect(LeadResponseSchema.parse({ data: { m1: 1, m2: 10000, m3: 'Jane', m4: null, m5: true } }).data.m3).toBe(
      'Jane',
    );
    expectIssue(LeadResponseSchema, { data: [1, 2] }, 'data', 'expected record');
  });

  it('parses the dictionary', () => {
    const entry = {
      id: 'm1',
      category: 'Lead',
      subcategory: 'Internal Lead Data',
      name: 'Lead ID',
      column: 'lead_id',
      type: 'Number',
    };
    expectValid(DictionaryResponseSchema, { data: [entry] });
    const { column: _column, ...withoutColumn } = entry;
    expectIssue(DictionaryResponseSchema, { data: [withoutColumn] }, 'data[0].column', 'required');
  });
});
