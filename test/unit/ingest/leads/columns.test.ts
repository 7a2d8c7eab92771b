import { describe, expect, it } from 'vitest';
import {
  resolveColumns,
  searchDictionary,
  sensitiveKind,
  splitList,
  type DictionaryEntry,
} from '../../../../src/ingest/leads/columns.js';

const entry = (
  id: string,
  name: string,
  column: string,
  category = 'Lead',
  subcategory = 'Internal Lead Data',
): DictionaryEntry => ({
  id,
  name,
  column,
  category,
  subcategory,
  type: 'String',
});
const dictionary = [
  entry('m1', 'Lead ID', 'lead_id'),
  entry('m2', 'Account ID', 'account_id'),
  entry('m3', 'Email', 'email', 'Applicant', 'Contact'),
  entry('m4', 'Social Security Number', 'social_security_number', 'Applicant', 'Identity'),
  entry('m5', 'Phone', 'home_phone', 'Applicant', 'Contact'),
  entry('m6', 'Phone', 'cell_phone', 'Applicant', 'Contact'),
  entry('m7', 'Bank Account Number', 'bank_account_number', 'Bank', 'Account'),
];

describe('resolveColumns', () => {
  it('accepts column names, display names and map ids in any case, keeping the order given', () => {
    expect(resolveColumns(['email', 'Lead ID', 'M2', 'SOCIAL_SECURITY_NUMBER'], dictionary).map((e) => e.id)).toEqual([
      'm3',
      'm1',
      'm2',
      'm4',
    ]);
  });
  it('drops duplicates', () => {
    expect(resolveColumns(['lead_id', 'm1', 'lead id'], dictionary).map((e) => e.id)).toEqual(['m1']);
  });
  it('reports every unknown name at once, with suggestions', () => {
    expect(() => resolveColumns(['emial', 'lead', 'm99'], dictionary)).toThrow(
      /unknown column "emial".*unknown column "lead" \(did you mean lead_id\?\).*unknown column "m99"/,
    );
  });
  it('suggests the column a typo was meant to be (did you mean)', () => {
    expect(() => resolveColumns(['emial'], dictionary)).toThrow(/unknown column "emial" \(did you mean email\?\)/);
    expect(() => resolveColumns(['lead_di'], dictionary)).toThrow(/did you mean lead_id/);
    expect(() => resolveColumns(['zzzzzz'], dictionary)).toThrow(/unknown column "zzzzzz"$/);
  });
  it('refuses a display name shared by two columns, naming both', () => {
    expect(() => resolveColumns(['phone'], dictionary)).toThrow(
      /"phone" matches several columns: home_phone \(m5.*cell_phone \(m6/,
    );
  });
});

describe('splitList', () => {
  it('splits comma lists and repeated flags', () => {
    expect(splitList(['a,b', ' c ', ''])).toEqual(['a', 'b', 'c']);
    expect(splitList(undefined)).toEqual([]);
  });
});

describe('searchDictionary', () => {
  it('matches a term in any text field, case-insensitively, within a category', () => {
    expect(searchDictionary(dictionary, { search: 'PHONE' }).map((e) => e.id)).toEqual(['m5', 'm6']);
    expect(searchDictionary(dictionary, { category: 'applicant' }).map((e) => e.id)).toEqual(['m3', 'm4', 'm5', 'm6']);
    expect(searchDictionary(dictionary, { search: 'id', category: 'Lead' }).map((e) => e.id)).toEqual(['m1', 'm2']);
  });
});

describe('sensitiveKind', () => {
  it('flags SSN and bank account columns only', () => {
    expect(sensitiveKind({ column: 'social_security_number', name: '' })).toBe('ssn');
    expect(sensitiveKind({ column: 'ssn', name: '' })).toBe('ssn');
    expect(sensitiveKind({ column: 'bank_account_number', name: '' })).toBe('account');
    expect(sensitiveKind({ column: 'bank_routing_number', name: '' })).toBeUndefined();
    expect(sensitiveKind({ column: 'email', name: '' })).toBeUndefined();
  });
});
