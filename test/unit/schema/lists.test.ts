import { describe, expect, it } from 'vitest';
import {
  LIST_TYPES,
  LIST_TYPE_ALIASES,
  ListPageSchema,
  ListResponseSchema,
  ListSchema,
  ListWriteSchema,
  listWriteErrorBag,
  resolveListType,
} from '../../../src/schema/index.js';
import { expectIssue, expectValid, issuesOf, withField } from './helpers.js';

describe('list types', () => {
  it('spells the eight types as the service does', () => {
    expect(LIST_TYPES).toHaveLength(8);
    expect(LIST_TYPES).toContain('Last Four of Social Security Numbers');
    expect(LIST_TYPES).toContain('ZIP Codes');
  });

  it.each([
    ['ssn', 'Social Security Numbers'],
    ['SSN4', 'Last Four of Social Security Numbers'],
    ['zip', 'ZIP Codes'],
    ['phone', 'Telephone Numbers'],
    ['email', 'Email Addresses'],
    ['routing', 'Bank Routing Numbers'],
    ['employer', 'Employer Names'],
    ['affiliate', 'Affiliates'],
    ['Bank Routing Numbers', 'Bank Routing Numbers'],
    ['zip codes', 'ZIP Codes'],
  ])('resolves "%s" to %s', (input, type) => expect(resolveListType(input)).toBe(type));

  it('has an alias for every type and resolves nothing else', () => {
    expect(new Set(Object.values(LIST_TYPE_ALIASES))).toEqual(new Set(LIST_TYPES));
    expect(resolveListType('ssns')).toBeUndefined();
    expect(resolveListType('toString')).toBeUndefined();
    expect(resolveListType('')).toBeUndefined();
  });
});

describe('ListWriteSchema', () => {
  const body = { list: ['123456789', '234567890'], name: 'Blocked SSNs', type: 'Social Security Numbers' };

  it('accepts a valid body', () => expectValid(ListWriteSchema, body));

  it('requires all three fields', () => {
    for (const field of ['list', 'name', 'type'])
      expectIssue(ListWriteSchema, withField(body, field, undefined), field, 'required');
  });

  it('limits the name to 255 characters and refuses an empty one', () => {
    expectValid(ListWriteSchema, { ...body, name: 'n'.repeat(255) });
    expectIssue(ListWriteSchema, { ...body, name: 'n'.repeat(256) }, 'name', 'at most 255');
    expectIssue(ListWriteSchema, { ...body, name: '' }, 'name', 'must not be empty');
  });

  it('refuses an unknown type, an empty list, non-string items and unknown fields', () => {
    expectIssue(ListWriteSchema, { ...body, type: 'SSN' }, 'type', 'must be one of: Affiliates');
    expectIssue(ListWriteSchema, { ...body, list: [] }, 'list', 'at least one item');
    expectIssue(ListWriteSchema, { ...body, list: ['123456789', 5] }, 'list[1]', 'expected string');
    expectIssue(ListWriteSchema, { ...body, id: 4 }, 'id', 'unknown field');
  });

  it('validates every item for the list type and reports each bad row', () => {
    const issues = issuesOf(ListWriteSchema, {
      ...body,
      list: ['123456789', '666123456', '123-45-6789', '234567890', '123450000'],
    });
    expect(issues).toEqual([
      { path: 'list[1]', message: 'SSN area number 666 is never issued' },
      { path: 'list[2]', message: 'SSN must be exactly 9 digits with no dashes or spaces' },
      { path: 'list[4]', message: 'SSN serial number 0000 is never issued' },
    ]);
  });

  it('validates items of other types with their own rule', () => {
    expectValid(ListWriteSchema, { list: ['021000021'], name: 'banks', type: 'Bank Routing Numbers' });
    expectIssue(
      ListWriteSchema,
      { list: ['021000022'], name: 'banks', type: 'Bank Routing Numbers' },
      'list[0]',
      'routing number checksum is invalid',
    );
  });

  it('builds the 422 error bag with 1-based row messages under "list"', () => {
    const result = ListWriteSchema.safeParse({ ...body, name: '', list: ['123456789', '000123456'] });
    expect(result.success).toBe(false);
    expect(listWriteErrorBag(result.error!)).toEqual({
      name: ['must not be empty'],
      list: ['Row 2: SSN area number 000 is never issued'],
    });
  });
});

const list = {
  id: 1,
  name: 'Blocked SSNs',
  type: 'Social Security Numbers',
  deleted_at: null,
  created_at: '2026-01-05T10:00:00.000000Z',
  updated_at: '2026-01-05T10:00:00Z',
};

describe('List resource and page', () => {
  it('parses a list and keeps fields the service may add', () => {
    const parsed = ListSchema.parse({ ...list, items_count: 3 });
    expect(parsed).toMatchObject({ id: 1, items_count: 3 });
    expectValid(ListResponseSchema, { data: { ...list, deleted_at: '2026-01-06T00:00:00Z' } });
  });

  it('refuses a list resource missing its fields', () => {
    expectIssue(ListSchema, withField(list, 'deleted_at', undefined), 'deleted_at', 'required');
    expectIssue(ListSchema, { ...list, id: '1' }, 'id', 'expected number');
  });

  const page = {
    current_page: 1,
    data: [list],
    first_page_url: 'http://127.0.0.1/api/v1/lead-management/lists?page=1',
    from: 1,
    last_page: 1,
    last_page_url: 'http://127.0.0.1/api/v1/lead-management/lists?page=1',
    links: [
      { url: null, label: '&laquo; Previous', active: false },
      { url: 'http://127.0.0.1/api/v1/lead-management/lists?page=1', label: '1', active: true },
      { url: null, label: 'Next &raquo;', active: false },
    ],
    next_page_url: null,
    path: 'http://127.0.0.1/api/v1/lead-management/lists',
    per_page: 250,
    prev_page_url: null,
    to: 1,
    total: 1,
  };

  it('parses the Laravel page object, per_page as number or numeric string', () => {
    expect(ListPageSchema.parse(page).per_page).toBe(250);
    expect(ListPageSchema.parse({ ...page, per_page: '250' }).per_page).toBe(250);
    expectValid(ListPageSchema, { ...page, data: [], from: null, to: null, total: 0 });
  });

  it('refuses a page with a bad link or item', () => {
    expectIssue(ListPageSchema, { ...page, links: [{ url: null, label: '1' }] }, 'links[0].active', 'required');
    expectIssue(ListPageSchema, { ...page, data: [{ ...list, name: 5 }] }, 'data[0].name', 'expected string');
    expectIssue(ListPageSchema, withField(page, 'total', undefined), 'total', 'required');
  });
});

describe('ListIdSchema', () => {
  it('reads the path parameter as a positive whole number', async () => {
    const { ListIdSchema } = await import('../../../src/schema/index.js');
    expect(ListIdSchema.parse('12')).toBe(12);
    expect(ListIdSchema.parse(12)).toBe(12);
    for (const bad of ['0', '-1', 'abc', '1.5', 0, 2.5])
      expect(ListIdSchema.safeParse(bad).success, String(bad)).toBe(false);
  });
});
